import Foundation
import StorableConfig

/// What the AppConfig specification file says of one setting: the key's element in `<dict>`, its default, the
/// range it takes, and the admin console's control for it.
struct AppConfigKey {
    /// `string`, `integer`, `float`, `date`, `boolean`, `stringArray`, `integerArray` or `floatArray`.
    var element: String
    /// The `<field>`'s `type`: `input`, `checkbox`, `datetime`, `select`, `multiselect` or `list`.
    var fieldType: String
    /// The default's values, as the format writes them: one for a single value, none for `nil` or an empty array.
    var defaultValues: [String] = []
    /// The allowed values of an enum, as the format writes them, for a `select` or `multiselect` field.
    var options: [String]?
    /// The `<constraint>` attributes: `min`, `max`, `nullable`, in that order.
    var constraint: [(name: String, value: String)] = []
    /// Why the default is not given, if it cannot be written in the format.
    var defaultProblem: String?
}

/// Why a setting is left out of the AppConfig specification file.
struct AppConfigOmission: Error {
    var reason: String
}

extension AppConfigKey {
    /// The key of `setting` in the format, or why the format cannot express it.
    static func of(_ setting: any AnySetting) -> Result<AppConfigKey, AppConfigOmission> {
        if setting.holdsRecords {
            return .failure(AppConfigOmission(reason: "the format has no type for a collection of records"))
        }
        if setting.isSecret {
            return .failure(
                AppConfigOmission(
                    reason: "it is secret, and an MDM payload is plain text on the device: a secret belongs in a "
                        + "secret store"))
        }
        guard var key = appConfigKey(of: setting.valueType) else {
            let name = setting.valueTypeName
            return .failure(
                AppConfigOmission(
                    reason: "the format has no type for \(withArticle(name)) (it has strings, integers, "
                        + "floats, dates, Booleans, and arrays of strings, integers or floats)"))
        }
        if let stored = setting.defaultStoredValue {
            do {
                key.defaultValues = try appConfigValues(of: stored, element: key.element)
            } catch {
                key.defaultProblem = error.reason
            }
        } else {
            key.defaultProblem = "it cannot be encoded"
        }
        // The format's min and max are numbers; a range of text or dates is checked by the app, not the console.
        if key.element == "integer" || key.element == "float", let bounds = setting.allowedRange,
            let minimum = try? appConfigValues(of: bounds.minimum, element: key.element).first,
            let maximum = try? appConfigValues(of: bounds.maximum, element: key.element).first
        {
            key.constraint = [("min", minimum), ("max", maximum)] + key.constraint
        }
        return .success(key)
    }

    /// `name` after "a" or "an", as it is read aloud: "an Int", "a Data", "a URL", "a UInt8", "a [String]".
    private static func withArticle(_ name: String) -> String {
        let characters = Array(name)
        // An upper-case U followed by another capital, or UInt, is spelled out: "you".
        let spelledU = characters.first == "U" && characters.count > 1 && characters[1].isUppercase
        let vowel = !spelledU && !name.hasPrefix("UInt") && characters.first.map { "AEIOUaeiou".contains($0) } == true
        return "\(vowel ? "an" : "a") \(name)"
    }

    /// The element and control for `type`, or `nil` for a type the format has none for.
    private static func appConfigKey(of type: Any.Type) -> AppConfigKey? {
        if let optional = type as? any OptionalType.Type {
            guard var key = appConfigKey(of: optional.wrappedType) else { return nil }
            if !key.constraint.contains(where: { $0.name == "nullable" }) {
                key.constraint.append(("nullable", "true"))
            }
            return key
        }
        if let scalar = appConfigScalar(of: type) {
            return AppConfigKey(element: scalar.element, fieldType: scalar.field, options: scalar.options)
        }
        // Arrays (and sets, stored as arrays) of strings, integers or floats; not of dates or Booleans, nor of
        // optionals, which the format has no array for.
        guard let sequence = type as? any AppConfigSequence.Type,
            let element = appConfigScalar(of: sequence.elementType),
            element.element != "date" && element.element != "boolean"
        else { return nil }
        return AppConfigKey(
            element: element.element + "Array", fieldType: element.options == nil ? "list" : "multiselect",
            options: element.options)
    }

    /// The element, control and options of a single value of `type`, or `nil`.
    private static func appConfigScalar(of type: Any.Type) -> (element: String, field: String, options: [String]?)? {
        switch type {
        case is Bool.Type: return ("boolean", "checkbox", nil)
        case is any FixedWidthInteger.Type: return ("integer", "input", nil)
        case is any BinaryFloatingPoint.Type, is Decimal.Type: return ("float", "input", nil)
        case is String.Type, is URL.Type: return ("string", "input", nil)
        case is Date.Type: return ("date", "datetime", nil)
        default: break
        }
        guard let cases = type as? any CaseIterable.Type, let values = JSONSchemaMembers.caseValues(of: cases),
            !values.isEmpty
        else {
            return nil
        }
        let texts = values.compactMap { value -> String? in if case .string(let text) = value { text } else { nil } }
        if texts.count == values.count { return ("string", "select", texts) }
        let numbers = values.compactMap { value -> Int64? in if case .int(let number) = value { number } else { nil } }
        guard numbers.count == values.count, numbers.allSatisfy({ Int32(exactly: $0) != nil }) else { return nil }
        return ("integer", "select", numbers.map { "\($0)" })
    }

    /// The values of `stored` as the format writes them for a key of `element`: none for `null` or an empty
    /// array.
    /// - Throws: Why a value cannot be written (an integer beyond the format's 32 bits).
    static func appConfigValues(of stored: StoredValue, element: String) throws(AppConfigOmission) -> [String] {
        switch stored {
        case .null: return []
        case .array(let items):
            var values: [String] = []
            for item in items { values += try appConfigValues(of: item, element: element) }
            return values
        case .bool(let value): return [value ? "true" : "false"]
        case .int, .uint:
            let text = stored.jsonText()
            guard element.hasPrefix("float") || Int32(text) != nil else { throw outsideInt32(text) }
            return [text]
        case .double(let value):
            // xs:float's spelling of the values that are not finite.
            if value.isNaN { return ["NaN"] }
            if value.isInfinite { return [value < 0 ? "-INF" : "INF"] }
            return ["\(value)"]
        case .number(let text), .string(let text): return [text]
        // ISO 8601 text, as JSON writes a date: a string without characters to escape.
        case .date: return [String(stored.jsonText().dropFirst().dropLast())]
        case .data, .dictionary:
            throw AppConfigOmission(reason: "the format has no value for \(stored.kindDescription)")
        }
    }

    private static func outsideInt32(_ value: String) -> AppConfigOmission {
        AppConfigOmission(
            reason: "\(value) lies outside the format's integers (32 bits, -2147483648...2147483647)")
    }
}

/// A collection stored as an array, whose elements' type the AppConfig specification file needs.
protocol AppConfigSequence {
    static var elementType: Any.Type { get }
}

extension Array: AppConfigSequence {
    static var elementType: Any.Type { Element.self }
}

extension Set: AppConfigSequence {
    static var elementType: Any.Type { Element.self }
}
