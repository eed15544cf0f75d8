/// The change feed of one storage within this process.
///
/// Every write to the storage goes through its hub, which numbers it and then hands it to every other config
/// bound to the storage, so that two configs over one store see each other's writes at once. Settings ignore
/// a delivery older than the value they hold, which makes concurrent writers converge on the value the
/// store applied last.
///
/// No lock of the hub is held while it calls the store, so a store, a `UserDefaults` notification handler or
/// a key-value observer that writes, reads or reloads settings from inside a write works (see "Locks" in
/// Docs/Design.md). Without a lock around the store call, the hub cannot know in which order the store applied
/// two writes that overlapped; so a write that overlapped another store call (or an outside change) is
/// followed by a fresh read of its keys from the store by every config, numbered after both: whichever write
/// the store applied last, every config ends up reading it. A write that overlapped nothing, the usual case,
/// hands its value to the other configs directly.
final class StoreHub: @unchecked Sendable {
    /// The version counter, the store calls under way and the configs to tell; held only to number a write
    /// or an outside change and to list the receivers, never across a store call or while anyone is told.
    private let feed = Locked(Feed())
    /// Kept alive so that its identity, the registry's key, cannot be reused while the hub exists.
    private let identity: AnyObject

    private struct Feed {
        var version: UInt64 = 0
        var receivers: [Receiver] = []
        /// How many receivers' classes declare earlier keys.
        var withEarlierKeys = 0
        /// Store calls under way (writes and updates).
        var storeCallsInFlight = 0
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
        // The hubs found alive while pruning are released after the lock: a reference loaded from a weak one
        // may be the last, and a hub's deinit releases its store, whose deinit is not ours to run under a lock.
        var alive: [StoreHub] = []
        let hub = registry.withLock { hubs -> StoreHub in
            if let hub = hubs[key]?.hub, hub.identity === identity { return hub }
            hubs = hubs.filter { entry in
                guard let hub = entry.value.hub else { return false }
                alive.append(hub)
                return true
            }
            let hub = StoreHub(identity: identity)
            hubs[key] = WeakHub(hub: hub)
            return hub
        }
        withExtendedLifetime(alive) {}
        return hub
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
    ///
    /// Called from a config's `deinit`. Removes only that config's entry, loading no weak reference: a
    /// reference loaded under the lock could be another thread's config's last, and releasing it there would run
    /// that config's `deinit`, and so this method, on this thread with the lock held. Every config detaches
    /// itself, so no entry outlives its config.
    func detach(_ context: ConfigContext) {
        let identifier = ObjectIdentifier(context)
        feed.withLock { feed in
            guard let index = feed.receivers.firstIndex(where: { $0.context == identifier }) else { return }
            if feed.receivers[index].hasEarlierKeys { feed.withEarlierKeys -= 1 }
            feed.receivers.remove(at: index)
        }
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
        let start = beginStoreCall()
        let (version, certain) = OutsideLocks.deferring {
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
            return numberWrite(from: origin, startedAt: start, targets: &targets)
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
        if !certain { storageChanged(keys: Set(changes.map(\.key))) }
        return version
    }

    /// ``write(_:to:from:)`` for one change, the path of every assignment outside a batch: no collection of
    /// changes, and the typed value is boxed for the other configs only when there are any.
    func writeOne<Typed: Sendable>(
        key: String, stored: StoredValue?, typedValue: Typed, to store: any ConfigStore, from origin: ObjectIdentifier
    ) -> UInt64 {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        let start = beginStoreCall()
        let (version, certain) = OutsideLocks.deferring {
            do {
                if let stored {
                    try store.setValue(stored, forKey: key)
                } else {
                    try store.removeValue(forKey: key)
                }
            } catch {
                failure = error
            }
            return numberWrite(from: origin, startedAt: start, targets: &targets)
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
        if !certain { storageChanged(keys: [key]) }
        return version
    }

    /// Counts a store call that is about to start, and returns the version it starts from.
    private func beginStoreCall() -> UInt64 {
        feed.withLock { feed in
            feed.storeCallsInFlight += 1
            return feed.version
        }
    }

    /// Gives a write that the store just applied its version, and lists the other configs to tell. `certain` is
    /// false when another store call was under way, or another change was numbered, since the write began:
    /// the store may then have applied the two in either order, and the caller has every config read the keys
    /// again.
    private func numberWrite(
        from origin: ObjectIdentifier, startedAt start: UInt64, targets: inout [StorableConfig]
    ) -> (version: UInt64, certain: Bool) {
        feed.withLock { feed in
            feed.storeCallsInFlight -= 1
            let certain = feed.version == start && feed.storeCallsInFlight == 0
            feed.version &+= 1
            // The usual case, one config on the storage and it is the writer, needs no weak loads (nor a copy
            // of the list). The references loaded are released by the caller, after the lock.
            if feed.receivers.count == 1, feed.receivers[0].context == origin { return (feed.version, certain) }
            for receiver in feed.receivers where receiver.context != origin {
                if let config = receiver.config { targets.append(config) }
            }
            return (feed.version, certain)
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
        let start = beginStoreCall()
        let (version, certain) = try OutsideLocks.deferring {
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
                if let transformFailure {
                    feed.withLock { $0.storeCallsInFlight -= 1 }
                    throw transformFailure
                }
                // The store failed: it holds what it held, or the change in memory; read that.
                failure = error
                updated = (try? store.values(forKeys: keys)) ?? [:]
            }
            return numberWrite(from: origin, startedAt: start, targets: &targets)
        }
        if let failure {
            for key in keys { StorableConfig.report(.writeFailed(key: key, reason: "\(failure)")) }
        }
        for target in targets {
            for key in keys {
                target.receive(key: key, stored: updated[key], typedValue: nil, version: version)
            }
        }
        if !certain { storageChanged(keys: Set(keys)) }
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
