/// A setting whose value type is not known where it is used: what ``StorableConfig/allSettings`` lists.
///
/// Values come and go as text, in the form a person types on a command line:
///
/// ```swift
/// let setting = config.allSettings.first { $0.name == "selectedHobbies" }!
/// setting.valueText                          // ["sleep","eat"]
/// try setting.assign(parsing: #"["go"]"#)    // parsed as [String], then stored
/// try setting.assign(parsing: "nope")        // throws: expects JSON such as ["sleep","eat"]
/// ```
public protocol AnySetting: AnyObject, Sendable {
    /// The name of the property that declares the setting.
    var name: String { get }
    /// The key under which the setting is stored.
    var key: String { get }
    /// The keys under which the setting's value may have been stored before, in the order they are searched
    /// when its key holds nothing: its previous keys, then its key under the config's previous namespaces,
    /// config names and property names. A value found there is moved to ``key`` when the config is created.
    var previousKeys: [String] { get }
    /// Whether the value is secret (`@Setting(secret: true)`): descriptions, reports and exports show it as
    /// `<redacted>`; reading the property, ``valueText`` and ``storedValue`` give the real value.
    var isSecret: Bool { get }
    /// What the setting is for, as its declaration says (`@Setting(description:)`), or `nil` if it says nothing.
    var settingDescription: String? { get }
    /// The layer that gives the value: a launch argument, an environment variable, a file source, the store, or
    /// the default.
    var layer: SettingLayer { get }
    /// Where the value comes from, as a person would say it, naming the variable, argument or file:
    /// `environment variable APP_CONFIG_PORT`, `file /etc/app/conf.d/APP_CONFIG_PORT`, `the store`.
    var origin: String { get }
    /// Whether the value is never shown: the setting is declared secret, or its value comes from a source
    /// declared secret (see ``ConfigSource``).
    var isRedacted: Bool { get }
    /// A file source's value below the store that a stored value or an override hides, if any.
    var hiddenSourceValue: HiddenSourceValue? { get }
    /// Whether the store holds a value for the setting.
    var isSet: Bool { get }
    /// The name of the value's type as it is written in Swift: "Bool", "[String]", "Theme?".
    var valueTypeName: String { get }
    /// The value's type as declared: `Bool.self`, `[String].self`, `Theme?.self`; for a record collection
    /// (``holdsRecords``), the record type. Tools that describe settings (a schema, a form) read it.
    var valueType: Any.Type { get }
    /// The declared default's stored form, or `nil` if it cannot be encoded or the setting has no single default
    /// (a record collection). A secret's default is given as it is: a tool that shows it checks ``isSecret``.
    var defaultStoredValue: StoredValue? { get }
    /// The stored forms of the ends of the range that the declaration allows (`@Setting(in: 1...65535)`), or
    /// `nil` if it gives none.
    var allowedRange: (minimum: StoredValue, maximum: StoredValue)? { get }
    /// Whether the setting is a collection of records (``Records``), stored as a dictionary of records by
    /// identifier: code that syncs or merges values can treat each record on its own.
    var holdsRecords: Bool { get }
    /// What ``assign(parsing:)`` accepts, as a phrase: "true or false", "a whole number", "one of: light, dark".
    var expectedFormat: String { get }
    /// The current value as text: strings, dates and URLs as they are, everything else as compact JSON.
    var valueText: String { get }
    /// The default value as text, in the form of ``valueText``.
    var defaultValueText: String { get }
    /// The current value's stored form.
    var storedValue: StoredValue { get }
    /// Parses `text` as a value of the setting's type and assigns it.
    ///
    /// `text` is read as JSON when it is JSON that fits the type (`true`, `14`, `["a"]`, `{"x": 1}`, `null` for
    /// an optional), and otherwise as a plain string (`dark` for a `String`-backed enum, a URL, an ISO 8601
    /// date, any text for a `String`).
    /// - Throws: ``StorableConfigError/invalidText(key:text:expected:)`` if `text` is not a value of the type;
    ///   the setting is then unchanged.
    func assign(parsing text: String) throws
    /// Removes the stored value, so that the setting reads its default again.
    func reset()
    /// The key under which the store holds the value now: ``key``, unless the setting's class was renamed and a
    /// config of its successor sends the key on (see Docs/Migrations.md); empty for a ``Setting`` that belongs to
    /// no config. What a module that reads the store itself for a setting (history, a tool) asks the store for.
    var storeKey: String { get }
    /// The store of the setting's config; `nil` for a setting that belongs to no config.
    var store: (any ConfigStore)? { get }
    /// `stored` as text in the form of ``valueText``, if it is a value of the setting's type as a load would read
    /// it (fields that another version of the type lacks filled from the default); `nil` if it is not.
    func valueText(of stored: StoredValue) -> String?
    /// What an assignment of the value that `stored` holds writes: `stored` decoded as the setting's type (fields
    /// that another version of the type lacks filled from the default), checked against its range or check, and
    /// encoded again, with the members of `stored` that this version of the type does not know kept. An
    /// assignment to an overridden setting is reported once, as any is. Writes nothing: for a module that writes
    /// the store itself (a rollback's conditional write), then calls ``ConfigStore/storageDidChange(forKeys:)``.
    /// - Throws: ``StorableConfigError/typeMismatch(key:expectedType:found:reason:foundText:)`` if `stored` is not a
    ///   value of the type, ``StorableConfigError/invalidValue(key:value:reason:)`` if it fails the check,
    ///   ``StorableConfigError/encodingFailed(key:reason:)`` if it cannot be encoded again; for a kind of setting
    ///   that holds no single value (a record collection), ``StorableConfigError/readFailed(key:reason:)``.
    func storedValueToAssign(_ stored: StoredValue) throws -> StoredValue
}

