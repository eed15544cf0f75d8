import Foundation

/// Encodes any `Encodable` value straight into a ``StoredValue`` tree, in one pass.
///
/// It writes exactly the tree that `JSONEncoder` text read back by ``JSONText`` used to give, so values stored
/// by earlier versions read back the same (fixtures in the tests prove it): a struct is a dictionary, a
/// `Date` is ISO 8601 text with full precision, `Data` is base64 text, a `URL` its absolute string, a
/// `Decimal` its number, an integral `Double` below 10¹⁶ an integer, and non-finite numbers the strings
/// "Infinity", "-Infinity" and "NaN". A `nil` that a type encodes with `encodeIfPresent` leaves its key out.
///
/// A value that nests more than ``StoredValue/maximumDepth`` arrays and dictionaries is refused with an
/// `EncodingError`: the encoder stops at that depth, before the stack runs out, and the JSON reader reads
/// every value that it writes. (It also stops, with the same error, if the thread's stack runs short first.)
///
/// Shaped for the cost of a write: a container writes its members straight into the stored dictionary or
/// array of its encoder (one object per level, no intermediate tree), strings, numbers, Booleans and arrays
/// of them are stored without an encoder of their own, and coding paths are made only when asked for.
struct StoredValueEncoder {
    /// Returns the stored form of `value`.
    /// - Throws: `EncodingError` if the value's `encode(to:)` throws or encodes nothing, or if the value nests
    ///   more than ``StoredValue/maximumDepth`` arrays and dictionaries.
    func encode<Value: Encodable>(_ value: Value) throws -> StoredValue {
        guard let stored = try EncodingNode.encode(value, at: CodingPath.root) else {
            throw EncodingNode.invalid(value, at: [], "Top-level \(Value.self) did not encode any values.")
        }
        // The recursion stops a level beyond the limit; containers nested inside one `encode(to:)` are counted
        // here.
        if stored.nests(deeperThan: StoredValue.maximumDepth) {
            throw EncodingNode.tooDeep(value, at: [])
        }
        return stored
    }
}

/// A coding path, made into an array only when someone asks for it (errors, a few custom encoders).
private struct CodingPath {
    let parent: [any CodingKey]
    let last: (any CodingKey)?

    static var root: CodingPath { CodingPath(parent: [], last: nil) }

    var keys: [any CodingKey] { last.map { parent + [$0] } ?? parent }

    /// How many arrays and dictionaries hold the value at this path.
    var depth: Int { parent.count + (last == nil ? 0 : 1) }

    func appending(_ key: any CodingKey) -> CodingPath { CodingPath(parent: keys, last: key) }
}

private enum EncodingNode {
    /// The stored form of `value`: the types that `JSONEncoder` special-cases directly, strings, numbers,
    /// Booleans and arrays of them without an encoder (what their `encode(to:)` would give), anything else
    /// through its `encode(to:)`. `nil` if it encoded nothing.
    static func encode<Value: Encodable>(_ value: Value, at path: @autoclosure () -> CodingPath) throws
        -> StoredValue?
    {
        // The types that encode to one stored form without an encoder.
        switch value {
        case let string as String: return .string(string)
        case let int as Int: return .int(Int64(int))
        case let bool as Bool: return .bool(bool)
        case let number as Double: return double(number)
        case let strings as [String]: return .array(strings.map { .string($0) })
        case let ints as [Int]: return .array(ints.map { .int(Int64($0)) })
        case let date as Date: return .string(ISO8601Timestamp.string(from: date))
        case let data as Data: return .string(data.base64EncodedString())
        case let url as URL: return .string(url.absoluteString)
        case let number as Decimal: return decimal(number)
        default: break
        }
        let path = path()
        // Every nested value that a type encodes with its own code comes through here: the one place to stop
        // a recursive value before the stack runs out.
        if path.depth >= StackDepthGuard.checkedDepth {
            if path.depth > StoredValue.maximumDepth { throw tooDeep(value, at: path.keys) }
            if StackDepthGuard.isStackLow {
                throw invalid(value, at: path.keys, StackDepthGuard.stackLowMessage(depth: path.depth))
            }
        }
        let encoder = NodeEncoder(path: path)
        try value.encode(to: encoder)
        return encoder.storedValue
    }

