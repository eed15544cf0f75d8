import Foundation

/// A read-only source of setting values that operations ship as files: a `.env` file, a directory of one file
/// per setting (a Kubernetes ConfigMap or Secret volume, `/run/secrets`), or a JSON file. The library reads it,
/// watches it, and never writes to it.
///
/// Declare the sources of every config at start-up, each above the store (it wins over stored values, as an
/// environment variable does) or below it (it replaces the declared default, and a stored value wins over it):
///
/// ```swift
/// StorableConfig.defaultOverrides = .environmentAndArguments()
/// StorableConfig.defaultSources = ConfigSources(
///     aboveStore: [.directory("/etc/app/secrets", secret: true)],   // a Secret volume
///     belowStore: [.directory("/etc/app/config"), .dotEnv(".env", optional: true)])  // a ConfigMap, a .env file
/// ```
///
/// The order, highest first: launch arguments, environment variables, the sources above the store in the order
/// given, the store, the sources below the store in the order given, the declared default.
///
/// Names: in a `.env` file, a setting is named by its environment variable (`SERVER_CONFIG_PORT`, after the
/// overrides' prefix, see ``ConfigOverrides``); in a directory, by a file named after its environment variable
/// or after its key (`com.example.ServerConfig.port`; the key's file wins when both exist), entries whose names
/// start with `..` (the kubelet's) ignored; in a JSON file, by its key (a settings file, as ``JSONFileStore``
/// writes) or by its config and property name (a settings document, as ``ConfigDocument`` writes).
///
/// Sources are live: a change to the files reaches the settings as an ordinary change, however the files were
/// changed (written in place, replaced by a rename, or swapped as the kubelet swaps a ConfigMap). See
/// Docs/ServerConfiguration.md.
///
/// One source is not a file: the managed app configuration an MDM server pushes,
/// ``managedAppConfiguration(_:)``, declared as ``ConfigSources/managed`` and read above every other layer.
public struct ConfigSource: Sendable, Hashable, CustomStringConvertible {
    /// How a source's files are read.
    public enum Format: String, Sendable, Hashable {
        /// A `.env` file, in Docker Compose's `env_file` syntax.
        case dotEnv
        /// A directory of one file per setting, each holding the value as `assign(parsing:)` reads it.
        case directory
        /// A JSON file: a settings document (its `"format"` member says so) or a settings file (keys to values).
        case json
        /// The managed app configuration an administrator pushes, in `UserDefaults`: see
        /// ``ConfigSource/managedAppConfiguration(_:)``.
        case managedAppConfiguration
        /// Values that a ``ConfigProvider`` gives: see ``ConfigSource/provider(_:secret:)``.
        case provider
    }

    /// How the source is read.
    public let format: Format
    /// The path of the file or directory, absolute (a relative path is taken from the current directory when the
    /// source is made).
    public let path: String
    /// Whether a missing file or directory is an empty source until it appears, rather than an error.
    public let isOptional: Bool
    /// Whether every value it gives is secret: never shown in reports, descriptions or listings.
    public let isSecret: Bool
    /// For the managed app configuration, the defaults it is read from (`nil`: `UserDefaults.standard`).
    let managedDefaults: ManagedDefaults?
    /// For a provider's source, the provider.
    let provider: ProviderReference?

    /// A source read as `format` from `path`.
    public init(format: Format, path: String, optional: Bool = false, secret: Bool = false) {
        self.format = format
        self.path = format == .managedAppConfiguration || format == .provider ? path : Self.absolute(path)
        self.isOptional = optional
        self.isSecret = secret
        managedDefaults = nil
        provider = nil
    }

    /// The managed app configuration of `defaults`.
    init(managedIn defaults: ManagedDefaults?) {
        format = .managedAppConfiguration
        path = ManagedDefaults.key
        isOptional = true
        isSecret = false
        managedDefaults = defaults
        provider = nil
    }

    /// The source of `provider`'s values.
    init(provider: ProviderReference, secret: Bool) {
        format = .provider
        path = provider.provider.providerName
        isOptional = true
        isSecret = secret
        managedDefaults = nil
        self.provider = provider
    }

