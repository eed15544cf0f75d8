import Foundation

/// How stored values map to property-list values, the only ones `UserDefaults` keeps.
extension UserDefaultsStore {
    static func propertyListValue(from value: StoredValue) -> Any {
        switch value {
        case .null: return nullMarker
        case .bool(let flag): return flag
        case .int(let number): return Int(exactly: number) ?? number
        case .uint(let number): return number
        case .double(let number): return number
        // A property list has no number that holds it exactly: its text, which a Decimal setting reads.
        case .number(let text), .string(let text): return text
        case .data(let bytes): return bytes
        case .date(let date):
            #if canImport(Darwin)
                return date
            #else
                return ISO8601Timestamp.string(from: date)
            #endif
        case .array(let items): return items.map(propertyListValue(from:))
        case .dictionary(let members): return members.mapValues(propertyListValue(from:))
        }
    }

    static func storedValue(from object: Any) -> StoredValue? {
        #if canImport(Darwin)
            if let number = object as? NSNumber, !(object is String) {
                if CFGetTypeID(number) == CFBooleanGetTypeID() { return .bool(number.boolValue) }
                switch String(cString: number.objCType) {
                case "f", "d": return .double(number.doubleValue)
                case "Q": return .integer(number.uint64Value)
                default: return .int(number.int64Value)
                }
            }
        #endif
        switch object {
        // On Linux a stored integer is not a Bool and a stored Bool is not an integer, so order is safe.
        case let flag as Bool: return .bool(flag)
        case let number as any BinaryInteger: return Int64(exactly: number).map { .int($0) } ?? .integer(UInt64(number))
        case let number as Double: return .double(number)
        case let number as Float: return .double(Double(number))
        case let text as String: return text == nullMarker ? .null : .string(text)
        case let bytes as Data: return .data(bytes)
        case let date as Date: return .date(date)
        case let url as URL: return .string(url.absoluteString)
        case let items as [Any]:
            return .array(items.map { item in unwrapOptional(item).flatMap(storedValue(from:)) ?? .null })
        case let members as [String: Any]:
            return .dictionary(members.compactMapValues { unwrapOptional($0).flatMap(storedValue(from:)) })
        default: return nil
        }
    }

    /// Corelibs Foundation returns nested values as `Optional<Any>` boxed in `Any`.
    private static func unwrapOptional(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map { unwrapOptional($0.value) } ?? nil
    }
}
