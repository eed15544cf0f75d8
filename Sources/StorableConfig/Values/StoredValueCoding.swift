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
        if let nativeType = Value.self as? any StoredValueConvertible.Type {
            return nativeStoredValue(of: value, as: nativeType)
        }
        return try encodeCodable(value)
    }

    /// Returns the stored form of `value` through ``StoredValueEncoder``, for types without a native form.
    static func encodeCodable<Value: Encodable>(_ value: Value) throws -> StoredValue {
        do {
            return try StoredValueEncoder().encode(value)
        } catch let error as EncodingError {
            throw Failure(description: describe(error))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// Returns the value that `stored` holds through ``StoredValueDecoder``, for types without a native form.
    static func decodeCodable<Value: Decodable>(_ type: Value.Type, from stored: StoredValue) throws -> Value {
        do {
            return try StoredValueDecoder().decode(Value.self, from: stored)
        } catch let error as DecodingError {
            throw Failure(description: describe(error))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    private static func nativeStoredValue<Native: StoredValueConvertible>(of value: Any, as type: Native.Type)
        -> StoredValue
    {
        (value as! Native).storedValue
    }

    private static func describe(_ error: EncodingError) -> String {
        switch error {
        case .invalidValue(_, let context): sentence(context.debugDescription, path: context.codingPath)
        @unknown default: "\(error)"
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            sentence(context.debugDescription, path: context.codingPath)
        case .keyNotFound(let key, let context):
            sentence("No value for key '\(key.stringValue)'", path: context.codingPath)
        @unknown default: "\(error)"
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
