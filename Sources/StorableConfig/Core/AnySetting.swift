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
    /// The values the store still keeps for the setting, newest first, each as text in the form of
    /// ``valueText``: see ``Setting/history(limit:)``.
    /// - Throws: ``StorableConfigError/historyNotKept(store:)`` if the store keeps no history.
    func historyTexts(limit: Int) async throws -> [SettingRevision<String>]
    /// Assigns the value the setting's key held at `revision`, if the key is still at `seen`: see
    /// ``Setting/rollBack(to:ifUnchangedSince:)``.
    func rollBack(to revision: Int64, ifUnchangedSince seen: Int64?) async throws
}

extension AnySetting {
    /// Throws ``StorableConfigError/readFailed(key:reason:)``: history is read for a ``Setting``, not for other
    /// kinds of settings (a record collection).
    public func historyTexts(limit: Int) async throws -> [SettingRevision<String>] {
        throw historyUnsupported
    }

    /// Throws ``StorableConfigError/readFailed(key:reason:)``: only a ``Setting`` is rolled back, not other kinds
    /// of settings (a record collection).
    public func rollBack(to revision: Int64, ifUnchangedSince seen: Int64?) async throws {
        throw historyUnsupported
    }

    private var historyUnsupported: StorableConfigError {
        .readFailed(
            key: key, reason: "history and rollback are for @Setting properties, not for a \(type(of: self))")
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
