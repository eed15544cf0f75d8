#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if canImport(Observation)
    import Observation
#endif

/// One config instance's connection to its store and to the other configs bound to the same storage.
final class ConfigContext: @unchecked Sendable {
    let store: any ConfigStore
    /// Held for the config's life: the hub holds it weakly, and a store may hand out an identity that only its
    /// configs keep alive (one shared through a weak table, as `JSONFile` shares a path's).
    let storageIdentity: AnyObject
    let hub: StoreHub
    /// The lock that every setting of the config takes (see ``Setting/lock``).
    let settingsLock = Lock()
    private let batches = Locked<[Batch]>([])
    /// An `ObservationSupport` where the Observation framework is available.
    let observation: (any AnyObject & Sendable)? = ConfigContext.makeObservationSupport()
    private let changeObservers = Locked<ChangeObservers>(ChangeObservers())

    private struct ChangeObservers {
        var ended = false
        var all: [UInt64: (onChange: @Sendable (ConfigChange) -> Void, onEnd: (@Sendable () -> Void)?)] = [:]
        /// ``StorableConfig/observeWillChange(_:)``'s handlers; counted with `all` in ``hasChangeObservers``,
        /// so that a change is queued and delivered in order when only they listen.
        var willChange: [UInt64: @Sendable () -> Void] = [:]
    }

    /// What is done when a batch's write has its version: the setting takes the value, and returns what is left to
    /// tell its observers, which the batch tells once every setting of the write has taken its value.
    typealias BatchCompletion = @Sendable (UInt64) -> (() -> Void)?

    /// Changes collected by ``StorableConfig/batch(_:)`` on one thread, written when it ends.
    private struct Batch {
        let thread: pthread_t
        var depth = 1
        var entries: [(change: SettingChange, completion: BatchCompletion)] = []
    }

    init(store: any ConfigStore) {
        self.store = store
        storageIdentity = (store as? any IdentifiedConfigStore)?.storageIdentity ?? store
        hub = StoreHub.hub(for: storageIdentity)
        #if canImport(Observation) && !canImport(Darwin)
            registrar = (observation as? ObservationSupport)?.registrar ?? ObservationRegistrar()
        #endif
    }

    /// The config's class's receivers in the hub, once attached: guarded by the hub's `feed` lock.
    var receiverGroup: StoreHub.ReceiverGroup?

    #if canImport(Observation) && !canImport(Darwin)
        /// `observation`'s registrar, found once for every setting of the config (see ``SettingBinding``).
        let registrar: ObservationRegistrar
    #endif

    // MARK: Config-wide observers

    var hasChangeObservers: Bool {
        settingsLock.withLock { changeObserverCount > 0 }
    }

    /// How many config-wide observers there are, guarded by `settingsLock`, so that a setting's write reads it in
    /// the critical section that takes its value. Set under `changeObservers`' lock too, which is always taken
    /// first.
    private(set) var changeObserverCount = 0

    /// The number of the last assignment of one of the config's settings that showed its value while written
    /// (`Setting.showWhileWriting`); guarded by `settingsLock`.
    var lastPendingNumber: UInt64 = 0
    /// By setting index: the version of a stored value that the setting wrote and that holds no member its type
    /// does not know, so that its next assignment, while it still holds that version, need not read the store for
    /// members to keep (see `Setting.assignKeepingUnknownMembers`). Only settings of types without a native
    /// stored form that were assigned have one. Guarded by the config's lock, `settingsLock`.
    var onlyKnownMembers: [Int: UInt64] = [:]

