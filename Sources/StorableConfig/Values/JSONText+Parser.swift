import Foundation

/// Reading JSON text into stored values, exactly.
extension JSONText {
    /// Parses one JSON document.
    ///
    /// Integers without a fraction or exponent become ``StoredValue/int(_:)`` (or ``StoredValue/uint(_:)``
    /// above `Int64.max`); other numbers become ``StoredValue/double(_:)``, and a number that none of these
    /// holds exactly ``StoredValue/number(_:)``, its text. A repeated object key keeps its last value.
    /// - Throws: ``SyntaxError`` with the byte offset of the problem, also for text nested more than
    ///   ``maximumDepth`` arrays and objects deep.
    static func parse(_ data: Data) throws -> StoredValue {
        var parser = Parser(bytes: [UInt8](data))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        try parser.expectEnd()
        return value
    }

    /// Parses a document whose top level must be an object, and returns with it the original text of each
    /// member whose value holds a number that ``StoredValue`` holds only as its text (``StoredValue/number(_:)``:
    /// an integer beyond 64 bits, more decimal digits than a `Double` keeps, a value beyond its range) or an
    /// object with two spellings of one key (see below), so that a writer can put that text back untouched, as
    /// it was laid out.
    ///
    /// A top-level key spelled with other bytes than an earlier, canonically equivalent one ("é" precomposed,
    /// then as "e" and a combining accent), which `String` equality and so `members` take for the same key, is
    /// returned in `respelledMembers`, in the order of the text; `members` keeps the earlier one.
    /// - Throws: ``SyntaxError`` if the text is not JSON or its top level is not an object.
    static func parseObject(_ data: Data) throws -> (
        members: [String: StoredValue], rawMembers: [String: String], respelledMembers: [RespelledMember]
    ) {
        var parser = Parser(bytes: [UInt8](data))
        parser.skipWhitespace()
        guard parser.next == UInt8(ascii: "{") else { throw parser.error("The top level is not a JSON object") }
        parser.recordsLossyMembers = true
        guard case .dictionary(let members) = try parser.parseValue(depth: 0) else {
            throw parser.error("The top level is not a JSON object")
        }
        try parser.expectEnd()
        return (members, parser.lossyMembers, parser.respelledMembers)
    }

