/// What a setting's declaration says about its keys: an explicit key, and the names and keys it had before.
struct DeclaredKeys: Sendable {
    /// The key given with `@Setting(key:)`, stored as it is, without namespace or config name.
    var key: String?
    /// Earlier property names of the setting in its config.
    var previousNames: [String] = []
    /// Earlier full keys, in the order written.
    var previousKeys: [String] = []

    static let derived = DeclaredKeys(key: nil)

    var isDerived: Bool { key == nil && previousNames.isEmpty && previousKeys.isEmpty }

    /// The keys the setting may have held its value under before, in the order they are searched: its
    /// previous keys as written, then every combination of namespace, config name and property name (each the
    /// current one first, then the previous ones), except `current`. A setting with an explicit key has only
    /// its previous keys.
    func earlierKeys(name: String, in parts: ConfigKeyParts, current: String) -> [String] {
        // Nothing earlier to search, as for most settings: the only combination would be the current key.
        if previousKeys.isEmpty, key != nil || (previousNames.isEmpty && !parts.hasPreviousNames) { return [] }
        var keys = previousKeys
        if key == nil {
            let names = [name] + previousNames
            keys += parts.namespaces.flatMap { namespace in
                parts.configNames.flatMap { configName in names.map { "\(namespace).\(configName).\($0)" } }
            }
        }
        var seen: Set<String> = [current]
        return keys.filter { seen.insert($0).inserted }
    }
}

/// The parts of a config class's keys, read from its class properties once per class rather than once per
/// setting: its namespace and config name, and the earlier ones.
struct ConfigKeyParts {
    /// `"<namespace>.<configName>."`, which a derived key starts with.
    let prefix: String
    /// The namespace, then the previous namespaces.
    let namespaces: [String]
    /// The config name, then the previous config names.
    let configNames: [String]

    init(_ type: StorableConfig.Type) {
        let namespace = type.namespace
        let configName = type.configName
        prefix = "\(namespace).\(configName)."
        namespaces = [namespace] + type.previousNamespaces
        configNames = [configName] + type.previousConfigNames
    }

    /// Whether the class had another namespace or config name before.
    var hasPreviousNames: Bool { namespaces.count > 1 || configNames.count > 1 }
}
