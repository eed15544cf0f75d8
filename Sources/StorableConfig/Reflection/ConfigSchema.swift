/// What reflection found in a config class: its settings' names and keys, validated once per class.
final class ConfigSchema: Sendable {
    let className: String
    let names: [String]
    let keys: [String]
    /// For each setting, the keys its value may have been stored under before, in search order.
    let earlierKeys: [[String]]
    /// Whether some setting has earlier keys.
    let hasEarlierKeys: Bool
    /// The keys of the settings declared secret, and their earlier keys (a renamed secret is found where the
    /// secret store keeps it), whose values a store may keep in a secret store.
    let secretKeys: [String]
    let indexByKey: [String: Int]
    /// Shared by every class with as many settings or more (see ``ObservedSetting/keyPaths(count:)``).
    // Key paths are immutable; the standard library does not declare them Sendable.
    nonisolated(unsafe) let observationKeyPaths: [KeyPath<ConfigContext, Int>]
    /// For each setting, its value type's traits, as its first instance found them.
    let traits: [SchemaTraits?]

    static let empty = ConfigSchema(
        className: "", names: [], keys: [], earlierKeys: [], secretKeys: [], traits: [])

    private init(
        className: String, names: [String], keys: [String], earlierKeys: [[String]], secretKeys: [String],
        traits: [SchemaTraits?]
    ) {
        self.className = className
        self.names = names
        self.keys = keys
        self.earlierKeys = earlierKeys
        self.secretKeys = secretKeys
        self.traits = traits
        hasEarlierKeys = earlierKeys.contains { !$0.isEmpty }
        // Sized once: growing a dictionary to 100 entries rehashes it eight times.
        var indexByKey = [String: Int](minimumCapacity: keys.count)
        for (index, key) in keys.enumerated() { indexByKey[key] = index }
        self.indexByKey = indexByKey
        observationKeyPaths = ObservedSetting.keyPaths(count: keys.count)
    }

    private static let cache = Locked<[ObjectIdentifier: ConfigSchema]>([:])

    /// Returns the schema of `type`, whose settings reflection found to be `settings`, building and validating
    /// it the first time the class is used.
    /// - Throws: ``StorableConfigError/invalidDeclaration(className:property:reason:)`` for two settings with
    ///   one key or a setting whose declared default cannot be stored and read back.
    static func schema(for type: StorableConfig.Type, settings: [ReflectedSetting]) throws -> ConfigSchema {
        let identifier = ObjectIdentifier(type)
        if let cached = cache.withLock({ $0[identifier] }),
            cached.names.elementsEqual(settings, by: { $1.isNamed($0) })
        {
            return cached
        }
        let className = unqualifiedName(of: type)
        let parts = ConfigKeyParts(type)
        var keys: [String] = []
        keys.reserveCapacity(settings.count)
        var earlierKeys: [[String]] = []
        earlierKeys.reserveCapacity(settings.count)
        var declarerByKey = [String: ReflectedSetting](minimumCapacity: settings.count)
        for reflected in settings {
            let declared = reflected.setting.declaredKeys
            let key = declared.key ?? parts.prefix + reflected.name
            if key.isEmpty {
                throw StorableConfigError.invalidDeclaration(
                    className: className, property: reflected.name, reason: "its explicit key is empty")
            }
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
            earlierKeys.append(declared.earlierKeys(name: reflected.name, in: parts, current: key))
        }
        try checkEarlierKeys(earlierKeys, of: settings, against: declarerByKey, className: className)
        let schema = ConfigSchema(
            className: className, names: settings.map(\.name), keys: keys, earlierKeys: earlierKeys,
            secretKeys: keys.indices.filter { settings[$0].setting.isSecret }.flatMap { [keys[$0]] + earlierKeys[$0] },
            traits: settings.map(\.setting.valueTraits))
        cache.withLock { $0[identifier] = schema }
        return schema
    }

    /// An earlier key that is some setting's current key would move that setting's live value away.
    private static func checkEarlierKeys(
        _ earlierKeys: [[String]], of settings: [ReflectedSetting], against declarerByKey: [String: ReflectedSetting],
        className: String
    ) throws {
        for (reflected, earlier) in zip(settings, earlierKeys) {
            for key in earlier {
                guard let owner = declarerByKey[key] else { continue }
                throw StorableConfigError.invalidDeclaration(
                    className: className, property: reflected.name,
                    reason: "its earlier key '\(key)' is the current key of the setting '\(owner.name)' declared in "
                        + "\(owner.declaringClass); moving values from it would take that setting's value away")
            }
        }
    }
}

/// A setting's ``ValueTraits``, with the value type they are for, as a class's schema keeps them.
struct SchemaTraits: @unchecked Sendable {
    /// `ObjectIdentifier` of the value type.
    let valueType: ObjectIdentifier
    /// A `ValueTraits<Value>`, immutable and shared.
    let traits: AnyObject
}
