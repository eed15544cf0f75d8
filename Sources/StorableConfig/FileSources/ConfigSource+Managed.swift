import Foundation

extension ConfigSource {
    /// The managed app configuration that an administrator pushes from an MDM server: the dictionary under
    /// `com.apple.configuration.managed` in `defaults`, and on macOS the values a configuration profile forces
    /// (`objectIsForced(forKey:)`) under a setting's key. Declare it once, at start-up, as ``ConfigSources/managed``:
    ///
    /// ```swift
    /// StorableConfig.defaultSources = ConfigSources(managed: .managedAppConfiguration())
    /// ```
    ///
    /// It is the highest layer, above launch arguments and environment variables: a value the administrator
    /// gives is read everywhere, ``AnySetting/isManaged`` is `true` (a UI disables the control), and an assignment
    /// is stored but not read, reported once. A member names a setting by its key
    /// (`com.example.app.AppConfig.serverURL`) or by its config and property name (`AppConfig.serverURL`, the name
    /// the AppConfig specification file lists); a name that two live settings answer to is applied to neither and
    /// reported. A value of the wrong type, or one the setting's check refuses, is reported by key and ignored: the
    /// layer below is read. The dictionary is read again at each `UserDefaults.didChangeNotification` of
    /// `defaults`. See Docs/ManagedConfiguration.md.
    ///
    /// - Parameter defaults: The defaults the dictionary is in: `UserDefaults.standard`, where the system puts it,
    ///   or another one in tests.
    public static func managedAppConfiguration(_ defaults: UserDefaults = .standard) -> ConfigSource {
        ConfigSource(managedIn: defaults === UserDefaults.standard ? nil : ManagedDefaults(defaults))
    }
}

/// A `UserDefaults` object that a ``ConfigSource`` names, compared by identity.
///
/// `@unchecked Sendable`: `UserDefaults` is documented as thread-safe, and only its thread-safe methods are called,
/// but corelibs Foundation does not declare it `Sendable`.
final class ManagedDefaults: Hashable, @unchecked Sendable {
    /// The key of the managed app configuration's dictionary, where the system puts what the MDM server sent.
    static let key = "com.apple.configuration.managed"

    let defaults: UserDefaults

    init(_ defaults: UserDefaults) {
        self.defaults = defaults
    }

    static func == (lhs: ManagedDefaults, rhs: ManagedDefaults) -> Bool { lhs.defaults === rhs.defaults }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(defaults)) }
}

extension ConfigSource {
    /// Whether the source is read for the names of its configs' settings only (a directory's files, the keys the
    /// managed app configuration may force), so that a config of another class makes it read again.
    var readsByName: Bool { format == .directory || format == .managedAppConfiguration }

    /// Whether a setting is named by its key or by `<configName>.<property>`, and a name that two live settings
    /// answer to is applied to neither: the managed app configuration and a provider's values.
    var namesByClaims: Bool { format == .managedAppConfiguration || format == .provider }
}