    /// Whether `text` is a number in JSON's grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func isNumber(_ text: String) -> Bool {
        var parser = Parser(bytes: Array(text.utf8))
        // The parser skips a leading byte order mark, which is not part of a number: a position past 0 says so.
        guard parser.position == 0, (try? parser.parseNumber()) != nil else { return false }
        return parser.position == parser.bytes.count
    }

    /// A member of a settings file whose key is canonically equivalent to an earlier member's key but spelled
    /// with other bytes: see ``parseObject(_:)``.
    struct RespelledMember {
        var key: String
        var value: StoredValue
        /// The member's text as read, for a value that ``StoredValue`` cannot hold exactly.
        var raw: String?
    }

    /// The most arrays and objects that JSON text may nest: a stored value's ``StoredValue/maximumDepth``,
    /// and room for the documents that hold stored values (a settings file wraps each in one object, a
    /// ``ConfigDocument`` in four), so that every value the encoder writes reads back.
    static let maximumDepth = StoredValue.maximumDepth + 8

    /// The stored form of a number written as JSON text by this program (the shortest text of a `Float` or a
    /// `Decimal`): an integer without a fraction or exponent is ``StoredValue/int(_:)`` (or
    /// ``StoredValue/uint(_:)`` above `Int64.max`), anything else ``StoredValue/double(_:)``.
    static func number(fromText text: String) -> StoredValue {
        if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") })
        {
            if let number = Int64(text) { return .int(number) }
            if let number = UInt64(text) { return .uint(number) }
        }
        return .double(Double(text) ?? .nan)
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0
        /// Set when a number did not convert exactly.
        var sawLossyNumber = false
        var recordsLossyMembers = false
        var lossyMembers: [String: String] = [:]
        var respelledMembers: [RespelledMember] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark is allowed before the document.
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        }

        func error(_ message: String) -> SyntaxError {
            SyntaxError(message: message, offset: position)
        }

        /// The byte at `position`, or `nil` at the end of the text.
        var next: UInt8? { position < bytes.count ? bytes[position] : nil }

        /// Moves past `byte` if it is next.
        mutating func take(_ byte: Unicode.Scalar) -> Bool {
            guard next == UInt8(ascii: byte) else { return false }
            position += 1
            return true
        }

        /// Moves past one or more digits.
        mutating func takeDigits() throws {
            guard let byte = next, JSONNumber.isDigit(byte) else { throw error("Invalid number") }
            while let byte = next, JSONNumber.isDigit(byte) { position += 1 }
        }

        mutating func expectEnd() throws {
            skipWhitespace()
            guard position == bytes.count else { throw error("Unexpected text after the JSON value") }
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        /// Parses the value at `position`, inside `depth` arrays and objects.
        mutating func parseValue(depth: Int) throws -> StoredValue {
            guard position < bytes.count else { throw error("Unexpected end of the JSON text") }
            switch bytes[position] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth)
            case UInt8(ascii: "["): return try parseArray(depth: depth)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw error("Unexpected character '\(Character(UnicodeScalar(bytes[position])))'")
            }
        }

        mutating func expectLiteral(_ literal: String) throws {
            let end = position + literal.utf8.count
            guard end <= bytes.count else { throw error("Unexpected end of the JSON text") }
            guard bytes[position..<end].elementsEqual(literal.utf8) else {
                throw error("Invalid literal, expected '\(literal)'")
            }
            position = end
        }

        /// Refuses an array or object inside `depth` others if that nests more than the limit.
        func checkDepth(_ depth: Int) throws {
            guard depth < JSONText.maximumDepth else {
                throw error("JSON nested more than \(JSONText.maximumDepth) arrays and objects deep")
            }
        }

        mutating func parseObject(depth: Int) throws -> StoredValue {
            try checkDepth(depth)
            position += 1
            var members: [String: StoredValue] = [:]
            skipWhitespace()
            if take("}") { return .dictionary(members) }
            while true {
                skipWhitespace()
                guard next == UInt8(ascii: "\"") else { throw error("Expected a string key in an object") }
                let key = try parseString()
                skipWhitespace()
                guard take(":") else { throw error("Expected ':' after an object key") }
                skipWhitespace()
                let valueStart = position
                if depth == 0 { sawLossyNumber = false }
                let value = try parseValue(depth: depth + 1)
                if recordsLossyMembers {
                    keepMember(key, value, in: &members, depth: depth, text: valueStart..<position)
                } else {
                    members[key] = value
                }
                skipWhitespace()
                guard next != nil else { throw error("Unexpected end of the JSON text in an object") }
                if take("}") { return .dictionary(members) }
                guard take(",") else { throw error("Expected ',' or '}' in an object") }
            }
        }

        /// Adds a member of an object in a settings file to `members`, noting what a dictionary keyed by
        /// `String` loses: the text of a top-level member whose numbers are lossy, and a key spelled with other
        /// bytes than an earlier, canonically equivalent key.
        mutating func keepMember(
            _ key: String, _ value: StoredValue, in members: inout [String: StoredValue], depth: Int, text: Range<Int>
        ) {
            if let earlier = members.updateValue(value, forKey: key), let index = members.index(forKey: key),
                !members.keys[index].utf8.elementsEqual(key.utf8)
            {
                guard depth == 0 else {
                    // Inside a value: the top-level member is written back as the text that was read.
                    sawLossyNumber = true
                    return
                }
                members.values[index] = earlier
                let raw =
                    sawLossyNumber ? String(decoding: bytes[text], as: UTF8.self) : nil
                respelledMembers.append(RespelledMember(key: key, value: value, raw: raw))
                return
            }
            guard depth == 0 else { return }
            lossyMembers[key] =
                sawLossyNumber ? String(decoding: bytes[text], as: UTF8.self) : nil
        }

        mutating func parseArray(depth: Int) throws -> StoredValue {
            try checkDepth(depth)
            position += 1
            var items: [StoredValue] = []
            skipWhitespace()
            if take("]") { return .array(items) }
            while true {
                skipWhitespace()
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard next != nil else { throw error("Unexpected end of the JSON text in an array") }
                if take("]") { return .array(items) }
                guard take(",") else { throw error("Expected ',' or ']' in an array") }
            }
        }

        mutating func parseString() throws -> String {
            position += 1
            var utf8: [UInt8] = []
            while true {
                guard position < bytes.count else { throw error("Unterminated string") }
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard let text = String(validating: utf8, as: UTF8.self) else {
                        throw error("A string is not valid UTF-8")
                    }
                    return text
                case UInt8(ascii: "\\"):
                    position += 1
                    guard position < bytes.count else { throw error("Unterminated escape") }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""): utf8.append(0x22)
                    case UInt8(ascii: "\\"): utf8.append(0x5C)
                    case UInt8(ascii: "/"): utf8.append(0x2F)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        let scalar = try parseUnicodeEscape()
                        utf8.append(contentsOf: String(Character(scalar)).utf8)
                    default: throw error("Invalid escape '\\\(Character(UnicodeScalar(escape)))'")
                    }
                case 0x00..<0x20:
                    throw error("Unescaped control character in a string")
                default:
                    utf8.append(byte)
                    position += 1
                }
            }
        }

        mutating func parseHex4() throws -> UInt32 {
            guard position + 4 <= bytes.count else { throw error("Truncated \\u escape") }
            let digits = bytes[position..<position + 4]
            // `UInt32(_:radix:)` alone would take a sign.
            guard digits.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                let value = UInt32(String(decoding: digits, as: UTF8.self), radix: 16)
            else { throw error("Invalid hex digit in a \\u escape") }
            position += 4
            return value
        }

        mutating func parseUnicodeEscape() throws -> Unicode.Scalar {
            let first = try parseHex4()
            if (0xD800..<0xDC00).contains(first) {
                guard position + 2 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("Unpaired surrogate in a \\u escape") }
                position += 2
                let second = try parseHex4()
                guard (0xDC00..<0xE000).contains(second) else { throw error("Unpaired surrogate in a \\u escape") }
                let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(combined) else { throw error("Invalid \\u escape") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else { throw error("Unpaired surrogate in a \\u escape") }
            return scalar
        }

        mutating func parseNumber() throws -> StoredValue {
            let start = position
            _ = take("-")
            if take("0") {
                if let byte = next, JSONNumber.isDigit(byte) { throw error("Leading zero in a number") }
            } else {
                try takeDigits()
            }
            if take(".") { try takeDigits() }
            if take("e") || take("E") {
                _ = take("+") || take("-")
                try takeDigits()
            }
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            let number = JSONText.number(fromText: text)
            // A Double whose shortest text is the same number holds it exactly; any other number keeps its text.
            guard case .double(let double) = number else { return number }
            guard double.isFinite, let form = JSONNumber.decimalForm(of: text),
                JSONNumber.decimalForm(of: double.description) == form
            else {
                sawLossyNumber = true
                return .number(text)
            }
            return number
        }
    }
}
