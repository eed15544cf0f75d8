import Foundation

/// Decodes any `Decodable` value straight from a ``StoredValue`` tree, in one pass.
///
/// It accepts what ``StoredValueEncoder`` writes and what `JSONDecoder` accepted from the same tree as JSON
/// text, so that nothing stored by earlier versions is lost: numbers convert between integer and
/// floating-point forms when the value is exact (`1.0` reads as the `Int` 1, `2.5` does not), a `Date` is ISO
/// 8601 text, seconds since 2001 or a stored date, `Data` base64 text or stored data, and "Infinity",
/// "-Infinity" and "NaN" read as `Double`s and `Float`s. A number kept as its text (``StoredValue/number(_:)``)
/// reads as an integer or a `Decimal` digit for digit, and as a `Double` or `Float` only within its range.
///
/// A value nested deeper than ``StoredValue/maximumDepth``, or so deep that the thread's stack runs short,
/// is a `DecodingError`, not a crash.
struct StoredValueDecoder {
    /// Returns the value of type `Value` that `stored` holds.
    /// - Throws: `DecodingError` naming the coding path where the tree does not fit the type.
    func decode<Value: Decodable>(_ type: Value.Type, from stored: StoredValue) throws -> Value {
        try NodeDecoder(value: stored, codingPath: []).decodeValue(Value.self)
    }
}

/// What a decoding by ``ValueEvolution`` notes as it goes: the members the types asked for, and the fields it
/// read from a fill because the stored ones did not decode. Only that slower path has one; a plain decoding
/// notes nothing.
final class DecodingNotes {
    /// The places (member names from the top) of every member a type asked for, present or not. (A dictionary
    /// asks for every member it holds; reading `allKeys` alone asks for none.)
    var asked: Set<[String]> = []
    /// The fields filled because the stored ones did not decode, in the order found.
    var fallbacks: [ValueEvolution.FieldFallback] = []
}

