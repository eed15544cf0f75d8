import Foundation

/// The base class of a settings object whose properties load, default and persist themselves.
///
/// Subclass it and declare each setting in one line, with its default:
///
/// ```swift
/// final class AppConfig: StorableConfig {
///     @Setting var isFirstLaunch = true
///     @Setting var userName = ""
///     @Setting var selectedHobbies: [String] = []
/// }
/// final class TwitterConfig: StorableConfig { @Setting var userName = "" }
///
/// let app = AppConfig()                                // the process-wide default store
/// if app.isFirstLaunch { showWelcome() }
/// app.isFirstLaunch = false                            // stored before the assignment returns
/// let twitter = TwitterConfig(store: InMemoryStore())  // a store of your choice
/// ```
///
/// When a config is created, the base class finds its ``Setting`` properties with `Mirror` (including those
/// of superclasses), derives each key as `"<namespace>.<configName>.<propertyName>"`, and loads the stored
/// values. Declared initial values are the defaults: they are never written to the store, and a setting
/// with nothing stored reads its default. Every assignment is written through the setting's setter, with no
/// key-value observing, so this works on Linux as well as on Apple platforms.
///
/// A config is safe to use from several threads at once. It is not declared `Sendable`, because a subclass
/// may add state of its own; a subclass whose own stored properties are all settings or constants can
/// declare `final class AppConfig: StorableConfig, @unchecked Sendable` to share one instance between tasks.
open class StorableConfig: CustomStringConvertible, CustomDebugStringConvertible {
    /// The store that this config reads from and writes to.
    public let store: any ConfigStore
    let context: ConfigContext
    // Set once, in the initializer, and only read afterwards.
    private(set) var schema = ConfigSchema.empty
    private(set) var settings: [any SettingBox] = []
    /// The overrides and file sources that the class declared when this config was created (`nil`: none): set in
    /// the initializer by `applyLayers()`, and only read afterwards.
    var layers: ConfigLayers?

    /// Creates a config over `store` and loads the stored values of its settings.
    ///
    /// A subclass that declares something the framework cannot store, or two settings with one key, stops
    /// the program here with a message naming the class and property. "Cannot store" is judged on the
    /// declared default: an optional whose default is `nil` is checked only when a value is assigned, and a
    /// value that cannot be stored then is reported and kept in memory.
    public required init(store: any ConfigStore) {
        self.store = store
        context = ConfigContext(store: store)
        let reflected = reflectSettings()
        do {
            schema = try ConfigSchema.schema(for: type(of: self), settings: reflected)
        } catch {
            fatalError("\(error)")
        }
        settings = reflected.map(\.setting)
        for (index, setting) in settings.enumerated() {
            setting.bind(schema: schema, index: index, context: context)
        }
        // A class that moves values from earlier keys sends them to its current keys for every config on the
        // storage first, so that a live config of the class that used them (an old class still created by a
        // library, say) writes where the moved value now is; that config reads it after the move.
        let aliasesAdded = context.hub.addAliases(of: schema)
        context.hub.reportAliases(of: schema)
        keepSecretsApart()
        let movesLater = moveValuesFromEarlierKeys()
        if aliasesAdded { context.hub.storageChanged(keys: Set(schema.keys.map(context.hub.storeKey))) }
        if !movesLater { runMigrations() }
        applyLayers()
        let version = context.hub.attach(self, context: context)
        loadSettings(version: version, isFirstLoad: true)
        finishApplyingLayers()
    }

    /// Creates a config over the process-wide ``defaultStore``.
    public convenience init() {
        self.init(store: StorableConfig.defaultStore)
    }

    deinit {
        context.hub.detach(context, schema: schema)
        endSources()
        for setting in settings { setting.endObservation() }
        context.endChangeObservation()
    }

