import Foundation

/// Reads and writes JSON text as ``StoredValue`` trees.
///
/// Written by hand rather than with `JSONSerialization` so that integers stay integers (`Int64.min` and
/// `UInt64.max` included, which `JSONSerialization` on Linux turns into decimals), doubles print in their
/// shortest exact form, keys come out sorted, and slashes in URLs are not escaped.
enum JSONText {
    /// A JSON document that does not parse.
    struct SyntaxError: Error, CustomStringConvertible {
        var message: String
        var offset: Int
        var description: String { "\(message) at byte \(offset)" }
    }

    // MARK: Writing

    /// Returns `value` as JSON text; `pretty` indents by two spaces, one member per line.
    ///
    /// `rawMembers` gives, for members of a top-level object, JSON text to write instead of the value: the
    /// text as it was read, for values that ``StoredValue`` cannot hold exactly (see ``parseObject(_:)``).
    static func string(from value: StoredValue, pretty: Bool, rawMembers: [String: String] = [:]) -> String {
        var out = ""
        write(value, to: &out, pretty: pretty, indent: 0, rawMembers: rawMembers)
        return out
    }

    /// Returns `value` as UTF-8 JSON text.
    static func data(from value: StoredValue, pretty: Bool) -> Data {
        Data(string(from: value, pretty: pretty).utf8)
    }

    private static func write(
        _ value: StoredValue, to out: inout String, pretty: Bool, indent: Int, rawMembers: [String: String] = [:]
    ) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .int(let number): out += String(number)
        case .uint(let number): out += String(number)
        case .double(let number): writeDouble(number, to: &out)
        case .string(let text): writeString(text, to: &out)
        case .data(let bytes): writeString(bytes.base64EncodedString(), to: &out)
        case .date(let date): writeString(ISO8601Timestamp.string(from: date), to: &out)
        case .array(let items):
            guard !items.isEmpty else {
                out += "[]"
                return
            }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                newline(&out, pretty: pretty, indent: indent + 1)
                write(item, to: &out, pretty: pretty, indent: indent + 1)
            }
            newline(&out, pretty: pretty, indent: indent)
            out += "]"
        case .dictionary(let members):
            guard !members.isEmpty else {
                out += "{}"
                return
            }
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                newline(&out, pretty: pretty, indent: indent + 1)
                writeString(key, to: &out)
                out += pretty ? ": " : ":"
                if let raw = rawMembers[key] {
                    out += raw
                } else {
                    write(members[key]!, to: &out, pretty: pretty, indent: indent + 1)
                }
            }
            newline(&out, pretty: pretty, indent: indent)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, pretty: Bool, indent: Int) {
        guard pretty else { return }
        out += "\n"
        out += String(repeating: "  ", count: indent)
    }

    /// Non-finite numbers have no JSON form; they are written as the strings that `JSONEncoder`'s
    /// `convertToString` strategy and ``StoredValueConvertible`` understand.
    static func writeDouble(_ number: Double, to out: inout String) {
        if number.isNaN {
            out += "\"NaN\""
        } else if number.isInfinite {
            out += number < 0 ? "\"-Infinity\"" : "\"Infinity\""
        } else {
            // Swift prints the shortest text that reads back as the identical Double ("0.1", "1e-05").
            out += number.description
        }
    }

    private static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    // MARK: Parsing
}
