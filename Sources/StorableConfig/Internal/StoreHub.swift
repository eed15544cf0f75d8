#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

import CStorableConfigSupport

/// A change to write: a `nil` stored value removes the key; the typed value spares receivers a decode.
struct SettingChange {
    let key: String
    let stored: StoredValue?
    let typedValue: (any Sendable)?
}

/// One config instance's connection to its store and to the other configs bound to the same storage.
final class ConfigContext: @unchecked Sendable {
    let store: any ConfigStore
    let hub: StoreHub
    private let batches = Locked<[Batch]>([])
    /// An `ObservationSupport` where the Observation framework is available.
    let observation: (any AnyObject & Sendable)? = ConfigContext.makeObservationSupport()
    private let changeObservers = Locked<ChangeObservers>(ChangeObservers())
    // Counters read on every write without a lock: batches in progress on any thread, config-wide
    // observers. Each is changed under the lock of what it counts.
    private let batchCount = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
    private let changeObserverCount = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)

    private struct ChangeObservers {
        var ended = false
        var all: [UInt64: (onChange: @Sendable (ConfigChange) -> Void, onEnd: (@Sendable () -> Void)?)] = [:]
    }

    /// Changes collected by ``StorableConfig/batch(_:)`` on one thread, written when it ends.
    private struct Batch {
        let thread: pthread_t
        var depth = 1
        var entries: [(change: SettingChange, completion: @Sendable (UInt64) -> Void)] = []
    }

    init(store: any ConfigStore) {
        self.store = store
        hub = StoreHub.hub(for: store)
        batchCount.initialize(to: 0)
        changeObserverCount.initialize(to: 0)
    }

    deinit {
        batchCount.deallocate()
        changeObserverCount.deallocate()
    }

    // MARK: Config-wide observers

    var hasChangeObservers: Bool {
        storable_config_atomic_load(changeObserverCount) != 0
    }

    /// Whether the config is gone, so that no observer can be added any more.
    var observationEnded: Bool {
        changeObservers.withLock { $0.ended }
    }

    func addChangeObserver(
        onChange: @escaping @Sendable (ConfigChange) -> Void, onEnd: (@Sendable () -> Void)?
    ) -> UInt64? {
        let identifier = ObservationToken.nextIdentifier()
        let added = changeObservers.withLock { observers -> Bool in
            guard !observers.ended else { return false }
            observers.all[identifier] = (onChange, onEnd)
            storable_config_atomic_add(changeObserverCount, 1)
            return true
        }
        if !added { onEnd?() }
        return added ? identifier : nil
    }

    func removeChangeObserver(_ identifier: UInt64) {
        // Released after the lock, for the reason given in `Setting.removeObserver`.
        let removed = changeObservers.withLock { observers in
            let removed = observers.all.removeValue(forKey: identifier)
            if removed != nil { storable_config_atomic_add(changeObserverCount, -1) }
            return removed
        }
        withExtendedLifetime(removed) {}
    }

    func tellChangeObservers(_ change: ConfigChange) {
        let observers = changeObservers.withLock { Array($0.all.values) }
        for observer in observers { observer.onChange(change) }
    }

    /// Finishes every config-wide observer: the config is going away.
    func endChangeObservation() {
        let ended = changeObservers.withLock { observers in
            observers.ended = true
            storable_config_atomic_add(changeObserverCount, -Int32(observers.all.count))
            defer { observers.all = [:] }
            return Array(observers.all.values)
        }
        for observer in ended { observer.onEnd?() }
    }

    // MARK: Writes

    /// Writes `changes` and returns the version they were given.
    func write(_ changes: [SettingChange]) -> UInt64 {
        hub.write(changes, to: store, from: ObjectIdentifier(self))
    }

    /// Writes one change and returns its version; returns `nil`, writing nothing, inside a batch on this
    /// thread (the caller then hands the change to ``deferToBatch(_:_:)``).
    func writeOne(key: String, stored: StoredValue?, typedValue: (any Sendable)?) -> UInt64? {
        if storable_config_atomic_load(batchCount) != 0, isBatching { return nil }
        return hub.write(
            CollectionOfOne(SettingChange(key: key, stored: stored, typedValue: typedValue)), to: store,
            from: ObjectIdentifier(self))
    }

    /// Keeps a change of this thread's batch, to be written, and then completed, when the batch ends.
    func deferToBatch(_ change: SettingChange, _ completion: @escaping @Sendable (UInt64) -> Void) {
        batches.withLock { batches in
            if let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) {
                batches[index].entries.append((change, completion))
            }
        }
    }

    private var isBatching: Bool {
        batches.withLock { batches in batches.contains { pthread_equal($0.thread, pthread_self()) != 0 } }
    }

    /// Writes the changes and calls each completion with their version; inside a batch on this thread, keeps
    /// them until the batch ends instead, and returns `false`.
    func write(_ entries: [(change: SettingChange, completion: @Sendable (UInt64) -> Void)]) -> Bool {
        let deferred = batches.withLock { batches -> Bool in
            guard let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) else {
                return false
            }
            batches[index].entries += entries
            return true
        }
        if deferred { return false }
        let version = write(entries.map(\.change))
        for entry in entries { entry.completion(version) }
        return true
    }

    /// Runs `body`, collecting this thread's writes through this context, then writes them at once.
    func batch<Result>(_ body: () throws -> Result) rethrows -> Result {
        batches.withLock { batches in
            if let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) {
                batches[index].depth += 1
            } else {
                batches.append(Batch(thread: pthread_self()))
                storable_config_atomic_add(batchCount, 1)
            }
        }
        defer { endBatch() }
        return try body()
    }

    private func endBatch() {
        let finished = batches.withLock { batches -> Batch? in
            guard let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) else {
                return nil
            }
            batches[index].depth -= 1
            guard batches[index].depth == 0 else { return nil }
            storable_config_atomic_add(batchCount, -1)
            return batches.remove(at: index)
        }
        guard let finished, !finished.entries.isEmpty else { return }
        // One write per key: the last assignment wins, in the order the keys were first assigned.
        var lastIndex: [String: Int] = [:]
        for (index, entry) in finished.entries.enumerated() { lastIndex[entry.change.key] = index }
        let kept = finished.entries.enumerated().filter { lastIndex[$0.element.change.key] == $0.offset }.map(\.element)
        let version = write(kept.map(\.change))
        for entry in kept { entry.completion(version) }
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

    /// Returns the hub of the storage whose identity is `identity`, if a live config uses it.
    static func existingHub(for identity: AnyObject) -> StoreHub? {
        registry.withLock { hubs in
            guard let hub = hubs[ObjectIdentifier(identity)]?.hub, hub.identity === identity else { return nil }
            return hub
        }
    }

    /// Has every config bound to the storage read `keys` again: someone outside changed them.
    func storageChanged(keys: Set<String>) {
        guard !keys.isEmpty else { return }
        var targets: [StorableConfig] = []
        let version = lock.withLock {
            self.version &+= 1
            for receiver in receivers {
                if let config = receiver.config { targets.append(config) }
            }
            return self.version
        }
        for target in targets {
            target.loadSettings(version: version, onlyKeys: keys)
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
    func write<Changes: Collection<SettingChange>>(
        _ changes: Changes, to store: any ConfigStore, from origin: ObjectIdentifier
    ) -> UInt64 {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        var everyone: [StorableConfig] = []
        var external: Set<String> = []
        let version = ProblemReports.deferring {
            lock.lock()
            defer { lock.unlock() }
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
            external = store.externallyChangedKeys()
            return numberWrite(from: origin, external: external, targets: &targets, everyone: &everyone)
        }
        if let failure {
            for change in changes {
                StorableConfig.report(.writeFailed(key: change.key, reason: "\(failure)"))
            }
        }
        deliver(changes, version: version, to: targets, external: external, everyone: everyone)
        return version
    }

    /// Gives a write that the store just applied its version, and lists the other configs to tell and, if the
    /// store noticed outside changes, every config. Called with `lock` held.
    private func numberWrite(
        from origin: ObjectIdentifier, external: Set<String>, targets: inout [StorableConfig],
        everyone: inout [StorableConfig]
    ) -> UInt64 {
        version &+= 1
        // The usual case, one config on the storage and it is the writer, needs no weak loads.
        if receivers.count == 1, receivers[0].context == origin, external.isEmpty { return version }
        for index in receivers.indices {
            guard let config = receivers[index].config else { continue }
            if receivers[index].context != origin { targets.append(config) }
            if !external.isEmpty { everyone.append(config) }
        }
        return version
    }

    /// Tells `targets` of `changes`, and `everyone` of the outside changes to `external` keys. Called without
    /// the lock.
    private func deliver(
        _ changes: some Collection<SettingChange>, version: UInt64, to targets: [StorableConfig],
        external: Set<String>, everyone: [StorableConfig]
    ) {
        for target in targets {
            for change in changes {
                target.receive(key: change.key, stored: change.stored, typedValue: change.typedValue, version: version)
            }
        }
        for config in everyone {
            config.loadSettings(version: version, onlyKeys: external)
        }
    }

    /// Replaces the value of `key` by `transform` of its value in `store`, as one write, then tells every other
    /// config bound to the storage, as ``write(_:to:from:)`` does.
    ///
    /// - Returns: The version of the write, the new value, and whether the store failed to write it.
    /// - Throws: What `transform` throws; nothing is then changed.
    func update(
        key: String, _ transform: (StoredValue?) throws -> StoredValue?, in store: any ConfigStore,
        from origin: ObjectIdentifier
    ) throws -> (version: UInt64, value: StoredValue?, failed: Bool) {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        var everyone: [StorableConfig] = []
        var external: Set<String> = []
        var updated: StoredValue?
        var transformFailure: (any Error)?
        let version = try ProblemReports.deferring {
            lock.lock()
            defer { lock.unlock() }
            do {
                updated = try store.update(key) { current in
                    do {
                        return try transform(current)
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
                updated = try? store.value(forKey: key)
            }
            external = store.externallyChangedKeys()
            return numberWrite(from: origin, external: external, targets: &targets, everyone: &everyone)
        }
        if let failure {
            StorableConfig.report(.writeFailed(key: key, reason: "\(failure)"))
        }
        deliver(
            CollectionOfOne(SettingChange(key: key, stored: updated, typedValue: nil)), version: version, to: targets,
            external: external, everyone: everyone)
        return (version, updated, failure != nil)
    }

    /// Reloads `store` and has every config bound to the storage read its settings again.
    func reload(_ store: any ConfigStore) throws {
        var targets: [StorableConfig] = []
        let version = try ProblemReports.deferring {
            lock.lock()
            defer { lock.unlock() }
            do {
                try store.reload()
                _ = store.externallyChangedKeys()  // every key is read again below
            } catch {
                throw StorableConfigError.reloadFailed(store: "\(store)", reason: "\(error)")
            }
            self.version &+= 1
            for receiver in receivers {
                if let config = receiver.config { targets.append(config) }
            }
            return self.version
        }
        for target in targets {
            target.loadSettings(version: version)
        }
    }
}