struct NodeDecoder: Decoder {
    let value: StoredValue
    let codingPath: [any CodingKey]
    /// Set on ``ValueEvolution``'s path only.
    var notes: DecodingNotes?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let members) = value else {
            throw mismatch([String: StoredValue].self, "a dictionary")
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath, notes: notes))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([StoredValue].self, "an array") }
        return UnkeyedContainer(elements: elements, codingPath: codingPath, notes: notes)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        let found = value == .null ? "null" : value.kindDescription
        let context = DecodingError.Context(
            codingPath: codingPath, debugDescription: "Expected \(expected) but found \(found) instead.")
        return value == .null ? .valueNotFound(type, context) : .typeMismatch(type, context)
    }

    func corrupted(_ description: String) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: description))
    }

    // MARK: Values

    func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
        // Every nested value that a type decodes with its own code comes through here: the one place to stop
        // before the stack runs out.
        if codingPath.count >= StackDepthGuard.checkedDepth {
            if codingPath.count > StoredValue.maximumDepth {
                throw corrupted("The value nests more than \(StoredValue.maximumDepth) arrays and dictionaries.")
            }
            if StackDepthGuard.isStackLow {
                throw corrupted(StackDepthGuard.stackLowMessage(depth: codingPath.count))
            }
        }
        // The types whose stored form is not what their own `init(from:)` reads.
        switch type {
        case is Date.Type: if let date = try decodeDate() as? Value { return date }
        case is Data.Type: if let data = try decodeData() as? Value { return data }
        case is URL.Type: if let url = try decodeURL() as? Value { return url }
        case is Decimal.Type: if let number = try decodeDecimal() as? Value { return number }
        default: break
        }
        if let notes, let fillable = Value.self as? any FillsNewFields.Type {
            // An element of an array, a dictionary's entry, a record: its own fill gives what it lacks.
            if let filled = ValueEvolution.decode(Value.self, from: self, filling: fillable.encodedFill, notes: notes) {
                return filled
            }
        }
        return try Value(from: self)
    }

    func decodeBool() throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(Bool.self, "a Boolean") }
        return bool
    }

    func decodeString() throws -> String {
        switch value {
        case .string(let string): return string
        // What JSON text of these stored forms read as, for trees from stores that hold dates and data.
        case .date(let date): return ISO8601Timestamp.string(from: date)
        case .data(let data): return data.base64EncodedString()
        default: throw mismatch(String.self, "a string")
        }
    }

    func decodeInteger<Integer: StoredInteger>(_ type: Integer.Type) throws -> Integer {
        if let result = Integer(storedValue: value) { return result }
        switch value {
        case .int, .uint, .double, .number: throw corrupted("The number \(value) does not fit in \(type).")
        default: throw mismatch(type, "a number")
        }
    }

    func decodeDouble() throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        case .uint(let number): return Double(number)
        case .number(let text):
            guard let number = JSONNumber.double(text) else {
                throw corrupted("The number \(text) does not fit in Double.")
            }
            return number
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string("NaN"): return .nan
        default: throw mismatch(Double.self, "a number")
        }
    }

    func decodeFloat() throws -> Float {
        let number = try decodeDouble()
        let float = Float(number)
        // Too large, or so small that it would read as zero.
        guard float.isFinite || !number.isFinite, float != 0 || number == 0 else {
            throw corrupted("The number \(value) does not fit in Float.")
        }
        return float
    }

    private func decodeDate() throws -> Date {
        if let date = Date(storedValue: value) { return date }
        switch value {
        case .string(let text):
            throw corrupted(ISO8601Timestamp.problem(with: text) ?? "\"\(text)\" is not an ISO 8601 date")
        case .int, .uint, .double, .number:
            // JSONEncoder's default form: seconds since 2001-01-01.
            return Date(timeIntervalSinceReferenceDate: try decodeDouble())
        default: throw mismatch(Date.self, "an ISO 8601 date")
        }
    }

    private func decodeData() throws -> Data {
        if let data = Data(storedValue: value) { return data }
        guard case .string = value else { throw mismatch(Data.self, "base64 text") }
        throw corrupted("The text is not valid base64.")
    }

    private func decodeURL() throws -> URL {
        let text = try decodeString()
        guard let url = URL(string: text) else { throw corrupted("Invalid URL string.") }
        return url
    }

    private func decodeDecimal() throws -> Decimal {
        switch value {
        case .int(let number): return Decimal(number)
        case .uint(let number): return Decimal(number)
        case .double(let number):
            // As JSONDecoder read the number's text: the shortest text of the Double.
            guard number.isFinite, let decimal = Decimal(string: number.description) else {
                throw corrupted("The number \(value) is not a valid Decimal.")
            }
            return decimal
        case .number(let text):
            // Digit for digit, as JSONDecoder reads a Decimal from JSON text.
            guard let decimal = JSONNumber.decimal(text) else {
                throw corrupted(
                    "The number \(text) does not fit in Decimal (at most 38 significant digits, exponents -128 to 127)."
                )
            }
            return decimal
        case .string(let text):
            // More digits than a Double keeps, stored as text.
            guard let decimal = Decimal(string: text), decimal.description == text else {
                throw corrupted("\"\(text)\" is not a decimal number.")
            }
            return decimal
        default: throw mismatch(Decimal.self, "a number")
        }
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: StoredValue]
    let codingPath: [any CodingKey]
    let notes: DecodingNotes?

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool {
        note(key)
        return members[key.stringValue] != nil
    }

    private func note(_ key: some CodingKey) {
        notes?.asked.insert(codingPath.map(\.stringValue) + [key.stringValue])
    }

    private func decoder(for key: Key) throws -> NodeDecoder {
        note(key)
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key '\(key.stringValue)'."))
        }
        return NodeDecoder(value: value, codingPath: codingPath + [key], notes: notes)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder(for: key).value == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(for: key).decodeBool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(for: key).decodeString() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(for: key).decodeDouble() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(for: key).decodeFloat() }
    func decode<Integer: StoredInteger & Decodable>(_ type: Integer.Type, forKey key: Key) throws -> Integer {
        try decoder(for: key).decodeInteger(type)
    }
    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try decoder(for: key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { superDecoder(at: StoredValueCodingKey(stringValue: "super")) }

    func superDecoder(forKey key: Key) throws -> any Decoder { superDecoder(at: key) }

    private func superDecoder(at key: some CodingKey) -> NodeDecoder {
        note(key)
        return NodeDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key], notes: notes)
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [StoredValue]
    let codingPath: [any CodingKey]
    let notes: DecodingNotes?
    var currentIndex = 0

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next(_ type: Any.Type) throws -> NodeDecoder {
        let key = StoredValueCodingKey(intValue: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(codingPath: codingPath + [key], debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return NodeDecoder(value: elements[currentIndex], codingPath: codingPath + [key], notes: notes)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decodeBool() }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).decodeString() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decodeDouble() }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decodeFloat() }
    mutating func decode<Integer: StoredInteger & Decodable>(_ type: Integer.Type) throws -> Integer {
        try next(type).decodeInteger(type)
    }
    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try next(type).decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next(type).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([StoredValue].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(StoredValue.self) }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: NodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool() }
    func decode(_ type: String.Type) throws -> String { try decoder.decodeString() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.decodeDouble() }
    func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloat() }
    func decode<Integer: StoredInteger & Decodable>(_ type: Integer.Type) throws -> Integer {
        try decoder.decodeInteger(type)
    }
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decoder.decodeValue(type) }
}