    /// The first part of every key: ``defaultNamespace``, which is the bundle identifier, or where there is none
    /// (a command-line program, on Linux or on Apple platforms), the executable's name, unless set.
    ///
    /// Override it to give keys a prefix that does not depend on how the program is packaged:
    ///
    /// ```swift
    /// override class var namespace: String { "com.example.app" }
    /// ```
    open class var namespace: String { StorableConfig.defaultNamespace }

    /// The middle part of every key: the class's unqualified name, as `String(describing:)` gives it.
    ///
    /// Override it to keep keys stable when you rename the class, or to let two classes share settings.
    open class var configName: String { unqualifiedName(of: self) }

    /// Where this class's settings may be overridden from: environment variables and launch arguments (see
    /// ``ConfigOverrides``). By default ``defaultOverrides``, which is none unless set.
    open class var overrides: ConfigOverrides { StorableConfig.defaultOverrides }

    /// The file sources this class's settings read, above and below the store (see ``ConfigSource``). By default
    /// ``defaultSources``, which is none unless set.
    ///
    /// ```swift
    /// override class var sources: ConfigSources { ConfigSources(belowStore: [.directory("/etc/server")]) }
    /// ```
    open class var sources: ConfigSources { StorableConfig.defaultSources }

    /// Earlier values of ``configName``, most recent first: a config class that was renamed finds, and moves to
    /// its current keys, the values stored under its earlier names.
    ///
    /// ```swift
    /// final class AppSettings: StorableConfig {          // was `final class Settings`
    ///     override class var previousConfigNames: [String] { ["Settings"] }
    /// }
    /// ```
    open class var previousConfigNames: [String] { [] }

    /// Earlier values of ``namespace``, most recent first: an app whose bundle identifier or executable name
    /// changed finds, and moves, the values stored under the earlier ones. On Linux, the default store's files
    /// of those namespaces are read too.
    open class var previousNamespaces: [String] { [] }

    /// The version of the layout in which this class stores its values: by default the highest ``migrations``
    /// version, and 0 for a class without migrations. A store that holds no version is at version 0.
    open class var schemaVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// The steps that bring values stored by earlier versions of the class up to ``schemaVersion``, in any
    /// order (they run in the order of their versions). See ``ConfigMigration``.
    open class var migrations: [ConfigMigration] { [] }

    /// The keys of all of this config's settings, in declaration order (superclasses' settings first).
    public var keys: [String] { schema.keys }

    /// All of this config's settings, in declaration order (superclasses' settings first), for code that works
    /// with settings it does not know by name: a settings screen, a command-line tool, a migration.
    ///
    /// ```swift
    /// for setting in config.allSettings {
    ///     print(setting.name, setting.valueText, setting.isSet ? "" : "(default)")
    /// }
    /// try config.allSettings.first { $0.name == "fontSize" }?.assign(parsing: "14")
    /// ```
    public var allSettings: [any AnySetting] { settings }

    /// "AppConfig(userName: "nkysu1", apiToken: <redacted>)": each setting's value as text, a secret's as
    /// `<redacted>`.
    open var description: String {
        let values = zip(schema.names, settings).map { name, setting in
            "\(name): \(setting.isRedacted ? StorableConfigError.redacted : setting.valueText)"
        }
        return "\(type(of: self).configName)(\(values.joined(separator: ", ")))"
    }

    /// The same as ``description``.
    open var debugDescription: String { description }

    /// Removes the stored values of all of this config's settings, and any value left under their earlier keys,
    /// in one write, so that they read their defaults again. Keys that this config does not declare are left
    /// alone.
    public func reset() {
        // The defaults are read from now on, as an assignment's value is (see `Setting.write`).
        var entries: [(change: SettingChange, completion: ConfigContext.BatchCompletion)] =
            zip(schema.keys, settings).map { key, setting in
                let number = setting.showPendingReset()
                let completion: ConfigContext.BatchCompletion = { version in
                    defer { setting.endShowing(number) }
                    return setting.load(nil, typedValue: nil, version: version, isFirstLoad: false)
                }
                return (SettingChange(key: key, stored: nil, typedValue: nil), completion)
            }
        // Earlier keys too, so that no value left there comes back at the next start.
        for key in schema.earlierKeys.joined() {
            entries.append((SettingChange(key: key, stored: nil, typedValue: nil, isEarlierKey: true), { _ in nil }))
        }
        _ = context.write(entries)
    }

