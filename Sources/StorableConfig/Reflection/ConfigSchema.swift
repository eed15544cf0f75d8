/// What reflection found in a config class: its settings' names and keys, validated once per class.
final class ConfigSchema: Sendable {
    let names: [String]
    let keys: [String]
    let indexByKey: [String: Int]
    /// Made once per class: a key path with an index argument is an allocation.
    // Key paths are immutable; the standard library does not declare them Sendable.
    nonisolated(unsafe) let observationKeyPaths: [KeyPath<ConfigContext, Int>]

    static let empty = ConfigSchema(names: [], keys: [])

    private init(names: [String], keys: [String]) {
        self.names = names
        self.keys = keys
        var indexByKey: [String: Int] = [:]
        for (index, key) in keys.enumerated() { indexByKey[key] = index }
        self.indexByKey = indexByKey
        observationKeyPaths = keys.indices.map { \ConfigContext.[observed: ObservedSetting(index: $0)] }
    }

    private static let cache = Locked<[ObjectIdentifier: ConfigSchema]>([:])

    /// Returns the schema of `type`, building and validating it the first time the class is used.
    /// - Throws: ``StorableConfigError/invalidDeclaration(className:property:reason:)`` for two settings with
    ///   one key or a setting whose declared default cannot be stored and read back.
    /// The schema of `type`, if an instance was created before.
    static func cached(for type: StorableConfig.Type) -> ConfigSchema? {
        cache.withLock { $0[ObjectIdentifier(type)] }
    }

    /// For each setting in schema order, its position among the settings a new instance registers (see
    /// ``SettingRegistration``); `nil` if registration cannot be trusted for this class.
    private(set) var registrationOrder: [Int]? {
        get { registrationOrderStorage.withLock { $0 } }
        set { registrationOrderStorage.withLock { $0 = newValue } }
    }
    private let registrationOrderStorage = Locked<[Int]?>(nil)

    /// Records how the settings registered by the first instance map to the schema, if they are exactly
    /// the settings reflection found.
    func learnRegistrationOrder(registered: [any SettingBox], reflected: [ReflectedSetting]) {
        guard registered.count == reflected.count else { return }
        var order: [Int] = []
        for setting in reflected {
            guard let position = registered.firstIndex(where: { $0 === setting.setting }) else { return }
            order.append(position)
        }
        registrationOrder = order
    }

    static func schema(for type: StorableConfig.Type, settings: [ReflectedSetting]) throws -> ConfigSchema {
        let identifier = ObjectIdentifier(type)
        if let cached = cache.withLock({ $0[identifier] }), cached.names.elementsEqual(settings.map(\.name)) {
            return cached
        }
        let className = String(describing: type)
        let prefix = "\(type.namespace).\(type.configName)."
        var keys: [String] = []
        var declarerByKey: [String: ReflectedSetting] = [:]
        for reflected in settings {
            let key = prefix + reflected.name
            if let earlier = declarerByKey[key] {
                throw StorableConfigError.invalidDeclaration(
                    className: className, property: reflected.name,
                    reason: "its key '\(key)' is already the key of the setting '\(earlier.name)' declared in "
                        + "\(earlier.declaringClass); rename one of them, since one key can hold only one value")
            }
            if let problem = reflected.setting.declarationProblem() {
                throw StorableConfigError.invalidDeclaration(
                    className: className, property: reflected.name, reason: problem)
            }
            declarerByKey[key] = reflected
            keys.append(key)
        }
        let schema = ConfigSchema(names: settings.map(\.name), keys: keys)
        cache.withLock { $0[identifier] = schema }
        return schema
    }
}