    /// A `.env` file: `SERVER_CONFIG_PORT=8080` lines, in Docker Compose's `env_file` syntax. A variable set in
    /// the process's real environment beats the file's line, as with Docker Compose.
    public static func dotEnv(_ path: String, optional: Bool = false, secret: Bool = false) -> ConfigSource {
        ConfigSource(format: .dotEnv, path: path, optional: optional, secret: secret)
    }

    /// A directory of one file per setting: a Kubernetes ConfigMap or Secret volume, `/run/secrets`.
    public static func directory(_ path: String, optional: Bool = false, secret: Bool = false) -> ConfigSource {
        ConfigSource(format: .directory, path: path, optional: optional, secret: secret)
    }

    /// A JSON file: a settings document, as ``ConfigDocument`` writes it, or a settings file of keys and values.
    public static func jsonFile(_ path: String, optional: Bool = false, secret: Bool = false) -> ConfigSource {
        ConfigSource(format: .json, path: path, optional: optional, secret: secret)
    }

    /// A source read by what `path` is: a directory, a `.env` file (a name that ends in `.env`), or else a JSON
    /// file. A path that does not exist is taken as a directory unless its name says otherwise.
    public static func file(atPath path: String, optional: Bool = false, secret: Bool = false) -> ConfigSource {
        let name = (path as NSString).lastPathComponent
        if name == ".env" || name.hasSuffix(".env") { return .dotEnv(path, optional: optional, secret: secret) }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        let isJSON = exists ? !isDirectory.boolValue : name.hasSuffix(".json")
        return isJSON
            ? .jsonFile(path, optional: optional, secret: secret) : .directory(path, optional: optional, secret: secret)
    }

    /// `directory /etc/app/config`, `.env file /srv/app/.env`, `JSON file /etc/app/config.json`.
    public var description: String {
        switch format {
        case .dotEnv: ".env file \(path)"
        case .directory: "directory \(path)"
        case .json: "JSON file \(path)"
        case .managedAppConfiguration: "managed app configuration"
        case .provider: path
        }
    }

    /// `path` made absolute from the current directory, with `.` and `..` taken out by text alone: a symbolic link
    /// on the way is never resolved here, so that one the kubelet re-points (`..data`) is followed at each
    /// reading.
    private static func absolute(_ path: String) -> String {
        guard !path.isEmpty else { return path }
        let joined = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in joined.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}

/// The sources that configs read besides their store: the managed app configuration, above everything, and the
/// file sources above and below the store. See ``ConfigSource``.
///
/// ```swift
/// StorableConfig.defaultSources = ConfigSources(belowStore: [.jsonFile("/etc/app/config.json")])
/// StorableConfig.defaultSources = ConfigSources(managed: .managedAppConfiguration())  // an app an MDM manages
/// ```
public struct ConfigSources: Sendable, Hashable {
    /// The managed app configuration (``ConfigSource/managedAppConfiguration(_:)``), or `nil` for none: the
    /// highest layer, above launch arguments and environment variables.
    public var managed: ConfigSource?
    /// Sources that win over stored values, highest first (below launch arguments and environment variables).
    public var aboveStore: [ConfigSource]
    /// Sources that replace the declared default when nothing is stored, highest first.
    public var belowStore: [ConfigSource]

    /// The managed app configuration, if any, and sources above and below the store, each list highest first.
    public init(managed: ConfigSource? = nil, aboveStore: [ConfigSource] = [], belowStore: [ConfigSource] = []) {
        self.managed = managed
        self.aboveStore = aboveStore
        self.belowStore = belowStore
    }

    /// No sources: the default.
    public static let none = ConfigSources()

    /// Whether there is no source.
    public var isEmpty: Bool { managed == nil && aboveStore.isEmpty && belowStore.isEmpty }

    /// Every source, highest first: the managed app configuration, those above the store, then those below.
    var all: [ConfigSource] { (managed.map { [$0] } ?? []) + aboveStore + belowStore }
}
