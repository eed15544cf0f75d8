/// The change feed of one storage within this process.
///
/// Every write to the storage goes through its hub, which numbers it and then hands it to every other config
/// bound to the storage, so that two configs over one store see each other's writes at once. Settings ignore
/// a delivery older than the value they hold, which makes concurrent writers converge on the value the
/// store applied last.
final class StoreHub: @unchecked Sendable {
    /// Orders the writes to the storage: held while the store applies one, so that versions follow the order
    /// in which the store applied them. Never held while anyone is told of a change.
    private let writeLock = Lock()
    /// The version counter and the configs to tell; held only to number a write or an outside change and to
    /// list the receivers, never across a store call, so a slow store (a network round trip) delays other
    /// writers only: reads, outside changes and deliveries go on.
    private let feed = Locked(Feed())
    /// Kept alive so that its identity, the registry's key, cannot be reused while the hub exists.
    private let identity: AnyObject

    private struct Feed {
        var version: UInt64 = 0
        var receivers: [Receiver] = []
        /// How many receivers' classes declare earlier keys.
        var withEarlierKeys = 0
    }

    private struct Receiver {
        weak var config: StorableConfig?
        let context: ObjectIdentifier
        let hasEarlierKeys: Bool
    }

    private struct WeakHub {
        weak var hub: StoreHub?
    }

    private static let registry = Locked<[ObjectIdentifier: WeakHub]>([:])

    private init(identity: AnyObject) {
        self.identity = identity
    }

    /// Returns the hub of the storage that `store` uses, creating it if no live config uses that storage.
    static func hub(for store: any ConfigStore) -> StoreHub {
        let identity = (store as? any SharedConfigStore)?.storageIdentity ?? store
        let key = ObjectIdentifier(identity)
        return registry.withLock { hubs in
            if let hub = hubs[key]?.hub, hub.identity === identity { return hub }
            hubs = hubs.filter { $0.value.hub != nil }
            let hub = StoreHub(identity: identity)
            hubs[key] = WeakHub(hub: hub)
            return hub
        }
    }

    /// Returns the hub of the storage whose identity is `identity`, if a live config uses it.
    static func existingHub(for identity: AnyObject) -> StoreHub? {
        registry.withLock { hubs in
            guard let hub = hubs[ObjectIdentifier(identity)]?.hub, hub.identity === identity else { return nil }
            return hub
        }
    }

    /// Has every config bound to the storage read `keys` again: someone outside changed them. Inside the
    /// framework's locks (a store reporting from within a write), it happens when the locks are released.
    func storageChanged(keys: Set<String>) {
        guard !keys.isEmpty else { return }
        OutsideLocks.run { [self] in
            let (version, targets) = numberOutsideChange()
            for target in targets {
                target.loadSettings(version: version, onlyKeys: keys)
            }
        }
    }

    /// The schemas of the configs bound to the storage, when `schema` or one of theirs declares earlier keys
    /// (the only case in which they can conflict); otherwise none, without looking at each.
    func schemasToCheck(against schema: ConfigSchema) -> [ConfigSchema] {
        let configs = feed.withLock { feed -> [StorableConfig] in
            guard schema.hasEarlierKeys || feed.withEarlierKeys > 0 else { return [] }
            return feed.receivers.compactMap(\.config)
        }
        return configs.map(\.schema)
    }

    /// Registers `config` for deliveries and returns the version its initial load must be tagged with.
    func attach(_ config: StorableConfig, context: ConfigContext) -> UInt64 {
        feed.withLock { feed in
            let hasEarlierKeys = config.schema.hasEarlierKeys
            feed.receivers.append(
                Receiver(config: config, context: ObjectIdentifier(context), hasEarlierKeys: hasEarlierKeys))
            if hasEarlierKeys { feed.withEarlierKeys += 1 }
            return feed.version
        }
    }

    /// Stops deliveries to the config that owns `context`.
    func detach(_ context: ConfigContext) {
        let identifier = ObjectIdentifier(context)
        let removed = feed.withLock { feed in
            let before = feed.receivers
            feed.receivers.removeAll { $0.context == identifier || $0.config == nil }
            feed.withEarlierKeys = feed.receivers.count { $0.hasEarlierKeys }
            return before
        }
        withExtendedLifetime(removed) {}
    }

    /// Applies `changes` to `store`, then tells every other config bound to the storage.
    ///
    /// A store that fails keeps its old value; the failure is reported, and the new value is still
    /// delivered, so that every config in the process reads what was assigned.
    func write<Changes: Collection<SettingChange>>(
        _ changes: Changes, to store: any ConfigStore, from origin: ObjectIdentifier
    ) -> UInt64 {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        let version = OutsideLocks.deferring {
            writeLock.lock()
            defer { writeLock.unlock() }
            do {
                if changes.count == 1, let change = changes.first {
                    if let stored = change.stored {
                        try store.setValue(stored, forKey: change.key)
                    } else {
                        try store.removeValue(forKey: change.key)
                    }
                } else if !changes.isEmpty {
                    var values: [String: StoredValue] = [:]
                    var removed: [String] = []
                    for change in changes {
                        if let stored = change.stored {
                            values[change.key] = stored
                        } else {
                            removed.append(change.key)
                        }
                    }
                    try store.setValues(values, removingValuesForKeys: removed)
                }
            } catch {
                failure = error
            }
            return numberWrite(from: origin, targets: &targets)
        }
        if let failure {
            for change in changes {
                StorableConfig.report(.writeFailed(key: change.key, reason: "\(failure)"))
            }
        }
        for target in targets {
            for change in changes {
                target.receive(key: change.key, stored: change.stored, typedValue: change.typedValue, version: version)
            }
        }
        return version
    }

