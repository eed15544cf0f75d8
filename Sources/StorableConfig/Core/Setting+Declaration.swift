/// What a declaration says about a setting beyond its keys: a check its values must pass, whether they are
/// secret, and what the setting is for.
struct SettingRules<Value>: Sendable {
    /// Returns why a value is invalid, or `nil` if it is valid.
    var check: (@Sendable (Value) -> String?)?
    /// The range's bounds in stored form, for a JSON Schema.
    var bounds: (minimum: StoredValue, maximum: StoredValue)?
    var isSecret = false
    /// What the setting is for, in words a person reads: `@Setting(description:)`.
    var description: String?
}

extension Setting {
    /// Creates a setting whose default is `wrappedValue`, stored under `key` when one is given, whose value is
    /// found, and moved to its key, under earlier property names or keys.
    ///
    /// ```swift
    /// @Setting(key: "isFirstLaunch") var isFirstLaunch = true        // a hand-written UserDefaults key
    /// @Setting(previousNames: ["firstRun"]) var isFirstLaunch = true // a renamed property
    /// @Setting(previousKeys: ["com.old.app.Settings.firstRun"]) var isFirstLaunch = true
    /// @Setting(validate: { $0.isEmpty ? "a name is needed" : nil }) var userName = "guest"
    /// @Setting(secret: true) var apiToken = ""
    /// @Setting(description: "The server the app signs in to.") var serverURL = URL(string: "https://example.com")!
    /// ```
    ///
    /// - Parameters:
    ///   - wrappedValue: The default: what the setting reads while its key holds no value.
    ///   - key: The key to store the value under, exactly as given: no namespace or config name is added.
    ///   - previousNames: Earlier names of the property in this config, most recent first.
    ///   - previousKeys: Earlier full keys, searched first, in the order written.
    ///   - validate: Returns why a value is invalid, or `nil` for a valid one. An invalid value never becomes
    ///     the setting's value: see ``set(_:)``.
    ///   - secret: Whether the value is secret: it shows as `<redacted>` in descriptions and reports.
    ///   - description: What the setting is for, in a sentence a person reads: the JSON Schema and the AppConfig
    ///     specification file (`StorableConfigSchema`) show it to whoever edits the settings.
    public convenience init(
        wrappedValue: Value, key: String? = nil, previousNames: [String] = [], previousKeys: [String] = [],
        validate: (@Sendable (Value) -> String?)? = nil, secret: Bool = false, description: String? = nil
    ) {
        let rules =
            validate == nil && !secret && description == nil
            ? nil : SettingRules(check: validate, isSecret: secret, description: description)
        self.init(
            wrappedValue: wrappedValue,
            declaredKeys: DeclaredKeys(key: key, previousNames: previousNames, previousKeys: previousKeys),
            rules: rules)
    }

    /// Assigns `newValue` if it is valid, and otherwise throws why, leaving the setting as it was.
    ///
    /// Assigning through the property reports an invalid value to ``StorableConfig/errorHandler`` instead:
    ///
    /// ```swift
    /// config.volume = 2                 // reported; volume keeps its value
    /// try config.$volume.set(2)         // throws StorableConfigError.invalidValue
    /// ```
    /// - Throws: ``StorableConfigError/invalidValue(key:value:reason:)``.
    public func set(_ newValue: Value) throws {
        if let error = validationError(newValue) { throw error }
        assign(newValue)
    }

    /// Whether the value is secret.
    public var isSecret: Bool { rules?.isSecret ?? false }

    /// What the setting is for, as its declaration says (`@Setting(description:)`), or `nil` if it says nothing.
    ///
    /// Not `description`, which is the setting as `key = value` text (``description``).
    public var settingDescription: String? { rules?.description }

    /// The error for `value` if it fails the declared check, or `nil`.
    func validationError(_ value: Value) -> StorableConfigError? {
        guard let check = rules?.check, let reason = check(value) else { return nil }
        let shown = isSecret ? StorableConfigError.redacted : Self.describe(value)
        return .invalidValue(key: key, value: shown, reason: reason)
    }

    static func describe(_ value: Value) -> String {
        (try? ValueTraits<Value>.shared.encode(value)).map { "\($0)" } ?? "\(value)"
    }
}

extension Setting where Value: Comparable {
    /// Creates a setting whose values must lie in `range`: see
    /// ``init(wrappedValue:key:previousNames:previousKeys:validate:secret:description:)``.
    ///
    /// ```swift
    /// @Setting(in: 0...1) var volume = 0.8
    /// @Setting(in: 0...1, description: "How loud sounds play, from 0 (silent) to 1.") var volume = 0.8
    /// ```
    public convenience init(
        wrappedValue: Value, key: String? = nil, previousNames: [String] = [], previousKeys: [String] = [],
        in range: ClosedRange<Value>, secret: Bool = false, description: String? = nil
    ) {
        let traits = ValueTraits<Value>.shared
        let bounds = (try? traits.encode(range.lowerBound)).flatMap { lower in
            (try? traits.encode(range.upperBound)).map { (lower, $0) }
        }
        let lower = bounds?.0.description ?? "\(range.lowerBound)"
        let text = "\(lower)...\(bounds?.1.description ?? "\(range.upperBound)")"
        let rules = SettingRules<Value>(
            check: { range.contains($0) ? nil : "it is outside the range \(text)" }, bounds: bounds, isSecret: secret,
            description: description)
        self.init(
            wrappedValue: wrappedValue,
            declaredKeys: DeclaredKeys(key: key, previousNames: previousNames, previousKeys: previousKeys),
            rules: rules)
    }
}
