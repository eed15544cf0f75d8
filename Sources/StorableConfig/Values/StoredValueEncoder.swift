import Foundation

/// Encodes any `Encodable` value straight into a ``StoredValue`` tree, in one pass.
///
/// It writes exactly the tree that `JSONEncoder` text read back by ``JSONText`` used to give, so values stored
/// by earlier versions read back the same (fixtures in the tests prove it): a struct is a dictionary, a
/// `Date` is ISO 8601 text with full precision, `Data` is base64 text, a `URL` its absolute string, a
/// `Decimal` its number, an integral `Double` below 10¹⁶ an integer, and non-finite numbers the strings
/// "Infinity", "-Infinity" and "NaN". A `nil` that a type encodes with `encodeIfPresent` leaves its key out.
struct StoredValueEncoder {
    /// Returns the stored form of `value`.
    /// - Throws: `EncodingError` if the value's `encode(to:)` throws or encodes nothing.
    func encode<Value: Encodable>(_ value: Value) throws -> StoredValue {
        guard let node = try EncodingNode.encode(value, codingPath: []) else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [], debugDescription: "Top-level \(Value.self) did not encode any values."))
        }
        return node.storedValue
    }
}

/// A value being encoded: a finished leaf, or a container that nested encoders still write into.
private enum EncodingNode {
    case value(StoredValue)
    case dictionary(DictionaryBox)
    case array(ArrayBox)

    /// Members in the order they were encoded; made into a dictionary once, at the end, with its final
    /// capacity (a later member with the same key wins, as in JSONEncoder).
    final class DictionaryBox {
        var members: [(key: String, node: EncodingNode)] = []

        init() {
            members.reserveCapacity(8)
        }

        func set(_ node: EncodingNode, forKey key: String) {
            members.append((key, node))
        }
    }

    final class ArrayBox {
        var elements: [EncodingNode] = []
    }

    var storedValue: StoredValue {
        switch self {
        case .value(let value): value
        case .dictionary(let box):
            .dictionary(
                box.members.reduce(into: [String: StoredValue](minimumCapacity: box.members.count)) { result, member in
                    result[member.key] = member.node.storedValue
                })
        case .array(let box): .array(box.elements.map(\.storedValue))
        }
    }

