import Foundation

/// Converts any `Codable` value to and from its ``StoredValue``.
///
/// Types with a native stored form (``StoredValueConvertible``) convert directly. Every other `Codable`
/// type (a struct, a class, an enum) goes through ``StoredValueEncoder`` and becomes a tree of stored values
/// in one pass, so a struct is a readable JSON object in the file store and a dictionary in UserDefaults.
/// Dates inside such types are ISO 8601 text with full precision, data is base64, and non-finite numbers are
/// the strings "Infinity", "-Infinity" and "NaN".
///
/// Settings convert through ``ValueTraits``, which makes these choices once per type; this is for values
/// whose type is only known at run time, and for the coder path that both share.
enum StoredValueCoding {
    /// A value that could not be converted, with a sentence saying why.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Returns the stored form of `value`.
    /// - Throws: ``Failure`` if the value's `Encodable` conformance throws.
    static func encode<Value: Encodable>(_ value: Value) throws -> StoredValue {
        if let native = Value.self as? any StoredValueConvertible.Type { return native.storedValue(of: value) }
        return try encodeCodable(value)
    }

    /// Returns the stored form of `value` through ``StoredValueEncoder``, for types without a native form.
    static func encodeCodable<Value: Encodable>(_ value: Value) throws -> StoredValue {
        try failingInSentences { try StoredValueEncoder().encode(value) }
    }

    /// Returns the value that `stored` holds through ``StoredValueDecoder``, for types without a native form.
    static func decodeCodable<Value: Decodable>(_ type: Value.Type, from stored: StoredValue) throws -> Value {
        try failingInSentences { try StoredValueDecoder().decode(Value.self, from: stored) }
    }

    /// Runs `body`, turning what it throws into a ``Failure`` that says what went wrong and where.
    private static func failingInSentences<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch EncodingError.invalidValue(_, let context) {
            throw Failure(description: sentence(context.debugDescription, path: context.codingPath))
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context)
        {
            throw Failure(description: sentence(context.debugDescription, path: context.codingPath))
        } catch DecodingError.keyNotFound(let key, let context) {
            throw Failure(description: sentence("No value for key '\(key.stringValue)'", path: context.codingPath))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// `text` and where in the value it happened; a path of a deeply nested value is cut to its first steps.
    private static func sentence(_ text: String, path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return text }
        let shown = 8
        var location = path.prefix(shown).map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            .joined(separator: ".")
        if path.count > shown { location += "… (\(path.count) steps)" }
        return "\(StorableConfigError.clause(text)) (at \(location))"
    }
}

extension StoredValue {
    /// Creates the stored form of `value`, as a setting of its type that has no native form stores it: a
    /// `String`- or `Int`-backed enum as its raw value, a structure as a dictionary, dates as ISO 8601 text.
    ///
    /// ```swift
    /// try StoredValue(encoding: Theme.dark)   // .string("dark")
    /// ```
    /// - Throws: An error that says what could not be encoded, and where in the value.
    public init(encoding value: some Encodable) throws {
        self = try StoredValueCoding.encodeCodable(value)
    }
}
