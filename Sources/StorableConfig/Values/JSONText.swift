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
    /// Written byte by byte into one buffer, since appending to a `String` scalar by scalar cost about 500
    /// instructions per byte of a settings file.
    static func string(from value: StoredValue, pretty: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, to: &out, pretty: pretty, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// One member of a settings file as the file prints it: two spaces, the quoted key, `": "` and the value,
    /// pretty, one level in; or, for a value that ``StoredValue`` cannot hold exactly, `raw`, the member's
    /// text as it was read (see ``parseObject(_:)``).
    static func memberLine(key: String, value: StoredValue, raw: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(key.utf8.count + 24)
        append("  ", to: &out)
        writeString(key, to: &out)
        append(": ", to: &out)
        if let raw {
            append(raw, to: &out)
        } else {
            write(value, to: &out, pretty: true, indent: 1)
        }
        return out
    }

    /// A settings file's text from its members' lines (``memberLine(key:value:raw:)``) in the file's order:
    /// the same bytes as the object printed pretty, and a final newline.
    static func fileData(lines: [[UInt8]]) -> Data {
        guard !lines.isEmpty else { return Data("{}\n".utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(lines.reduce(4) { $0 + $1.count + 2 })
        out.append(UInt8(ascii: "{"))
        for (index, line) in lines.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: line)
        }
        append("\n}\n", to: &out)
        return Data(out)
    }

    private static func write(_ value: StoredValue, to out: inout [UInt8], pretty: Bool, indent: Int) {
        switch value {
        case .null: append("null", to: &out)
        case .bool(let flag): append(flag ? "true" : "false", to: &out)
        case .int(let number): append(String(number), to: &out)
        case .uint(let number): append(String(number), to: &out)
        // Non-finite numbers have no JSON form: they are written as the strings that `JSONEncoder`'s
        // `convertToString` strategy and ``StoredValueConvertible`` understand.
        case .double(let number) where number.isNaN: append("\"NaN\"", to: &out)
        case .double(let number) where number.isInfinite:
            append(number < 0 ? "\"-Infinity\"" : "\"Infinity\"", to: &out)
        // Swift prints the shortest text that reads back as the identical Double ("0.1", "1e-05").
        case .double(let number): append(number.description, to: &out)
        case .number(let text):
            // As read; text that someone made and that is not a JSON number would break the document.
            if isNumber(text) { append(text, to: &out) } else { writeString(text, to: &out) }
        case .string(let text): writeString(text, to: &out)
        case .data(let bytes): writeString(bytes.base64EncodedString(), to: &out)
        case .date(let date): writeString(ISO8601Timestamp.string(from: date), to: &out)
        case .array(let items):
            writeContainer(items.map { (nil, $0) }, brackets: ("[", "]"), to: &out, pretty: pretty, indent: indent)
        case .dictionary(let members):
            // The members sorted whole, so that no value is looked up again by its key.
            let sorted = members.sorted(by: { $0.key < $1.key }).map { ($0.key as String?, $0.value) }
            writeContainer(sorted, brackets: ("{", "}"), to: &out, pretty: pretty, indent: indent)
        }
    }

    /// Writes an array's items (keys `nil`) or an object's members between `brackets`.
    private static func writeContainer(
        _ members: [(key: String?, value: StoredValue)], brackets: (Unicode.Scalar, Unicode.Scalar),
        to out: inout [UInt8], pretty: Bool, indent: Int
    ) {
        out.append(UInt8(ascii: brackets.0))
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            newline(&out, pretty: pretty, indent: indent + 1)
            if let key = member.key {
                writeString(key, to: &out)
                append(pretty ? ": " : ":", to: &out)
            }
            write(member.value, to: &out, pretty: pretty, indent: indent + 1)
        }
        if !members.isEmpty { newline(&out, pretty: pretty, indent: indent) }
        out.append(UInt8(ascii: brackets.1))
    }

    private static func append(_ text: String, to out: inout [UInt8]) {
        out.append(contentsOf: text.utf8)
    }

    private static func newline(_ out: inout [UInt8], pretty: Bool, indent: Int) {
        guard pretty else { return }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// Writes `text` quoted, escaping `"`, `\` and the control characters (UTF-8 sequences never contain a byte
    /// below 0x80, so they are copied as they are). Most strings need no escape, and are copied whole.
    private static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out.append(contentsOf: text.utf8)
        } else {
            for byte in text.utf8 {
                switch byte {
                case 0x22: append("\\\"", to: &out)
                case 0x5C: append("\\\\", to: &out)
                case 0x0A: append("\\n", to: &out)
                case 0x0D: append("\\r", to: &out)
                case 0x09: append("\\t", to: &out)
                case 0x08: append("\\b", to: &out)
                case 0x0C: append("\\f", to: &out)
                case ..<0x20:
                    let hex = String(byte, radix: 16)
                    append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex, to: &out)
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: Parsing
}
