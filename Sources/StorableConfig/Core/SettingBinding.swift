#if canImport(Observation)
    import Observation
#endif

/// Where a setting belongs: its config's context, its position in the class's schema, and so its name, key
/// and Observation key path. Immutable.
final class SettingBinding: @unchecked Sendable {
    let context: ConfigContext
    let schema: ConfigSchema
    let index: Int
    // Immutable; the standard library does not declare key paths Sendable.
    let observationKeyPath: KeyPath<ConfigContext, Int>

    init(context: ConfigContext, schema: ConfigSchema, index: Int) {
        self.context = context
        self.schema = schema
        self.index = index
        observationKeyPath = schema.observationKeyPaths[index]
        key = schema.keys[index]
        #if canImport(Observation) && !canImport(Darwin)
            registrar = context.registrar
        #endif
    }

    var name: String { schema.names[index] }
    /// Read on every write: stored, so that the write borrows it instead of retaining an element of the schema's
    /// array.
    let key: String

    /// Tells the Observation framework that the setting was read.
    func recordAccess() {
        #if canImport(Observation) && !canImport(Darwin)
            // No availability to check off Apple platforms: call the registrar directly, with everything borrowed
            // from this immutable binding, which saves the reference counting of the general path.
            registrar.access(context, keyPath: observationKeyPath)
        #else
            context.observationAccess(observationKeyPath)
        #endif
    }

    #if canImport(Observation) && !canImport(Darwin)
        let registrar: ObservationRegistrar
    #endif

    func observationDidChange() {
        #if canImport(Observation) && !canImport(Darwin)
            registrar.willSet(context, keyPath: observationKeyPath)
            registrar.didSet(context, keyPath: observationKeyPath)
        #else
            context.observationDidChange(observationKeyPath)
        #endif
    }

    /// Tells the config-wide observers (``StorableConfig/changes``) that the setting changed.
    func tellChangeObservers(old: any Sendable, new: any Sendable, isSecret: Bool) {
        context.tellChangeObservers(
            ConfigChange(
                name: name, key: key, oldValue: old, newValue: new, isSecret: isSecret,
                origin: context.store.origin(forKey: context.hub.storeKey(key))))
    }
}
