import Foundation

extension Setting: AnySetting {
    /// The value type as people write it: `Bool`, `[String]`, `Profile?`.
    public var valueTypeName: String {
        ValueTraits<Value>.shared.typeName
    }

    /// `Value.self`.
    public var valueType: Any.Type { Value.self }

    /// The declared default's stored form, or `nil` if it cannot be encoded.
    public var defaultStoredValue: StoredValue? { try? ValueTraits<Value>.shared.encode(defaultValue) }

    /// The stored forms of the ends of the declared range (`@Setting(in:)`), or `nil`.
    public var allowedRange: (minimum: StoredValue, maximum: StoredValue)? { rules?.bounds }

    /// What ``assign(parsing:)`` accepts, with an example: the text form of the default.
    public var expectedFormat: String {
        Self.format(of: Value.self, example: defaultStoredValue ?? .null)
    }

    /// The current value as text, in the form ``assign(parsing:)`` accepts: text as it is, unless it would read
    /// back as another value (a `String?` holding the text `null` shows as `"null"`, its `nil` as `null`).
    public var valueText: String {
        text(of: storedValue)
    }

    /// The declared default as text, in the form ``assign(parsing:)`` accepts.
    public var defaultValueText: String {
        text(of: defaultStoredValue ?? .null)
    }

    /// `stored` as text that ``assign(parsing:)`` reads back as the same value: a string bare, unless the bare
    /// text reads as another value (`null` for a `String?`, `"a"` with its quotes for a `String`), then quoted as
    /// JSON (`"null"`, `"\"a\""`).
    func text(of stored: StoredValue) -> String {
        let text = Self.text(of: stored)
        guard case .string = stored, let reread = try? ValueTraits<Value>.shared.encode(parse(text)),
            reread != stored
        else { return text }
        return JSONText.string(from: stored, pretty: false)
    }

    /// The current value's stored form.
    public var storedValue: StoredValue {
        (try? ValueTraits<Value>.shared.encode(wrappedValue)) ?? .null
    }

    /// Assigns the value that `text` describes: JSON text, or a bare string for a `String` setting.
    /// - Throws: ``StorableConfigError/invalidText(key:text:expected:)`` if the text is not a value of the
    ///   setting's type, ``StorableConfigError/invalidValue(key:value:reason:)`` if it fails the setting's
    ///   range or check.
    public func assign(parsing text: String) throws {
        try set(try parse(text))
    }

    /// The value that `text` describes, in the grammar of ``assign(parsing:)``.
    /// - Throws: ``StorableConfigError/invalidText(key:text:expected:)``.
    func parse(_ text: String) throws -> Value {
        var candidates: [StoredValue] = []
        if let json = try? JSONText.parse(Data(text.utf8)) { candidates.append(json) }
        candidates.append(.string(text))
        let traits = ValueTraits<Value>.shared
        for candidate in candidates {
            // Text for a number must be a finite number: "1e999" is not a volume.
            if case .double(let number) = candidate, !number.isFinite { continue }
            if let value = try? traits.decode(candidate) { return value }
        }
        // JSON that leaves out fields of a struct takes the declared default's (a field it gives must be valid).
        if let json = candidates.first, let filled = fillingGaps(of: json, traits: traits), filled.fallbacks.isEmpty {
            return filled.value
        }
        throw StorableConfigError.invalidText(
            key: key, text: isSecret ? StorableConfigError.redacted : text,
            expected: "\(valueTypeName): \(expectedFormat)")
    }

    private static func text(of stored: StoredValue) -> String {
        switch stored {
        case .string(let text):
            // `assign(parsing:)` tries JSON first: text that is JSON for a value of this type is quoted.
            if let json = try? JSONText.parse(Data(text.utf8)), (try? ValueTraits<Value>.shared.decode(json)) != nil {
                return JSONText.string(from: stored, pretty: false)
            }
            return text
        case .date(let date): return ISO8601Timestamp.string(from: date)
        default: return JSONText.string(from: stored, pretty: false)
        }
    }

    private static func format(of type: Any.Type, example: StoredValue) -> String {
        if let optional = type as? any OptionalValue.Type {
            return format(of: optional.wrappedType, example: example) + ", or null for no value"
        }
        switch type {
        case is Bool.Type: return "true or false"
        case is any FixedWidthInteger.Type: return "a whole number"
        case is any BinaryFloatingPoint.Type: return "a number"
        case is String.Type: return "any text"
        case is Date.Type: return "an ISO 8601 date such as 2026-11-21T09:30:00Z"
        case is URL.Type: return "a URL such as https://example.com"
        default: break
        }
        if let cases = type as? any CaseIterable.Type {
            let names = allCaseTexts(of: cases)
            if !names.isEmpty { return "one of: " + names.joined(separator: ", ") }
        }
        return "JSON such as \(JSONText.string(from: example, pretty: false))"
    }

    private static func allCaseTexts<Cases: CaseIterable>(of type: Cases.Type) -> [String] {
        type.allCases.compactMap { value in
            guard let encodable = value as? any Encodable, let stored = try? StoredValueCoding.encode(encodable)
            else { return nil }
            return text(of: stored)
        }
    }
}

extension Setting: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// "key = value", with `<redacted>` for a secret's value.
    public var description: String {
        "\(key.isEmpty ? "Setting<\(valueTypeName)>" : key) = \(isRedacted ? StorableConfigError.redacted : valueText)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The key, the value (`<redacted>` for a secret), the default and whether it is stored, so that `dump`
    /// and debuggers show no secret.
    public var customMirror: Mirror {
        let shown: Any = isRedacted ? StorableConfigError.redacted : wrappedValue
        let shownDefault: Any = isSecret ? StorableConfigError.redacted : defaultValue
        return Mirror(
            self, children: ["key": key, "value": shown, "defaultValue": shownDefault, "isSet": isSet],
            displayStyle: .class)
    }
}