extension AnySetting {
    /// ``key``: a kind of setting that knows of no renamed class.
    public var storeKey: String { key }
    /// `nil`: a kind of setting that names no store.
    public var store: (any ConfigStore)? { nil }
    /// `nil`: no single value.
    public func valueText(of stored: StoredValue) -> String? { nil }

    /// Throws ``StorableConfigError/readFailed(key:reason:)``: only a ``Setting`` takes one stored value.
    public func storedValueToAssign(_ stored: StoredValue) throws -> StoredValue {
        throw StorableConfigError.readFailed(
            key: key, reason: "a \(type(of: self)) takes no single stored value; only a @Setting property does")
    }
}

extension AnySetting {
    /// `false`: one value.
    public var holdsRecords: Bool { false }
    /// `nil`: no default given.
    public var defaultStoredValue: StoredValue? { nil }
    /// `nil`: no range given.
    public var allowedRange: (minimum: StoredValue, maximum: StoredValue)? { nil }
    /// `nil`: nothing said.
    public var settingDescription: String? { nil }
    /// ``layer``, as text.
    public var origin: String { layer == .stored ? "the store" : layer.description }
    /// ``isSecret``.
    public var isRedacted: Bool { isSecret }

    /// Whether an administrator manages the value (the managed app configuration gives it: ``layer`` is
    /// ``SettingLayer/managed``): a UI shows it and disables the control, since an assignment is not read.
    ///
    /// ```swift
    /// Toggle("Camera", isOn: $allowsCamera).disabled(config.$allowsCamera.isManaged)
    /// ```
    public var isManaged: Bool { layer == .managed }
    /// `nil`: nothing hidden.
    public var hiddenSourceValue: HiddenSourceValue? { nil }

    /// The earlier name of ``previousKeys``.
    @available(*, deprecated, renamed: "previousKeys")
    public var earlierKeys: [String] { previousKeys }

    /// The earlier name of ``layer``.
    @available(*, deprecated, renamed: "layer")
    public var source: SettingLayer { layer }
}

/// A file source's value that a setting does not read, because a stored value or an override hides it.
public struct HiddenSourceValue: Sendable, Hashable {
    /// The value as text (`<redacted>` for a secret).
    public let valueText: String
    /// The file it comes from: `file /etc/app/conf.d/SERVER_CONFIG_PORT`.
    public let origin: String
}