    /// The error for a value that nests more than ``StoredValue/maximumDepth`` arrays and dictionaries.
    static func tooDeep(_ value: Any, at path: [any CodingKey]) -> EncodingError {
        invalid(
            value, at: path,
            "The value nests more than \(StoredValue.maximumDepth) arrays and dictionaries, more than a store can "
                + "read back")
    }

    /// An `EncodingError.invalidValue` for `value` at `path`, saying `description`.
    static func invalid(_ value: Any, at path: [any CodingKey], _ description: String) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(codingPath: path, debugDescription: description))
    }

    /// The stored form of a value nested in a container: a value that encodes nothing is an empty object
    /// there, as in JSONEncoder.
    static func nested<Value: Encodable>(_ value: Value, at path: @autoclosure () -> CodingPath) throws
        -> StoredValue
    {
        try encode(value, at: path()) ?? .dictionary([:])
    }

    /// A `Decimal` as a number when a `Double` holds it exactly (what JSONEncoder wrote), else as its text, so
    /// that no digit is lost: a `Double` keeps 17 significant digits, a `Decimal` up to 38.
    static func decimal(_ decimal: Decimal) -> StoredValue {
        let text = decimal.description
        let number = JSONText.number(fromText: text)
        guard case .double(let double) = number, Decimal(string: double.description) != decimal else { return number }
        return .string(text)
    }

    static func double(_ number: Double) -> StoredValue {
        if number.isNaN { return .string("NaN") }
        if number.isInfinite { return .string(number < 0 ? "-Infinity" : "Infinity") }
        // JSON text has no "1.0": JSONEncoder wrote "1", which reads back as an integer.
        if number.rounded(.towardZero) == number, abs(number) < 1e16 { return .int(Int64(number)) }
        return .double(number)
    }

    static func float(_ number: Float) -> StoredValue {
        guard number.isFinite else { return double(Double(number)) }
        // The shortest text of the Float, as JSONEncoder wrote it ("2", not "2.0"): 0.1 stays 0.1, not
        // 0.10000000149011612.
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return JSONText.number(fromText: text)
    }
}

/// Room for a small struct's members.
private let emptyMembers = [String: StoredValue](minimumCapacity: 4)

/// An encoder and the value it builds: nothing yet, a single value, or a keyed or unkeyed container's members,
/// written in place. Containers nested in it (`nestedContainer`, `superEncoder`) are encoders of their own,
/// whose values are collected when this one's is.
private final class NodeEncoder: Encoder {
    enum Kind { case empty, single, keyed, unkeyed }

    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    // One thread, and every access a short one: the dynamic exclusivity checks would only cost.
    var kind = Kind.empty
    var single = StoredValue.null
    var members: [String: StoredValue] = [:]
    var elements: [StoredValue] = []
    /// Nested encoders, by key (keyed) or by index (unkeyed), in the order they were made.
    var nested: [(key: String, index: Int, encoder: NodeEncoder)] = []

    init(path: CodingPath) {
        self.path = path
    }

    var storedValue: StoredValue? {
        switch kind {
        case .empty: return nil
        case .single: return single
        case .keyed:
            var result = members
            for entry in nested { result[entry.key] = entry.encoder.storedValue ?? .dictionary([:]) }
            return .dictionary(result)
        case .unkeyed:
            var result = elements
            for entry in nested { result[entry.index] = entry.encoder.storedValue ?? .dictionary([:]) }
            return .array(result)
        }
    }

    /// Makes this encoder a keyed or unkeyed container, keeping what an earlier container of that kind wrote.
    func become(_ newKind: Kind) {
        guard kind != newKind else { return }
        kind = newKind
        nested = []
        // Copied on the first member, at its capacity, without the unspecialised `init(minimumCapacity:)`.
        if newKind == .keyed { members = emptyMembers } else { elements = [] }
    }

