/// Everything a setting needs to know about its value type, worked out once per type: how to encode and
/// decode it, how to compare two values, whether a value is `nil`.
///
/// The dynamic casts that answer those questions (is it a native property-list type? `Equatable`? an
/// `Optional`?) cost more than the rest of a write, so they run once, here, and the answers are closures
/// specialised for the type.
///
/// The closures are pure functions of their arguments and capture only metatypes, so sharing them between
/// threads is safe; they are not declared `@Sendable` because metatypes opened from an existential are not.
final class ValueTraits<Value: Codable & Sendable>: @unchecked Sendable {
    let encode: (Value) throws -> StoredValue
    let decode: (StoredValue) throws -> Value
    /// `==`, for `Equatable` types.
    let isEqual: ((Value, Value) -> Bool)?
    /// For `Optional` types.
    let isNil: ((Value) -> Bool)?
    /// The type's name, for messages: worked out when asked, since `String(describing:)` of a type searches the
    /// process's conformances the first time: about 3 % of the first config of a class.
    var typeName: String { TypeName.of(Value.self) }
    /// Whether the type has a native stored form (``StoredValueConvertible``); else it is coded through
    /// ``StoredValueEncoder`` and ``StoredValueDecoder``, and may change from version to version
    /// (``ValueEvolution``).
    let isNative: Bool

    private init() {
        if let native = Value.self as? any StoredValueConvertible.Type {
            isNative = true
            (encode, decode) = Self.nativeCoding(native)
        } else {
            isNative = false
            encode = { try StoredValueCoding.encodeCodable($0) }
            decode = { try StoredValueCoding.decodeCodable(Value.self, from: $0) }
        }
        isEqual = (Value.self as? any Equatable.Type).map { Self.equality($0) }
        isNil = (Value.self as? any OptionalValue.Type).map { Self.nilTest($0) }
    }

    /// The traits of `Value`, made on first use.
    static var shared: ValueTraits<Value> {
        let key = ObjectIdentifier(Value.self)
        if let cached = valueTraitsCache.withLock({ $0[key] }) as? ValueTraits<Value> {
            return cached
        }
        let made = ValueTraits<Value>()
        let shared = valueTraitsCache.withLock { cache in
            if let raced = cache[key] { return raced }
            cache[key] = made
            return made
        }
        // The cache is keyed by `Value`'s identity, so what it holds for it is a `ValueTraits<Value>`.
        return shared as? ValueTraits<Value> ?? made
    }

    // `Native`, `Comparable` and `Wrapped` below are `Value` itself, opened from an existential once. Each
    // function is made for that type and cast once to the same function of `Value`, a cast between identical
    // types that never fails: a call then casts no value (a cast of the value itself was about a tenth of an
    // in-memory assignment).

    private static func nativeCoding<Native: StoredValueConvertible>(_ type: Native.Type) -> (
        (Value) throws -> StoredValue, (StoredValue) throws -> Value
    ) {
        let encode: (Native) throws -> StoredValue = { $0.storedValue }
        let decode: (StoredValue) throws -> Native = { stored in
            guard let value = Native(storedValue: stored) else {
                throw StoredValueCoding.Failure(description: Native.rejection(of: stored))
            }
            return value
        }
        return (encode as Any as! (Value) throws -> StoredValue, decode as Any as! (StoredValue) throws -> Value)
    }

    private static func equality<Comparable: Equatable>(_ type: Comparable.Type) -> (Value, Value) -> Bool {
        let isEqual: (Comparable, Comparable) -> Bool = (==)
        return isEqual as Any as! (Value, Value) -> Bool
    }

    private static func nilTest<Wrapped: OptionalValue>(_ type: Wrapped.Type) -> (Value) -> Bool {
        let isNil: (Wrapped) -> Bool = { $0.isNil }
        return isNil as Any as! (Value) -> Bool
    }
}

private let valueTraitsCache = Locked<[ObjectIdentifier: AnyObject]>([:])
