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

    /// The key of the property `name` of a config of `type`.
    func currentKey(name: String, of type: StorableConfig.Type) -> String {
        key ?? "\(type.namespace).\(type.configName).\(name)"
    }

    /// The keys the setting may have held its value under before, in the order they are searched: its
    /// previous keys as written, then every combination of namespace, config name and property name (each the
    /// current one first, then the previous ones), except `current`. A setting with an explicit key has only
    /// its previous keys.
    func earlierKeys(name: String, of type: StorableConfig.Type, current: String) -> [String] {
        var keys = previousKeys
        if key == nil {
            let namespaces = [type.namespace] + type.previousNamespaces
            let configNames = [type.configName] + type.previousConfigNames
            let names = [name] + previousNames
            for namespace in namespaces {
                for configName in configNames {
                    for name in names { keys.append("\(namespace).\(configName).\(name)") }
                }
            }
        }
        var seen: Set<String> = [current]
        return keys.filter { seen.insert($0).inserted }
    }
}
