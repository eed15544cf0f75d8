import Foundation
import StorableConfig

/// The JSON Schema (draft 2020-12) members that describe one setting's stored form.
enum JSONSchemaMembers {
    /// The setting's type, default, range, the values of a `CaseIterable` enum, and `writeOnly` for a secret. A
    /// nested Codable value is described loosely, and a record collection as a dictionary of records by id.
    static func of(_ setting: any AnySetting) -> [String: StoredValue] {
        if setting.holdsRecords {
            return ["type": .string("object"), "additionalProperties": .dictionary(["type": .string("object")])]
        }
        var schema = schema(of: setting.valueType)
        if !setting.isSecret, let stored = setting.defaultStoredValue {
            schema["default"] = stored
        }
        // JSON Schema's minimum and maximum are numbers: a range of text or dates is checked, not described.
        if let bounds = setting.allowedRange, bounds.minimum.isNumber, bounds.maximum.isNumber {
            schema["minimum"] = bounds.minimum
            schema["maximum"] = bounds.maximum
        }
        if setting.isSecret { schema["writeOnly"] = .bool(true) }
        return schema
    }

    private static func schema(of type: Any.Type) -> [String: StoredValue] {
        if let optional = type as? any OptionalType.Type {
            var wrapped = schema(of: optional.wrappedType)
            // An explicit "no value" is stored as null.
            if case .string(let name)? = wrapped["type"] {
                wrapped["type"] = .array([.string(name), .string("null")])
            } else if case .array(let values)? = wrapped["enum"] {
                wrapped["enum"] = .array(values + [.null])
            }
            return wrapped
        }
        switch type {
        case is Bool.Type: return ["type": .string("boolean")]
        case is any FixedWidthInteger.Type: return ["type": .string("integer")]
        case is any BinaryFloatingPoint.Type: return ["type": .string("number")]
        // Stored as text when a Double cannot hold it exactly.
        case is Decimal.Type: return ["type": .array([.string("number"), .string("string")])]
        case is String.Type: return ["type": .string("string")]
        case is Date.Type: return ["type": .string("string"), "format": .string("date-time")]
        case is URL.Type: return ["type": .string("string"), "format": .string("uri")]
        case is Data.Type: return ["type": .string("string"), "contentEncoding": .string("base64")]
        default: break
        }
        if let cases = type as? any CaseIterable.Type, let values = caseValues(of: cases), !values.isEmpty {
            return ["enum": .array(values)]
        }
        if type is any Sequence.Type, !(type is any ExpressibleByDictionaryLiteral.Type) {
            return ["type": .string("array")]
        }
        return ["type": .string("object")]
    }

    /// The stored forms of a `String`- or `Int`-backed enum's cases, or `nil` for another enum.
    static func caseValues<Cases: CaseIterable>(of type: Cases.Type) -> [StoredValue]? {
        let values = type.allCases.compactMap { value -> StoredValue? in
            guard let encodable = value as? any Encodable else { return nil }
            return try? StoredValue(encoding: encodable)
        }
        guard values.count == type.allCases.count else { return nil }
        for value in values {
            switch value {
            case .string, .int, .uint: continue
            default: return nil
            }
        }
        return values
    }
}

/// An `Optional` type, whose wrapped type a schema describes.
protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}

extension StoredValue {
    fileprivate var isNumber: Bool {
        switch self {
        case .int, .uint, .double, .number: true
        default: false
        }
    }
}
