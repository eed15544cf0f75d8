/// Everything a setting needs to know about its value type, worked out once per type: how to encode and
/// decode it, how to compare two values, whether a value is `nil`.
///
/// The dynamic casts that answer those questions (is it a native property-list type? `Equatable`? an
/// `Optional`?) cost more than the rest of a write, so they run once, here, and the answers are closures
/// specialised for the type.
///
/// The closures are pure functions of their arguments and capture only metatypes, so sharing them between
/// threads is safe; they are not declared `@Sendable` because metatypes opened from an existential are not.
@usableFromInline
final class ValueTraits<Value: Codable & Sendable>: @unchecked Sendable {
    @usableFromInline let encode: (Value) throws -> StoredValue
    let decode: (StoredValue) throws -> Value
    /// `==`, for `Equatable` types.
    @usableFromInline let isEqual: ((Value, Value) -> Bool)?
    /// For `Optional` types.
    @usableFromInline let isNil: ((Value) -> Bool)?
    let typeName: String

    private init() {
        typeName = StoredValueCoding.typeName(Value.self)
        if let native = Value.self as? any StoredValueConvertible.Type {
            (encode, decode) = Self.nativeCoding(native)
        } else {
            encode = { try StoredValueCoding.encodeCodable($0) }
            decode = { try StoredValueCoding.decodeCodable(Value.self, from: $0) }
        }
        if let equatable = Value.self as? any Equatable.Type {
            isEqual = Self.equality(equatable)
        } else {
            isEqual = nil
        }
        if let optional = Value.self as? any OptionalValue.Type {
            isNil = Self.nilTest(optional)
        } else {
            isNil = nil
        }
    }

    /// The traits of `Value`, made on first use.
    static var shared: ValueTraits<Value> {
        let key = ObjectIdentifier(Value.self)
        if let cached = valueTraitsCache.withLock({ $0[key] }) {
            return unsafeDowncast(cached, to: ValueTraits<Value>.self)
        }
        let made = ValueTraits<Value>()
        let shared = valueTraitsCache.withLock { cache in
            if let raced = cache[key] { return raced }
            cache[key] = made
            return made
        }
        return unsafeDowncast(shared, to: ValueTraits<Value>.self)
    }

    // `Native`, `Comparable` and `Wrapped` below are `Value` itself, opened from an existential once; the bit
    // casts between them are between identical types.

    private static func nativeCoding<Native: StoredValueConvertible>(_ type: Native.Type) -> (
        (Value) throws -> StoredValue, (StoredValue) throws -> Value
    ) {
        let encode: (Value) throws -> StoredValue = { unsafeBitCast($0, to: Native.self).storedValue }
        let decode: (StoredValue) throws -> Value = { stored in
            guard let value = Native(storedValue: stored) else {
                throw StoredValueCoding.Failure(description: Native.rejection(of: stored))
            }
            return unsafeBitCast(value, to: Value.self)
        }
        return (encode, decode)
    }

    private static func equality<Comparable: Equatable>(_ type: Comparable.Type) -> (Value, Value) -> Bool {
        { unsafeBitCast($0, to: Comparable.self) == unsafeBitCast($1, to: Comparable.self) }
    }

    private static func nilTest<Wrapped: OptionalValue>(_ type: Wrapped.Type) -> (Value) -> Bool {
        { unsafeBitCast($0, to: Wrapped.self).isNil }
    }
}

private let valueTraitsCache = Locked<[ObjectIdentifier: AnyObject]>([:])
