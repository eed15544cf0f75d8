/// Who hears of a change: the live configs on the storage, grouped by class and indexed by key, so that a change
/// reaches only the configs that read it, and a config comes and goes in constant time.
extension StoreHub {
    struct Receiver {
        weak var config: StorableConfig?
    }

    /// The live configs of one class (one schema) on this storage. Guarded by the hub's `feed` lock, as is the
    /// writer's `ConfigContext.receiverGroup` that points at it.
    final class ReceiverGroup: @unchecked Sendable {
        /// Kept so that its identity, the group's key, cannot be reused while the group exists.
        let schema: ConfigSchema
        var byContext: [ObjectIdentifier: Receiver] = [:]
        /// For each of the schema's keys, whether another class's configs on this storage read it too. Set when
        /// such a class first attaches, never cleared (groups stay): a write of a key that no other class reads,
        /// by a config alone of its class, reaches nobody, which is found without hashing the key.
        var keyIsShared: [Bool]

        init(schema: ConfigSchema) {
            self.schema = schema
            keyIsShared = Array(repeating: false, count: schema.keys.count)
        }
    }

    /// Registers `config` for deliveries and returns the version its initial load must be tagged with.
    func attach(_ config: StorableConfig, context: ConfigContext) -> UInt64 {
        let schema = config.schema
        return feed.withLock { feed in
            let group = feed.receivers[ObjectIdentifier(schema)] ?? feed.addGroup(of: schema)
            group.byContext[ObjectIdentifier(context)] = Receiver(config: config)
            context.receiverGroup = group
            return feed.version
        }
    }

    /// Stops deliveries to the config that owns `context`, of the class whose schema is `schema`.
    ///
    /// Called from a config's `deinit`, in constant time whatever the number of configs alive. Removes only that
    /// config's entry, loading no weak reference: a reference loaded under the lock could be another thread's
    /// config's last, and releasing it there would run that config's `deinit`, and so this method, on this
    /// thread with the lock held. Every config detaches itself, so no entry outlives its config. The class's
    /// group and its keys in the index stay when its last config goes, as its schema stays in the schemas'
    /// cache: a class whose configs are created and released one at a time indexes its keys once, not at every
    /// config (about a tenth of such a config's life, with 1,000 settings).
    func detach(_ context: ConfigContext, schema: ConfigSchema) {
        let group = ObjectIdentifier(schema)
        feed.withLock { feed in
            _ = feed.receivers[group]?.byContext.removeValue(forKey: ObjectIdentifier(context))
        }
    }
}

extension StoreHub.Feed {
    /// Indexes the keys of a class whose first config attaches, marking those that other classes read too.
    mutating func addGroup(of schema: ConfigSchema) -> StoreHub.ReceiverGroup {
        let group = StoreHub.ReceiverGroup(schema: schema)
        for (index, key) in schema.keys.enumerated() {
            if let others = schemasByKey[key] {
                group.keyIsShared[index] = true
                for other in others.compactMap({ receivers[$0] }) {
                    for (otherIndex, otherKey) in other.schema.keys.enumerated() where otherKey == key {
                        other.keyIsShared[otherIndex] = true
                    }
                }
            }
            schemasByKey[key, default: []].insert(ObjectIdentifier(schema))
        }
        receivers[ObjectIdentifier(schema)] = group
        return group
    }

    /// Whether a write of the key at `index` of the writer's schema reaches nobody but the writer: no other
    /// config of its class is alive, no other class reads the key, and no key is sent to another.
    func reachesOnlyWriter(_ writer: ConfigContext, index: Int) -> Bool {
        guard let group = writer.receiverGroup, aliases.earlierKeys.isEmpty else { return false }
        return group.byContext.count == 1 && !group.keyIsShared[index]
    }

    /// Appends the live configs, except the one whose context is `origin`, that read one of `keys` (store
    /// keys), directly or by an earlier key that aliases send there.
    func collect(
        readersOf keys: some Collection<String>, except origin: ObjectIdentifier?,
        into targets: inout [StorableConfig]
    ) {
        // The usual case, one key that no earlier key is sent to, makes no set.
        if keys.count == 1, let key = keys.first, aliases.earlierKeys[key] == nil {
            for group in schemasByKey[key] ?? [] { collect(group: group, except: origin, into: &targets) }
            return
        }
        var groups: Set<ObjectIdentifier> = []
        for key in keys {
            if let schemas = schemasByKey[key] { groups.formUnion(schemas) }
            for earlier in aliases.earlierKeys[key] ?? [] {
                if let schemas = schemasByKey[earlier] { groups.formUnion(schemas) }
            }
        }
        for group in groups { collect(group: group, except: origin, into: &targets) }
    }

    private func collect(
        group: ObjectIdentifier, except origin: ObjectIdentifier?, into targets: inout [StorableConfig]
    ) {
        guard let byContext = receivers[group]?.byContext else { return }
        // The usual case, the writing config alone, loads no weak reference (and hashes nothing).
        if byContext.count == 1, let origin, byContext.first?.key == origin { return }
        for (context, receiver) in byContext where context != origin {
            if let config = receiver.config { targets.append(config) }
        }
    }
}