    /// The node of `value`: the types that `JSONEncoder` special-cases directly, anything else through its
    /// `encode(to:)`. `nil` if it encoded nothing.
    static func encode<Value: Encodable>(_ value: Value, codingPath: [any CodingKey]) throws -> EncodingNode? {
        // Compared by metadata, which costs a few instructions, rather than cast (hundreds each).
        let type = ObjectIdentifier(Value.self)
        if type == ObjectIdentifier(Date.self) {
            return .value(.string(ISO8601Timestamp.string(from: unsafeBitCast(value, to: Date.self))))
        }
        if type == ObjectIdentifier(Data.self) {
            return .value(.string(unsafeBitCast(value, to: Data.self).base64EncodedString()))
        }
        if type == ObjectIdentifier(URL.self) {
            return .value(.string(unsafeBitCast(value, to: URL.self).absoluteString))
        }
        if type == ObjectIdentifier(Decimal.self) {
            return .value(EncodingNode.decimal(unsafeBitCast(value, to: Decimal.self)))
        }
        let encoder = NodeEncoder(codingPath: codingPath)
        try value.encode(to: encoder)
        return encoder.node
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

private final class NodeEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: EncodingNode?

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: EncodingNode.DictionaryBox
        if case .dictionary(let existing)? = node {
            box = existing
        } else {
            box = EncodingNode.DictionaryBox()
            node = .dictionary(box)
        }
        return KeyedEncodingContainer(KeyedContainer(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: EncodingNode.ArrayBox
        if case .array(let existing)? = node {
            box = existing
        } else {
            box = EncodingNode.ArrayBox()
            node = .array(box)
        }
        return UnkeyedContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

/// Turns what a container is handed into a node; shared by the three containers.
private protocol NodeWriting {
    var codingPath: [any CodingKey] { get }
}

extension NodeWriting {
    func node<Value: Encodable>(_ value: Value, at key: (any CodingKey)?) throws -> EncodingNode {
        let path = key.map { codingPath + [$0] } ?? codingPath
        // A value that encodes nothing nested inside another is an empty object, as in JSONEncoder.
        return try EncodingNode.encode(value, codingPath: path) ?? .dictionary(EncodingNode.DictionaryBox())
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, NodeWriting {
    let box: EncodingNode.DictionaryBox
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) { box.set(.value(.null), forKey: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) { box.set(.value(.bool(value)), forKey: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) { box.set(.value(.string(value)), forKey: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) {
        box.set(.value(EncodingNode.double(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Float, forKey key: Key) {
        box.set(.value(EncodingNode.float(value)), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) { box.set(.value(.int(Int64(value))), forKey: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) {
        box.set(.value(.int(Int64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int16, forKey key: Key) {
        box.set(.value(.int(Int64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int32, forKey key: Key) {
        box.set(.value(.int(Int64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int64, forKey key: Key) { box.set(.value(.int(value)), forKey: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) {
        box.set(.value(.integer(UInt64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) {
        box.set(.value(.int(Int64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) {
        box.set(.value(.int(Int64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) {
        box.set(.value(.int(Int64(value))), forKey: key.stringValue)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) { box.set(.value(.integer(value)), forKey: key.stringValue) }
    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        box.set(try node(value, at: key), forKey: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodingNode.DictionaryBox()
        box.set(.dictionary(nested), forKey: key.stringValue)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodingNode.ArrayBox()
        box.set(.array(nested), forKey: key.stringValue)
        return UnkeyedContainer(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: StoredValueCodingKey(stringValue: "super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        SuperEncoder(codingPath: codingPath + [key]) { [box] node in box.set(node, forKey: key.stringValue) }
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer, NodeWriting {
    let box: EncodingNode.ArrayBox
    let codingPath: [any CodingKey]
    var count: Int { box.elements.count }

    private var nextKey: any CodingKey { StoredValueCodingKey(intValue: box.elements.count) }

    mutating func encodeNil() { box.elements.append(.value(.null)) }
    mutating func encode(_ value: Bool) { box.elements.append(.value(.bool(value))) }
    mutating func encode(_ value: String) { box.elements.append(.value(.string(value))) }
    mutating func encode(_ value: Double) { box.elements.append(.value(EncodingNode.double(value))) }
    mutating func encode(_ value: Float) { box.elements.append(.value(EncodingNode.float(value))) }
    mutating func encode(_ value: Int) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: Int8) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: Int16) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: Int32) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: Int64) { box.elements.append(.value(.int(value))) }
    mutating func encode(_ value: UInt) { box.elements.append(.value(.integer(UInt64(value)))) }
    mutating func encode(_ value: UInt8) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: UInt16) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: UInt32) { box.elements.append(.value(.int(Int64(value)))) }
    mutating func encode(_ value: UInt64) { box.elements.append(.value(.integer(value))) }
    mutating func encode<Value: Encodable>(_ value: Value) throws {
        box.elements.append(try node(value, at: nextKey))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey
        let nested = EncodingNode.DictionaryBox()
        box.elements.append(.dictionary(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey
        let nested = EncodingNode.ArrayBox()
        box.elements.append(.array(nested))
        return UnkeyedContainer(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let index = box.elements.count
        box.elements.append(.value(.null))
        return SuperEncoder(codingPath: codingPath + [StoredValueCodingKey(intValue: index)]) { [box] node in
            box.elements[index] = node
        }
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: StoredValue) { encoder.node = .value(value) }

    mutating func encodeNil() { set(.null) }
    mutating func encode(_ value: Bool) { set(.bool(value)) }
    mutating func encode(_ value: String) { set(.string(value)) }
    mutating func encode(_ value: Double) { set(EncodingNode.double(value)) }
    mutating func encode(_ value: Float) { set(EncodingNode.float(value)) }
    mutating func encode(_ value: Int) { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { set(.int(value)) }
    mutating func encode(_ value: UInt) { set(.integer(UInt64(value))) }
    mutating func encode(_ value: UInt8) { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) { set(.integer(value)) }
    mutating func encode<Value: Encodable>(_ value: Value) throws {
        encoder.node =
            try EncodingNode.encode(value, codingPath: codingPath) ?? .dictionary(EncodingNode.DictionaryBox())
    }
}

/// The encoder a class hands its superclass: what it writes lands where it was asked for when it is done.
private final class SuperEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private let inner: NodeEncoder
    private let store: (EncodingNode) -> Void

    init(codingPath: [any CodingKey], store: @escaping (EncodingNode) -> Void) {
        self.codingPath = codingPath
        inner = NodeEncoder(codingPath: codingPath)
        self.store = store
    }

    deinit {
        store(inner.node ?? .dictionary(EncodingNode.DictionaryBox()))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        inner.container(keyedBy: type)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { inner.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { inner.singleValueContainer() }
}

/// A coding key made of a string or an index.
struct StoredValueCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}