    /// ``write(_:to:from:)`` for one change, the path of every assignment outside a batch: no collection of
    /// changes, and the typed value is boxed for the other configs only when there are any.
    func writeOne<Typed: Sendable>(
        key: String, stored: StoredValue?, typedValue: Typed, to store: any ConfigStore, from origin: ObjectIdentifier
    ) -> UInt64 {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        let version = OutsideLocks.deferring {
            writeLock.lock()
            defer { writeLock.unlock() }
            do {
                if let stored {
                    try store.setValue(stored, forKey: key)
                } else {
                    try store.removeValue(forKey: key)
                }
            } catch {
                failure = error
            }
            return numberWrite(from: origin, targets: &targets)
        }
        if let failure {
            StorableConfig.report(.writeFailed(key: key, reason: "\(failure)"))
        }
        if !targets.isEmpty {
            let typed: any Sendable = typedValue
            for target in targets {
                target.receive(key: key, stored: stored, typedValue: typed, version: version)
            }
        }
        return version
    }

    /// Gives a write that the store just applied its version, and lists the other configs to tell. Called with
    /// `writeLock` held.
    private func numberWrite(from origin: ObjectIdentifier, targets: inout [StorableConfig]) -> UInt64 {
        feed.withLock { feed in
            feed.version &+= 1
            // The usual case, one config on the storage and it is the writer, needs no weak loads (nor a copy
            // of the list).
            if feed.receivers.count == 1, feed.receivers[0].context == origin { return feed.version }
            for receiver in feed.receivers where receiver.context != origin {
                if let config = receiver.config { targets.append(config) }
            }
            return feed.version
        }
    }

    /// Gives a change made outside the process, or a reload, its version, and lists every config to tell.
    private func numberOutsideChange() -> (version: UInt64, targets: [StorableConfig]) {
        feed.withLock { feed in
            feed.version &+= 1
            return (feed.version, feed.receivers.compactMap(\.config))
        }
    }

    /// Replaces the values of `keys` by `transform` of their values in `store`, as one
    /// ``ConfigStore/updateValues(forKeys:_:)``, then tells every other config bound to the storage, as
    /// ``write(_:to:from:)`` does.
    ///
    /// - Returns: The version of the write, the values of `keys` after it, and whether the store failed to
    ///   write them (the values are then what the store holds).
    /// - Throws: What `transform` throws; nothing is then changed.
    func update(
        keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void, in store: any ConfigStore,
        from origin: ObjectIdentifier
    ) throws -> (version: UInt64, values: [String: StoredValue], failed: Bool) {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        var updated: [String: StoredValue] = [:]
        var transformFailure: (any Error)?
        let version = try OutsideLocks.deferring {
            writeLock.lock()
            defer { writeLock.unlock() }
            do {
                updated = try store.updateValues(forKeys: keys) { values in
                    do {
                        try transform(&values)
                    } catch {
                        transformFailure = error
                        throw error
                    }
                }
            } catch {
                // The caller's transform refused: nothing changed, nobody is told.
                if let transformFailure { throw transformFailure }
                // The store failed: it holds what it held, or the change in memory; read that.
                failure = error
                updated = (try? store.values(forKeys: keys)) ?? [:]
            }
            return numberWrite(from: origin, targets: &targets)
        }
        if let failure {
            for key in keys { StorableConfig.report(.writeFailed(key: key, reason: "\(failure)")) }
        }
        for target in targets {
            for key in keys {
                target.receive(key: key, stored: updated[key], typedValue: nil, version: version)
            }
        }
        return (version, updated, failure != nil)
    }

    /// Replaces the value of `key` by `transform` of its value in `store`: ``update(keys:_:in:from:)`` for one
    /// key.
    func update(
        key: String, _ transform: (StoredValue?) throws -> StoredValue?, in store: any ConfigStore,
        from origin: ObjectIdentifier
    ) throws -> (version: UInt64, value: StoredValue?, failed: Bool) {
        let result = try update(
            keys: [key], { values in values[key] = try transform(values[key]) }, in: store, from: origin)
        return (result.version, result.values[key], result.failed)
    }

    /// Reloads `store` and has every config bound to the storage read its settings again.
    func reload(_ store: any ConfigStore) throws {
        let (version, targets) = try OutsideLocks.deferring {
            writeLock.lock()
            defer { writeLock.unlock() }
            do {
                try store.reload()
            } catch {
                throw StorableConfigError.reloadFailed(store: "\(store)", reason: "\(error)")
            }
            return numberOutsideChange()
        }
        for target in targets {
            target.loadSettings(version: version)
        }
    }
}
