import Foundation

@testable import StorableConfig

/// The check of the `json-text` fuzz target (Fuzz/Targets/JSONTextTarget.swift), also run by `swift test` over its
/// seed corpus and every input that ever failed it: the settings file's parser against the bytes of any file.
///
/// - The parser and ``JSONText/parseObject(_:)`` never crash, and agree with each other.
/// - Foundation's `JSONSerialization` accepts the same documents, but for the differences of Docs/Fuzzing.md;
///   where both accept, they read the same strings, keys, structure and numbers.
/// - What the parser reads, the printer writes, compact and pretty, as text that reads back identical (strings
///   compared by their bytes, numbers by their bits) and prints the same bytes again.
enum JSONTextFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let ours = Result { try JSONText.parse(input) }
        let foundation = Result { try JSONSerialization.jsonObject(with: input, options: [.fragmentsAllowed]) }
        if let problem = objectParserDisagreement(input, parsed: ours) { return problem }
        switch (ours, foundation) {
        case (.success(let value), .success(let object)):
            if let difference = difference(value, object, at: "$") {
                return "JSONText and JSONSerialization read different values: \(difference)"
            }
        case (.success(let value), .failure(let error)):
            // Accepted: a number beyond Double's range, which JSONText keeps as its text (StoredValue.number) and
            // JSONSerialization refuses ("not representable in Swift").
            if !value.hasNonFiniteNumber && !value.hasNumberKeptAsText {
                return "JSONText accepts what JSONSerialization refuses (\(error))"
            }
        case (.failure(let error), .success):
            // Accepted: JSONText's depth limit counts scalars too; JSONSerialization also reads UTF-16 and UTF-32,
            // and a comma before a closing bracket.
            let depthLimit = "\(error)".contains("nested more than")
            let trailingComma = (try? JSONText.parse(removingTrailingCommas(input))) != nil
            if !depthLimit && !looksLikeUTF16OrUTF32(input) && !trailingComma {
                return "JSONText refuses what JSONSerialization accepts (\(error))"
            }
        case (.failure, .failure):
            break
        }
        guard case .success(let value) = ours, !value.hasNonFiniteNumber else { return nil }
        for pretty in [false, true] {
            let text = JSONText.string(from: value, pretty: pretty)
            let again: StoredValue
            do {
                again = try JSONText.parse(Data(text.utf8))
            } catch {
                return "the printed text (pretty: \(pretty)) does not parse: \(error)"
            }
            if let difference = FuzzSupport.difference(value, again) {
                return "the printed text (pretty: \(pretty)) reads back different: \(difference)"
            }
            if JSONText.string(from: again, pretty: pretty) != text {
                return "printing what the printed text reads gives other text (pretty: \(pretty))"
            }
            if !value.hasNumberKeptAsText,
                (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) == nil
            {
                return "JSONSerialization refuses the printed text (pretty: \(pretty))"
            }
        }
        return nil
    }

    /// `parseObject` takes the documents whose top level is an object that `parse` takes, and reads the same.
    private static func objectParserDisagreement(_ input: Data, parsed: Result<StoredValue, any Error>) -> String? {
        let object = Result { try JSONText.parseObject(input) }
        switch (parsed, object) {
        case (.success(.dictionary(let members)), .success(let read)):
            if let difference = FuzzSupport.difference(.dictionary(members), .dictionary(read.members)) {
                return "parse and parseObject read different members: \(difference)"
            }
            for (key, raw) in read.rawMembers {
                guard let member = members[key] else { return "parseObject kept raw text of a missing member" }
                guard let rawValue = try? JSONText.parse(Data(raw.utf8)) else {
                    return "the raw text parseObject kept for \(key.debugDescription) does not parse"
                }
                if let difference = FuzzSupport.difference(member, rawValue) {
                    return "the raw text parseObject kept for \(key.debugDescription) is another value: \(difference)"
                }
            }
        case (.success(.dictionary), .failure(let error)):
            return "parseObject refuses an object that parse accepts: \(error)"
        case (_, .success):
            return "parseObject accepts what is not an object, or what parse refuses"
        default:
            break
        }
        return nil
    }

    /// Whether JSONSerialization would read `input` as UTF-16 or UTF-32: it guesses the encoding from a byte
    /// order mark or NUL bytes among the first four bytes.
    private static func looksLikeUTF16OrUTF32(_ input: Data) -> Bool {
        let head = Array(input.prefix(4))
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) { return true }
        return head.contains(0)
    }

    /// `input` without the commas that stand, but for whitespace, right before a `]` or `}` outside strings.
    private static func removingTrailingCommas(_ input: Data) -> Data {
        var output: [UInt8] = []
        var pendingComma: [UInt8]? = nil
        var inString = false
        var escaped = false
        for byte in input {
            if inString {
                output.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            if var comma = pendingComma {
                if [0x20, 0x09, 0x0A, 0x0D].contains(byte) {
                    comma.append(byte)
                    pendingComma = comma
                    continue
                }
                // The comma stays unless a closing bracket follows it; the whitespace after it stays either way.
                output += byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") ? comma.dropFirst() : comma[...]
                pendingComma = nil
            }
            switch byte {
            case UInt8(ascii: ","): pendingComma = [byte]
            case UInt8(ascii: "\""):
                inString = true
                output.append(byte)
            default: output.append(byte)
            }
        }
        output += pendingComma ?? []
        return Data(output)
    }

    /// Where a value and JSONSerialization's reading of the same text differ; `nil` if they agree.
    private static func difference(_ value: StoredValue, _ object: Any, at path: String) -> String? {
        switch value {
        case .null:
            return object is NSNull ? nil : "\(path): null ≠ \(object)"
        case .bool(let flag):
            guard let number = object as? NSNumber, String(cString: number.objCType) == "c" else {
                return "\(path): \(flag) ≠ \(object)"
            }
            return number.boolValue == flag ? nil : "\(path): \(flag) ≠ \(number)"
        case .int, .uint, .double:
            guard let number = object as? NSNumber, String(cString: number.objCType) != "c" else {
                return "\(path): \(value) ≠ \(object)"
            }
            // JSONSerialization reads integers beyond 64 bits, Int64.min and numbers of many digits as Decimal,
            // whose conversion to Double is not exact.
            let decimal = (number as? NSDecimalNumber)?.decimalValue
            let agrees: Bool
            switch value {
            case .int(let integer): agrees = decimal.map { $0 == Decimal(integer) } ?? (number.int64Value == integer)
            case .uint(let integer): agrees = decimal.map { $0 == Decimal(integer) } ?? (number.uint64Value == integer)
            case .double(let double):
                let theirs = number.doubleValue
                agrees = decimal == nil ? theirs == double : abs(theirs - double) <= abs(double) * 1e-12
            default: agrees = true
            }
            return agrees ? nil : "\(path): \(value) ≠ \(number)"
        case .number:
            // A number that StoredValue holds as its text (beyond a Double's range or digits): JSONSerialization
            // reads it as some number, a Double or a Decimal, which is all that can be compared.
            guard let number = object as? NSNumber, String(cString: number.objCType) != "c" else {
                return "\(path): \(value) ≠ \(object)"
            }
            return nil
        case .string(let text):
            // Accepted: JSONSerialization drops a U+FEFF (a byte order mark) that follows an escape in a string.
            guard let string = object as? String, withoutByteOrderMarks(string) == withoutByteOrderMarks(text) else {
                return "\(path): \(text.debugDescription) ≠ \(object)"
            }
            return nil
        case .array(let items):
            guard let array = object as? [Any], array.count == items.count else {
                return "\(path): \(items.count) items ≠ \(object)"
            }
            for index in items.indices {
                if let found = difference(items[index], array[index], at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .dictionary(let members):
            guard let dictionary = object as? [String: Any] else {
                return "\(path): \(members.count) members ≠ \(object)"
            }
            // Accepted: JSONSerialization drops a U+FEFF at the start of a member name, as it does in strings, but
            // keeps one inside it, so "\u{FEFF}a", "a" and "a\u{FEFF}b", "ab" may be fewer members there than here:
            // names are compared without U+FEFF, and each of its values under a name must be one of ours.
            let theirs = Dictionary(grouping: dictionary, by: { plainName($0.key) })
            let ours = Dictionary(grouping: members, by: { plainName($0.key) })
            guard Set(theirs.keys) == Set(ours.keys) else {
                return "\(path): \(members.count) members ≠ \(object)"
            }
            for (name, group) in theirs {
                let candidates = ours[name]!
                for (key, other) in group {
                    let differences = candidates.map {
                        difference($0.value, other, at: "\(path)[\($0.key.debugDescription)]")
                    }
                    if !differences.contains(where: { $0 == nil }) {
                        return differences.first { $0 != nil } ?? "\(path)[\(key.debugDescription)]: no value of ours"
                    }
                }
            }
            return nil
        case .data, .date:
            return "\(path): the parser made \(value.kindDescription)"
        }
    }

    /// `text` without its U+FEFF scalars, compared scalar by scalar (not by canonical equivalence).
    private static func withoutByteOrderMarks(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { $0 != "\u{FEFF}" }
    }

    /// A member name without its U+FEFF scalars.
    private static func plainName(_ name: String) -> String {
        String(String.UnicodeScalarView(withoutByteOrderMarks(name)))
    }
}
