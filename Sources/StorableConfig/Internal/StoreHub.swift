/// One config instance's connection to its store and to the other configs bound to the same storage.
final class ConfigContext: Sendable {
    let store: any ConfigStore
    let hub: StoreHub

    init(store: any ConfigStore) {
        self.store = store
        hub = StoreHub.hub(for: store)
    }

    /// Writes `changes` (a `nil` stored value removes the key) and returns the version they were given.
    func write(_ changes: [(key: String, stored: StoredValue?, typedValue: (any Sendable)?)]) -> UInt64 {
        hub.write(changes, to: store, from: ObjectIdentifier(self))
    }
}

/// The change feed of one storage within this process.
///
/// Every write to the storage goes through its hub, which numbers it and then hands it to every other config
/// bound to the storage, so that two configs over one store see each other's writes at once. Settings ignore
/// a delivery older than the value they hold, which makes concurrent writers converge on the value the
/// store applied last.
final class StoreHub: @unchecked Sendable {
    // `version` and `receivers` are guarded by `lock`. The lock is held while the store applies a write, so
    // versions follow the order in which the store applied the writes, and released before anyone is told.
    private let lock = Lock()
    private var version: UInt64 = 0
    private var receivers: [Receiver] = []
    /// Kept alive so that its identity, the registry's key, cannot be reused while the hub exists.
    private let identity: AnyObject

    private struct Receiver {
        weak var config: StorableConfig?
        let context: ObjectIdentifier
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
        let identity = store.storageIdentity
        let key = ObjectIdentifier(identity)
        return registry.withLock { hubs in
            if let hub = hubs[key]?.hub, hub.identity === identity { return hub }
            hubs = hubs.filter { $0.value.hub != nil }
            let hub = StoreHub(identity: identity)
            hubs[key] = WeakHub(hub: hub)
            return hub
        }
    }

    /// Registers `config` for deliveries and returns the version its initial load must be tagged with.
    func attach(_ config: StorableConfig, context: ConfigContext) -> UInt64 {
        lock.withLock {
            receivers.append(Receiver(config: config, context: ObjectIdentifier(context)))
            return version
        }
    }

    /// Stops deliveries to the config that owns `context`.
    func detach(_ context: ConfigContext) {
        let identifier = ObjectIdentifier(context)
        lock.withLock { receivers.removeAll { $0.context == identifier || $0.config == nil } }
    }

    /// Applies `changes` to `store`, then tells every other config bound to the storage.
    ///
    /// A store that fails keeps its old value; the failure is reported, and the new value is still
    /// delivered, so that every config in the process reads what was assigned.
    func write(
        _ changes: [(key: String, stored: StoredValue?, typedValue: (any Sendable)?)], to store: any ConfigStore,
        from origin: ObjectIdentifier
    ) -> UInt64 {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        lock.lock()
        do {
            if changes.count == 1, let change = changes.first {
                if let stored = change.stored {
                    try store.setValue(stored, forKey: change.key)
                } else {
                    try store.removeValue(forKey: change.key)
                }
            } else if !changes.isEmpty {
                var batch: [String: StoredValue?] = [:]
                for change in changes { batch[change.key] = .some(change.stored) }
                try store.apply(batch)
            }
        } catch {
            failure = error
        }
        version &+= 1
        let version = self.version
        for receiver in receivers where receiver.context != origin {
            if let config = receiver.config { targets.append(config) }
        }
        lock.unlock()

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

    /// Reloads `store` and has every config bound to the storage read its settings again.
    func reload(_ store: any ConfigStore) throws {
        let version: UInt64
        var targets: [StorableConfig] = []
        lock.lock()
        do {
            try store.reload()
        } catch {
            lock.unlock()
            throw StorableConfigError.reloadFailed(store: "\(store)", reason: "\(error)")
        }
        self.version &+= 1
        version = self.version
        for receiver in receivers {
            if let config = receiver.config { targets.append(config) }
        }
        lock.unlock()
        for target in targets {
            target.loadSettings(version: version)
        }
    }
}
