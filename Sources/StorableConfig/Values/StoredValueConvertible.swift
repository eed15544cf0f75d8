import Foundation

/// A type with a native stored form: property-list types, `URL`, and arrays, string-keyed dictionaries
/// and optionals of these.
///
/// Conversions back from a ``StoredValue`` accept every form that the stores produce for the type and
/// nothing lossy: an `Int8` setting rejects 300, a `Bool` setting rejects the string "yes".
protocol StoredValueConvertible {
    /// Creates a value from its stored form, or returns `nil` if `storedValue` does not hold one exactly.
    init?(storedValue: StoredValue)
    /// The stored form of the value.
    var storedValue: StoredValue { get }
    /// Why ``init(storedValue:)`` returned `nil` for `storedValue`, as a phrase for messages ("it is a string").
    static func rejection(of storedValue: StoredValue) -> String
}

extension StoredValueConvertible {
    static func rejection(of storedValue: StoredValue) -> String {
        "it is \(storedValue.kindDescription)"
    }

    /// The stored form of `value`, which is a `Self`: for a type known only as a metatype.
    static func storedValue(of value: Any) -> StoredValue {
        (value as! Self).storedValue
    }
}

extension Bool: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        guard case .bool(let flag) = storedValue else { return nil }
        self = flag
    }

    var storedValue: StoredValue { .bool(self) }
}

extension String: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        guard case .string(let text) = storedValue else { return nil }
        self = text
    }

    var storedValue: StoredValue { .string(self) }
}

/// All integer widths share one conversion: exact or nothing.
protocol StoredInteger: FixedWidthInteger, StoredValueConvertible {}

extension StoredInteger {
    init?(storedValue: StoredValue) {
        switch storedValue {
        case .int(let number): self.init(exactly: number)
        case .uint(let number): self.init(exactly: number)
        // A hand-edited "3.0" is still the integer 3; 3.5 is not an integer.
        case .double(let number): self.init(exactly: number)
        // Read digit for digit: "9007199254740993.0" is that integer, not the Double nearest to it.
        case .number(let text):
            guard let number = JSONNumber.integer(text, as: Self.self) else { return nil }
            self = number
        default: return nil
        }
    }

    static func rejection(of storedValue: StoredValue) -> String {
        let isWhole: Bool
        switch storedValue {
        case .int, .uint: isWhole = true
        case .double(let number): isWhole = number.isFinite && number.rounded(.towardZero) == number
        case .number(let text): isWhole = (JSONNumber.decimalForm(of: text)?.exponent ?? -1) >= 0
        default: return "it is \(storedValue.kindDescription)"
        }
        guard isWhole else { return "the number \(storedValue) is not a whole number" }
        return JSONNumber.doesNotFit(storedValue.description, in: TypeName.of(Self.self))
    }

    var storedValue: StoredValue { .integer(self) }
}

extension Int: StoredInteger {}
extension Int8: StoredInteger {}
extension Int16: StoredInteger {}
extension Int32: StoredInteger {}
extension Int64: StoredInteger {}
extension UInt: StoredInteger {}
extension UInt8: StoredInteger {}
extension UInt16: StoredInteger {}
extension UInt32: StoredInteger {}
extension UInt64: StoredInteger {}

extension Double: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        switch storedValue {
        case .double(let number): self = number
        case .int(let number): self.init(exactly: number)
        case .uint(let number): self.init(exactly: number)
        // Rounded to the nearest Double, as any number in JSON text is, if it is within Double's range: 1e400
        // is not infinity.
        case .number(let text):
            guard let number = JSONNumber.double(text) else { return nil }
            self = number
        // JSON has no literal for these; the JSON store writes them as strings.
        case .string("Infinity"): self = .infinity
        case .string("-Infinity"): self = -.infinity
        case .string("NaN"): self = .nan
        default: return nil
        }
    }

    var storedValue: StoredValue { .double(self) }

    static func rejection(of storedValue: StoredValue) -> String {
        switch storedValue {
        case .int, .uint, .number: JSONNumber.doesNotFit(storedValue.description, in: "Double")
        default: "it is \(storedValue.kindDescription)"
        }
    }
}