    /// Counts the observers again after a change of `observers`, under their lock.
    private func recount(_ observers: ChangeObservers) {
        let count = observers.all.count + observers.willChange.count
        settingsLock.withLock { changeObserverCount = count }
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
            recount(observers)
            return true
        }
        if !added { onEnd?() }
        return added ? identifier : nil
    }

    func removeChangeObserver(_ identifier: UInt64) {
        // Released after the lock, for the reason given in `Setting.removeObserver`.
        let removed = changeObservers.withLock { observers in
            let removed = observers.all.removeValue(forKey: identifier)
            let removedWillChange = observers.willChange.removeValue(forKey: identifier)
            recount(observers)
            return (removed, removedWillChange)
        }
        withExtendedLifetime(removed) {}
    }

    func tellChangeObservers(_ change: ConfigChange) {
        let observers = changeObservers.withLock { Array($0.all.values) }
        for observer in observers { observer.onChange(change) }
    }

    /// Adds a handler told before each change of a setting reaches the setting's observers; `nil` if the config
    /// is already gone.
    func addWillChangeObserver(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        let identifier = ObservationToken.nextIdentifier()
        let added = changeObservers.withLock { observers -> Bool in
            guard !observers.ended else { return false }
            observers.willChange[identifier] = handler
            recount(observers)
            return true
        }
        return added ? identifier : nil
    }

    func tellWillChangeObservers() {
        let observers = changeObservers.withLock { $0.willChange.isEmpty ? [] : Array($0.willChange.values) }
        for observer in observers { observer() }
    }

    /// Finishes every config-wide observer: the config is going away.
    func endChangeObservation() {
        let (ended, willChange) = changeObservers.withLock { observers in
            observers.ended = true
            defer {
                observers.all = [:]
                observers.willChange = [:]
                recount(observers)
            }
            return (Array(observers.all.values), Array(observers.willChange.values))
        }
        withExtendedLifetime(willChange) {}
        for observer in ended { observer.onEnd?() }
    }

    // MARK: Writes

    /// Writes `changes` and returns the version they were given.
    func write(_ changes: [SettingChange]) -> UInt64 {
        hub.write(changes, to: store, from: ObjectIdentifier(self))
    }

    /// Writes one change, outside a batch on this thread (inside one, hand it to ``deferToBatch(_:_:)``), and
    /// returns its version and whether its value must not be believed (see ``StoreHub/writeOne``).
    func writeOne<Typed: Sendable>(
        key: String, index: Int, stored: StoredValue?, typedValue: Typed
    ) -> (version: UInt64, discarded: Bool) {
        hub.writeOne(key: key, index: index, stored: stored, typedValue: typedValue, to: store, from: self)
    }

    /// Keeps a change of this thread's batch, to be written, and then completed, when the batch ends.
    func deferToBatch(_ change: SettingChange, _ completion: @escaping BatchCompletion) {
        batches.withLock { batches in
            if let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) {
                batches[index].entries.append((change, completion))
            }
        }
    }

    /// The last change of `key` that this thread's batch holds, if it holds one (`stored` `nil`: a removal).
    func batchedChange(forKey key: String) -> SettingChange? {
        batches.withLock { batches in
            guard let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) else {
                return nil
            }
            return batches[index].entries.last { $0.change.key == key && !$0.change.isEarlierKey }?.change
        }
    }

    /// Whether a batch is under way on this thread.
    var isBatching: Bool {
        // Asked by every assignment: a thread with no batch open, the usual case, takes no lock.
        guard OutsideLocks.threadHasOpenBatch else { return false }
        return batches.withLock { batches in batches.contains { pthread_equal($0.thread, pthread_self()) != 0 } }
    }

    /// Writes the changes and calls each completion with their version; inside a batch on this thread, keeps
    /// them until the batch ends instead, and returns `false`.
    func write(_ entries: [(change: SettingChange, completion: BatchCompletion)]) -> Bool {
        let deferred = batches.withLock { batches -> Bool in
            guard let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) else {
                return false
            }
            batches[index].entries += entries
            return true
        }
        if deferred { return false }
        let version = write(entries.map(\.change))
        Self.complete(entries.map(\.completion), version: version)
        return true
    }

    /// Runs `body`, collecting this thread's writes through this context, then writes them at once.
    func batch<Result>(_ body: () throws -> Result) rethrows -> Result {
        batches.withLock { batches in
            if let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) {
                batches[index].depth += 1
            } else {
                batches.append(Batch(thread: pthread_self()))
            }
        }
        OutsideLocks.batchOpened()
        defer {
            OutsideLocks.batchClosed()
            endBatch()
        }
        return try body()
    }

    private func endBatch() {
        let finished = batches.withLock { batches -> Batch? in
            guard let index = batches.firstIndex(where: { pthread_equal($0.thread, pthread_self()) != 0 }) else {
                return nil
            }
            batches[index].depth -= 1
            guard batches[index].depth == 0 else { return nil }
            return batches.remove(at: index)
        }
        guard let finished, !finished.entries.isEmpty else { return }
        // One write per key: the last assignment wins, in the order the keys were first assigned.
        var lastIndex: [String: Int] = [:]
        for (index, entry) in finished.entries.enumerated() { lastIndex[entry.change.key] = index }
        let kept = finished.entries.enumerated().filter { lastIndex[$0.element.change.key] == $0.offset }.map(\.element)
        let version = write(kept.map(\.change))
        Self.complete(kept.map(\.completion), version: version)
    }

    /// Has every setting take its value of the write numbered `version`, then tells their observers.
    private static func complete(_ completions: [BatchCompletion], version: UInt64) {
        let telling = completions.compactMap { $0(version) }
        for tell in telling { tell() }
    }
}