    /// Runs `updates` and writes every assignment it makes to this config's settings as one write to the
    /// store: for a ``JSONFileStore``, one lock and one rename, however many settings change.
    ///
    /// ```swift
    /// config.batch {
    ///     config.userName = "nkysu1"
    ///     config.selectedHobbies = ["sleep", "eat"]
    ///     config.isFirstLaunch = false
    /// }
    /// ```
    ///
    /// Inside `updates`, the new values read back at once; the store and the other configs bound to it see
    /// them when `updates` returns (or throws), one change per key. Assignments made by other threads
    /// meanwhile are written as usual. Batches nest.
    public func batch<Result>(_ updates: () throws -> Result) rethrows -> Result {
        try context.batch(updates)
    }

    /// Re-reads the store, so that changes made by other processes become visible, and updates every
    /// config in this process that is bound to the same storage.
    /// - Throws: ``StorableConfigError/reloadFailed(store:reason:)`` if the store cannot be read; the
    ///   settings then keep their values.
    public func reload() throws {
        try context.hub.reload(store)
    }

    /// Takes a change that another config made to the same storage, and returns what is left to tell the observers.
    func receive(key: String, stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64) -> (() -> Void)? {
        guard let index = schema.indexByKey[key] ?? aliasedIndex(of: key) else { return nil }
        return settings[index].load(stored, typedValue: typedValue, version: version, isFirstLoad: false)
    }

    /// The position of the setting that knows `storeKey` by an earlier key, if aliases send one there.
    private func aliasedIndex(of storeKey: String) -> Int? {
        context.hub.earlierKeys(aliasedTo: storeKey).lazy.compactMap { self.schema.indexByKey[$0] }.first
    }

    /// Reads the settings' values from the store, as of `version`: all of them, or those whose keys are in
    /// `onlyKeys`. A key that cannot be read is reported and keeps its current value; so does a value that is not
    /// of its setting's type or fails its check, unless this is the config's first load (`isFirstLoad`), when
    /// the setting reads its default.
    func loadSettings(version: UInt64, onlyKeys: Set<String>? = nil, isFirstLoad: Bool = false) {
        let keys = onlyKeys.map { only in schema.keys.filter(only.contains) } ?? schema.keys
        guard !keys.isEmpty else { return }
        var values: [String: StoredValue] = [:]
        var unreadable: Set<String> = []
        do {
            values = try context.hub.values(forKeys: keys, in: store)
        } catch {
            // Read what can be read, and say which keys could not be.
            for key in keys {
                do {
                    if let value = try store.value(forKey: context.hub.storeKey(key)) { values[key] = value }
                } catch {
                    unreadable.insert(key)
                    StorableConfig.report(.readFailed(key: key, reason: "\(error)"))
                }
            }
        }
        // In schema order, by position (no lookup of each key's index); hashing a key only where a set or
        // dictionary holds something. Every setting takes its value before any observer is told, so that an
        // observer of one reads the others as of the same reading (a certificate and its key, say).
        var telling: [() -> Void] = []
        for (index, key) in schema.keys.enumerated() {
            if let onlyKeys, !onlyKeys.contains(key) { continue }
            if !unreadable.isEmpty, unreadable.contains(key) { continue }
            if let tell = settings[index].load(
                values.isEmpty ? nil : values[key], typedValue: nil, version: version, isFirstLoad: isFirstLoad)
            {
                telling.append(tell)
            }
        }
        for tell in telling { tell() }
    }
}
