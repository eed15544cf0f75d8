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
open class StorableConfig {
    /// The store that this config reads from and writes to.
    public let store: any ConfigStore
    let context: ConfigContext
    // Set once, in the initializer, and only read afterwards.
    private(set) var schema = ConfigSchema.empty
    private(set) var settings: [any AnySetting] = []

    /// Creates a config over `store` and loads the stored values of its settings.
    ///
    /// A subclass that declares something the framework cannot store, or two settings with one key, stops
    /// the program here with a message naming the class and property.
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
            setting.bind(key: schema.keys[index], context: context)
        }
        let version = context.hub.attach(self, context: context)
        loadSettings(version: version)
    }

    /// Creates a config over the process-wide ``defaultStore``.
    public convenience init() {
        self.init(store: StorableConfig.defaultStore)
    }

    deinit {
        context.hub.detach(context)
    }

    /// The first part of every key: the bundle identifier, or where there is none (a command-line program,
    /// on Linux or on Apple platforms), the executable's name.
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
    open class var configName: String { String(describing: self) }

    /// The bundle identifier, or the executable's name where there is no bundle identifier.
    public static let defaultNamespace: String = {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        let name = ProcessInfo.processInfo.processName
        return name.isEmpty ? "StorableConfig" : name
    }()

    /// The keys of all of this config's settings, in declaration order (superclasses' settings first).
    public var keys: [String] { schema.keys }

    /// Removes the stored values of all of this config's settings, in one write, so that they read their
    /// defaults again. Keys that this config does not declare are left alone.
    public func reset() {
        let version = context.write(schema.keys.map { ($0, nil, nil) })
        for setting in settings {
            setting.load(nil, typedValue: nil, version: version)
        }
    }

    /// Re-reads the store, so that changes made by other processes become visible, and updates every
    /// config in this process that is bound to the same storage.
    /// - Throws: ``StorableConfigError/reloadFailed(store:reason:)`` if the store cannot be read; the
    ///   settings then keep their values.
    public func reload() throws {
        try context.hub.reload(store)
    }

    /// Takes a change that another config made to the same storage.
    func receive(key: String, stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64) {
        guard let index = schema.indexByKey[key] else { return }
        settings[index].load(stored, typedValue: typedValue, version: version)
    }

    /// Reads every setting's value from the store, as of `version`.
    func loadSettings(version: UInt64) {
        let keys = schema.keys
        var values: [String: StoredValue] = [:]
        do {
            values = try store.values(forKeys: keys)
        } catch {
            // Read what can be read, and say which keys could not be.
            for key in keys {
                do {
                    if let value = try store.value(forKey: key) { values[key] = value }
                } catch {
                    StorableConfig.report(.readFailed(key: key, reason: "\(error)"))
                }
            }
        }
        for (index, setting) in settings.enumerated() {
            setting.load(values[keys[index]], typedValue: nil, version: version)
        }
    }

    /// Finds the settings with `Mirror`, superclasses' first.
    private func reflectSettings() -> [ReflectedSetting] {
        if self is CustomReflectable {
            fatalError(
                StorableConfigError.invalidDeclaration(
                    className: String(describing: type(of: self)), property: "customMirror",
                    reason: "a StorableConfig subclass must not adopt CustomReflectable, because its custom "
                        + "mirror hides the @Setting properties from the framework"
                ).description)
        }
        var levels: [[ReflectedSetting]] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror, current.subjectType != StorableConfig.self {
            let declaringClass = String(describing: current.subjectType)
            levels.append(
                current.children.compactMap { child in
                    guard let label = child.label, let setting = child.value as? any AnySetting else { return nil }
                    // A wrapper's storage is reflected as `_name`.
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    return ReflectedSetting(name: name, declaringClass: declaringClass, setting: setting)
                })
            mirror = current.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }
}

/// A setting found by reflection.
struct ReflectedSetting {
    let name: String
    let declaringClass: String
    let setting: any AnySetting
}