    /// Sets a member; a later member with the same key wins, as in JSONEncoder.
    func set(_ value: StoredValue, forKey key: String) {
        if !nested.isEmpty { nested.removeAll { $0.key == key } }
        members[key] = value
    }

    /// Returns a nested encoder whose value becomes the member `key` (a later member with the key wins).
    func nestedEncoder(forKey key: any CodingKey, kind: Kind) -> NodeEncoder {
        let encoder = NodeEncoder(path: path.appending(key))
        members[key.stringValue] = nil
        nested.removeAll { $0.key == key.stringValue }
        nested.append((key.stringValue, 0, encoder))
        encoder.become(kind)
        return encoder
    }

    /// Returns a nested encoder whose value becomes the next element.
    func nestedElementEncoder(kind: Kind) -> NodeEncoder {
        let encoder = NodeEncoder(path: path.appending(StoredValueCodingKey(intValue: elements.count)))
        nested.append(("", elements.count, encoder))
        elements.append(.null)
        encoder.become(kind)
        return encoder
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        become(.keyed)
        return KeyedEncodingContainer(KeyedContainer(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        become(.unkeyed)
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: StoredValue, _ key: Key) { encoder.set(value, forKey: key.stringValue) }

    mutating func encodeNil(forKey key: Key) { set(.null, key) }
    mutating func encode(_ value: Double, forKey key: Key) { set(EncodingNode.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) { set(EncodingNode.float(value), key) }
    /// Bool, String and the integer widths: their native stored form.
    mutating func encode<Native: StoredValueConvertible & Encodable>(_ value: Native, forKey key: Key) {
        set(value.storedValue, key)
    }
    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        let stored = try EncodingNode.nested(value, at: encoder.path.appending(key))
        set(stored, key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder.nestedEncoder(forKey: key, kind: .keyed)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: encoder.nestedEncoder(forKey: key, kind: .unkeyed))
    }

    mutating func superEncoder() -> any Encoder {
        encoder.nestedEncoder(forKey: StoredValueCodingKey(stringValue: "super"), kind: .empty)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.nestedEncoder(forKey: key, kind: .empty)
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.elements.count }

    private func append(_ value: StoredValue) { encoder.elements.append(value) }

    mutating func encodeNil() { append(.null) }
    mutating func encode(_ value: Double) { append(EncodingNode.double(value)) }
    mutating func encode(_ value: Float) { append(EncodingNode.float(value)) }
    /// Bool, String and the integer widths: their native stored form.
    mutating func encode<Native: StoredValueConvertible & Encodable>(_ value: Native) {
        append(value.storedValue)
    }
    mutating func encode<Value: Encodable>(_ value: Value) throws {
        let index = encoder.elements.count
        let stored = try EncodingNode.nested(value, at: encoder.path.appending(StoredValueCodingKey(intValue: index)))
        append(stored)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder.nestedElementEncoder(kind: .keyed)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: encoder.nestedElementEncoder(kind: .unkeyed))
    }

    mutating func superEncoder() -> any Encoder {
        encoder.nestedElementEncoder(kind: .empty)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: StoredValue) {
        encoder.kind = .single
        encoder.single = value
    }

    mutating func encodeNil() { set(.null) }
    mutating func encode(_ value: Double) { set(EncodingNode.double(value)) }
    mutating func encode(_ value: Float) { set(EncodingNode.float(value)) }
    /// Bool, String and the integer widths: their native stored form.
    mutating func encode<Native: StoredValueConvertible & Encodable>(_ value: Native) {
        set(value.storedValue)
    }
    mutating func encode<Value: Encodable>(_ value: Value) throws {
        set(try EncodingNode.nested(value, at: encoder.path))
    }
}

/// A coding key made of a string or an index; an index's text is made only when asked for.
struct StoredValueCodingKey: CodingKey {
    private let text: String?
    let intValue: Int?

    var stringValue: String { text ?? intValue.map(String.init) ?? "" }

    init(stringValue: String) {
        text = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        text = nil
        self.intValue = intValue
    }
}