extension Float: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        switch storedValue {
        // An integer is a Float only if the Float holds it exactly: 16777217 is not.
        case .int(let number): self.init(exactly: number)
        case .uint(let number): self.init(exactly: number)
        default:
            guard let number = Double(storedValue: storedValue) else { return nil }
            // Out of Float's range is not a Float (too large, or so small that it would read as zero); a
            // fraction in range rounds to the nearest Float, which is exact for every value this type stored
            // itself (its shortest decimal text).
            guard number.isNaN || number.isInfinite || Float(number).isFinite else { return nil }
            guard number == 0 || Float(number) != 0 else { return nil }
            self.init(number)
        }
    }

    static func rejection(of storedValue: StoredValue) -> String {
        switch storedValue {
        case .int, .uint, .double, .number: JSONNumber.doesNotFit(storedValue.description, in: "Float")
        default: "it is \(storedValue.kindDescription)"
        }
    }

    /// Stored as the Double nearest to the Float's shortest decimal text, so 0.1 is stored as 0.1, not as
    /// 0.10000000149011612, and people and other code reading the store see the number that was set.
    var storedValue: StoredValue {
        guard isFinite, let decimal = Double(description), Float(decimal) == self else { return .double(Double(self)) }
        return .double(decimal)
    }
}

extension Data: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        switch storedValue {
        case .data(let bytes): self = bytes
        case .string(let base64): self.init(base64Encoded: base64)
        default: return nil
        }
    }

    var storedValue: StoredValue { .data(self) }
}

extension Date: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        switch storedValue {
        case .date(let date): self = date
        case .string(let text):
            guard let date = ISO8601Timestamp.date(from: text) else { return nil }
            self = date
        default: return nil
        }
    }

    var storedValue: StoredValue { .date(self) }

    static func rejection(of storedValue: StoredValue) -> String {
        guard case .string(let text) = storedValue, let problem = ISO8601Timestamp.problem(with: text) else {
            return "it is \(storedValue.kindDescription)"
        }
        return problem
    }
}

extension URL: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        guard case .string(let text) = storedValue, let url = URL(string: text) else { return nil }
        self = url
    }

    /// Stored as its absolute string: `UserDefaults.set(_: URL, …)` on Linux reads a web URL back as a file URL.
    var storedValue: StoredValue { .string(absoluteString) }
}

extension Array: StoredValueConvertible where Element: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        guard case .array(let items) = storedValue else { return nil }
        let elements = items.compactMap(Element.init(storedValue:))
        guard elements.count == items.count else { return nil }
        self = elements
    }

    var storedValue: StoredValue { .array(map(\.storedValue)) }
}

extension Dictionary: StoredValueConvertible where Key == String, Value: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        guard case .dictionary(let members) = storedValue else { return nil }
        let values = members.compactMapValues(Value.init(storedValue:))
        guard values.count == members.count else { return nil }
        self = values
    }

    var storedValue: StoredValue { .dictionary(mapValues(\.storedValue)) }
}

extension Optional: StoredValueConvertible where Wrapped: StoredValueConvertible {
    init?(storedValue: StoredValue) {
        if case .null = storedValue {
            self = .none
            return
        }
        guard let wrapped = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(wrapped)
    }

    var storedValue: StoredValue { map(\.storedValue) ?? .null }

    static func rejection(of storedValue: StoredValue) -> String {
        Wrapped.rejection(of: storedValue)
    }
}

/// Lets generic code ask whether a value is `nil` without knowing that it is an `Optional`.
protocol OptionalValue {
    var isNil: Bool { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
    static var wrappedType: Any.Type { Wrapped.self }
}
