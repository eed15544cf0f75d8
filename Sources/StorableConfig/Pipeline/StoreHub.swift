#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
/// two writes that overlapped; so a write that overlapped another store call (or an outside change) is not
/// handed on, but followed by a fresh read of its keys from the store by every config, numbered after both:
/// whichever write the store applied last, every config ends up reading it, and no config hears a value after
/// one the store applied later. A write that overlapped nothing, the usual case, hands its value to the other
/// configs directly.
final class StoreHub: @unchecked Sendable {
    /// The version counter, the store calls under way and the configs to tell; held only to number a write
    /// or an outside change and to list the receivers, never across a store call or while anyone is told.
    let feed = Locked(Feed())
    /// Held across the store call of a record change when the store's read-modify-writes are atomic only within the
    /// process, so that they run one at a time (``oneAtATime(_:_:)``).
    let turn = Lock()
    /// The storage's identity, the registry's key: the hub lives as long as it does (a config created after the
    /// last one went finds the receivers and the key index in place), and no longer.
    private weak let identity: AnyObject?

    struct Feed {
        var version: UInt64 = 0
        /// The configs to tell, grouped by their class's schema, each by its context.
        var receivers: [ObjectIdentifier: ReceiverGroup] = [:]
        /// The schemas that have each key, so that a change reaches only the configs that read it.
        var schemasByKey: [String: Set<ObjectIdentifier>] = [:]
        /// Store calls under way (writes and updates).
        var storeCallsInFlight = 0
        var aliases = KeyAliases()
        /// Moves from earlier keys that the store failed to write, read in their place until they are written.
        var pendingMoves = PendingMoves()
        /// The failed write last reported for each key (its description) since the storage last took a write: a
        /// full disk under busy writers is one report per key, not one per attempt (thousands a second), and a
        /// failure for another reason (another value too large) is still reported.
        var reportedFailures: [String: String] = [:]
        /// The thread whose record change holds `turn`, if any.
        var turnHolder: pthread_t?
        /// Moves of record collections that came while another thread held `turn`: it runs them before it lets
        /// the turn go (``movingRecords(in:queueing:_:)``).
        var movesAfterTurn: [@Sendable () -> Void] = []
    }

    /// Every hub whose storage may still be alive. A hub holds its storage's identity weakly, so a dead storage's
    /// hub is told by its `nil` identity (its address may be another object's by now), and dropped when a new
    /// hub is made.
    private static let registry = Locked<[ObjectIdentifier: StoreHub]>([:])

    private init(identity: AnyObject) {
        self.identity = identity
    }

    /// Whether any alias exists (once added, aliases are never removed).
    var hasAliases: Bool { feed.withLock { !$0.aliases.currentKey.isEmpty } }

    /// Returns the hub of the storage whose identity is `identity` (a store's `storageIdentity`, else the store
    /// itself), creating it the first time. The caller keeps `identity` alive for as long as it uses the hub.
    static func hub(for identity: AnyObject) -> StoreHub {
        let key = ObjectIdentifier(identity)
        // A weak reference loaded here is `identity` or `nil`, never a last reference whose release would run a
        // store's deinit under the lock. A hub replaced is released after it.
        var replaced: StoreHub?
        let (hub, isNew) = registry.withLock { hubs -> (StoreHub, Bool) in
            if let hub = hubs[key], hub.identity === identity { return (hub, false) }
            let hub = StoreHub(identity: identity)
            replaced = hubs.updateValue(hub, forKey: key)
            return (hub, true)
        }
        withExtendedLifetime(replaced) {}
        if isNew { dropHubsOfDeadStorages() }
        return hub
    }

    /// Drops the hubs whose storage is gone, each time a hub is made: the registry holds at most one hub per
    /// storage alive and per storage that went since the last hub was made. Identities are loaded outside the
    /// lock (a loaded reference may be the last). Every hub stays held here until the end, so that no hub found
    /// dead is freed, and its address taken by a live storage's new hub, before it is taken out; and what is
    /// dropped is released after the lock (a hub's schemas hold declared defaults, whose deinit is the user's
    /// code).
    private static func dropHubsOfDeadStorages() {
        let all = registry.withLock { $0 }
        let dead = all.filter { $0.value.identity == nil }
        guard !dead.isEmpty else { return }
        registry.withLock { hubs in
            for (key, hub) in dead where hubs[key] === hub { hubs[key] = nil }
        }
        withExtendedLifetime(all) {}
    }

    /// Returns the hub of the storage whose identity is `identity`, if a config has used it.
    static func existingHub(for identity: AnyObject) -> StoreHub? {
        registry.withLock { hubs in
            guard let hub = hubs[ObjectIdentifier(identity)], hub.identity === identity else { return nil }
            return hub
        }
    }

    /// Has every config bound to the storage read `keys` again: someone outside changed them. Inside the
    /// framework's locks (a store reporting from within a write), it happens when the locks are released.
    func storageChanged(keys: Set<String>) {
        guard !keys.isEmpty else { return }
        OutsideLocks.run { [self] in
            retryWaitingMoves()
            let (version, targets, configKeys) = numberOutsideChange(storeKeys: keys)
            for target in targets {
                target.loadSettings(version: version, onlyKeys: configKeys)
            }
        }
    }

    /// The number of the last change: a reading of the store made after this call may be tagged with it.
    func currentVersion() -> UInt64 {
        feed.withLock { $0.version }
    }

    /// Applies `changes` to `store`, then tells every other config bound to the storage.
    ///
    /// A store that fails keeps its old value; the failure is reported, and the new value is still
    /// delivered, so that every config in the process reads what was assigned, unless the store does not keep
    /// failed writes (``ConfigStore/keepsFailedWrites``): then nobody is handed the value, and every config
    /// reads the keys from the store again, numbered after the write, so that the writer's own setting goes
    /// back too.
    func write<Changes: Collection<SettingChange>>(
        _ changes: Changes, to store: any ConfigStore, from origin: ObjectIdentifier
    ) -> UInt64 {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        let call = beginStoreCall(keys: changes.map(\.key), asGiven: changes.map(\.isEarlierKey))
        let (version, certain) = OutsideLocks.deferring {
            do {
                // Keys that an alias sends elsewhere: their own values, left from before the alias, go in the same
                // call (see `carryToCurrentKeys`).
                let emptied = zip(changes, call.storeKeys).compactMap { $0.0.key == $0.1 ? nil : $0.0.key }
                if changes.count == 1, emptied.isEmpty, let change = changes.first {
                    if let stored = change.stored {
                        try store.setValue(stored, forKey: call.storeKeys[0])
                    } else {
                        try store.removeValue(forKey: call.storeKeys[0])
                    }
                } else if !changes.isEmpty {
                    var values: [String: StoredValue] = [:]
                    var removed: [String] = []
                    for (change, key) in zip(changes, call.storeKeys) {
                        if let stored = change.stored {
                            values[key] = stored
                        } else {
                            removed.append(key)
                        }
                    }
                    try store.setValues(values, removingValuesForKeys: removed + emptied)
                }
            } catch {
                failure = error
            }
            return numberWrite(
                keys: call.storeKeys, succeeded: failure == nil, from: origin, startVersion: call.startVersion,
                generation: call.generation, targets: &targets)
        }
        if let failure {
            report(failure, keys: changes.map(\.key))
            if !store.keepsFailedWrites || failure is WriteNotKept {
                storageChanged(keys: Set(call.storeKeys))
                return version
            }
        }
        // Every config takes every value of the write before any observer is told; a write that overlapped
        // another is not handed on (see `writeOne`), and every config reads the keys from the store below.
        var telling: [() -> Void] = []
        for target in certain ? targets : [] {
            for (change, key) in zip(changes, call.storeKeys) where !change.isEarlierKey || !isAliased(key) {
                if let tell = target.receive(
                    key: key, stored: change.stored, typedValue: change.typedValue, version: version)
                {
                    telling.append(tell)
                }
            }
        }
        for tell in telling { tell() }
        if !certain {
            // Only the keys that aliases were applied to may have moved (not a reset's earlier keys).
            let written = zip(changes, zip(call.storeKeys, call.translated)).filter(\.1.1).map {
                (key: $0.0.key, writtenTo: $0.1.0, stored: $0.0.stored)
            }
            _ = try? carryToCurrentKeys(written, since: call.generation, in: store, from: origin)
            storageChanged(keys: Set(call.storeKeys))
        }
        return version
    }

    /// ``write(_:to:from:)`` for one change, the path of every assignment outside a batch: no collection of
    /// changes, and the typed value is boxed for the other configs only when there are any.
    /// - Returns: The write's version, and whether the writer must not believe its value: the store failed and
    ///   keeps no failed writes (every config then reads the key again, perhaps later, after the locks this
    ///   thread is inside of).
    func writeOne<Typed: Sendable>(
        key: String, index: Int, stored: StoredValue?, typedValue: Typed, to store: any ConfigStore,
        from writer: ConfigContext
    ) -> (version: UInt64, discarded: Bool) {
        let origin = ObjectIdentifier(writer)
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        let call = beginStoreCall(key: key)
        let storeKey = call.aliasedTo ?? key
        let (version, certain) = OutsideLocks.deferring {
            do {
                if call.aliasedTo != nil {
                    // The earlier key's own value, left from before the alias, goes in the same call (see
                    // `carryToCurrentKeys`).
                    try store.setValues(
                        stored.map { [storeKey: $0] } ?? [:],
                        removingValuesForKeys: stored == nil ? [storeKey, key] : [key])
                } else if let stored {
                    try store.setValue(stored, forKey: storeKey)
                } else {
                    try store.removeValue(forKey: storeKey)
                }
            } catch {
                failure = error
            }
            return numberWrite(
                keys: CollectionOfOne(storeKey), succeeded: failure == nil, from: origin,
                startVersion: call.startVersion, generation: call.generation, targets: &targets,
                writer: (writer, index))
        }
        if let failure {
            report(failure, keys: [key])
            if !store.keepsFailedWrites || failure is WriteNotKept {
                storageChanged(keys: [storeKey])
                return (version, true)
            }
        }
        // A write that overlapped another is not handed on: the store may have applied the other one after it,
        // and a config told this value after the other's would hear it out of order (and hear the other again at
        // the read below). Every config reads what the store holds instead.
        if certain, !targets.isEmpty {
            let typed: any Sendable = typedValue
            for target in targets {
                target.receive(key: storeKey, stored: stored, typedValue: typed, version: version)?()
            }
        }
        if !certain {
            _ = try? carryToCurrentKeys([(key, storeKey, stored)], since: call.generation, in: store, from: origin)
            storageChanged(keys: [storeKey])
        }
        return (version, false)
    }

    /// A store call of several keys under way: the version and alias generation it started from, and the keys
    /// it uses in the store (the keys given, or the current keys that aliases send them to).
    struct StoreCall {
        let startVersion: UInt64
        let generation: UInt64
        let keys: [String]
        let storeKeys: [String]
        /// Whether aliases were applied to each of `keys` (not to the store's own keys).
        let translated: [Bool]
    }

    /// Counts a store call of one key that is about to start: every assignment's path, which copies no key and
    /// makes no array. Returns the current key that an alias sends `key` to, if any.
    func beginStoreCall(key: String) -> (startVersion: UInt64, generation: UInt64, aliasedTo: String?) {
        feed.withLock { feed in
            feed.storeCallsInFlight += 1
            let aliased = feed.aliases.currentKey.isEmpty ? nil : feed.aliases.currentKey[key]
            return (feed.version, feed.aliases.generation, aliased)
        }
    }

    /// Counts a store call that is about to start, translating `keys` unless they are the store's own (all of
    /// them, or those marked in `asGiven`).
    func beginStoreCall(keys: [String], translating: Bool = true, asGiven: [Bool]? = nil) -> StoreCall {
        feed.withLock { feed in
            feed.storeCallsInFlight += 1
            var storeKeys = keys
            if translating, !feed.aliases.currentKey.isEmpty {
                for index in keys.indices where asGiven?[index] != true {
                    storeKeys[index] = feed.aliases.storeKey(keys[index])
                }
            }
            return StoreCall(
                startVersion: feed.version, generation: feed.aliases.generation, keys: keys, storeKeys: storeKeys,
                translated: keys.indices.map { translating && asGiven?[$0] != true })
        }
    }

    /// Whether `storeKey` is an earlier key that aliases send elsewhere: nobody reads it any more, so a change of
    /// it (a move removing a value) is told to nobody.
    func isAliased(_ storeKey: String) -> Bool {
        feed.withLock { $0.aliases.currentKey[storeKey] != nil }
    }

    /// Gives a write of `keys` (the store's) that the store just applied its version, and lists the other configs
    /// that read one of them. `certain` is false when another store call was under way, or another change was
    /// numbered, since the write began: the store may then have applied the two in either order, and the caller
    /// has every config read the keys again. A write that `succeeded` has every key's next failure reported
    /// again.
    func numberWrite(
        keys: some Collection<String>, succeeded: Bool, from origin: ObjectIdentifier, startVersion: UInt64,
        generation: UInt64, targets: inout [StorableConfig], writer: (context: ConfigContext, index: Int)? = nil
    ) -> (version: UInt64, certain: Bool) {
        feed.withLock { feed in
            feed.storeCallsInFlight -= 1
            if succeeded, !feed.reportedFailures.isEmpty { feed.reportedFailures.removeAll(keepingCapacity: true) }
            // A store that takes a write may take the moves waiting on it: the caller's fresh read tries them.
            if succeeded, !feed.pendingMoves.isEmpty { feed.pendingMoves.markDue() }
            let certain =
                feed.version == startVersion && feed.storeCallsInFlight == 0 && feed.aliases.generation == generation
                && !feed.pendingMoves.due
            feed.version &+= 1
            // The references loaded are released by the caller, after the lock.
            if let writer, feed.reachesOnlyWriter(writer.context, index: writer.index) {
                return (feed.version, certain)
            }
            feed.collect(readersOf: keys, except: origin, into: &targets)
            return (feed.version, certain)
        }
    }

    /// Gives a change made outside the process, or a reload, its version, and lists every config to tell, with
    /// the keys they know `storeKeys` by (earlier keys that aliases send to them included).
    func numberOutsideChange(
        storeKeys: Set<String>? = nil
    ) -> (version: UInt64, targets: [StorableConfig], configKeys: Set<String>?) {
        feed.withLock { feed in
            feed.version &+= 1
            var configKeys = storeKeys
            if let storeKeys, !feed.aliases.earlierKeys.isEmpty {
                for key in storeKeys { configKeys?.formUnion(feed.aliases.earlierKeys[key] ?? []) }
            }
            var targets: [StorableConfig] = []
            if let configKeys {
                feed.collect(readersOf: configKeys, except: nil, into: &targets)
            } else {
                for group in feed.receivers.values { targets += group.byContext.values.compactMap(\.config) }
            }
            return (feed.version, targets, configKeys)
        }
    }

    /// Reports the failed write of each of `keys`, unless the same failure of that key was reported since the
    /// storage last took a write. Four threads writing to a full disk made thousands of reports a second; one per
    /// key and cause says as much.
    func report(_ failure: any Error, keys: [String]) {
        let errors = keys.map { writeFailure(key: $0, failure) }
        let descriptions = errors.map(\.description)
        let unreported = feed.withLock { feed -> [Int] in
            var unreported: [Int] = []
            for (index, key) in keys.enumerated() where feed.reportedFailures[key] != descriptions[index] {
                feed.reportedFailures[key] = descriptions[index]
                unreported.append(index)
            }
            return unreported
        }
        for index in unreported { StorableConfig.report(errors[index]) }
    }
}

/// The report of a failed write of `key`: the store's own `writeFailed` as it is when it names the key (a store
/// that says why one value was refused), not wrapped in a second sentence.
func writeFailure(key: String, _ failure: any Error) -> StorableConfigError {
    let failure = (failure as? WriteNotKept)?.error ?? failure
    guard case .writeFailed(let failedKey, let reason) = failure as? StorableConfigError else {
        return .writeFailed(key: key, reason: "\(failure)")
    }
    if failedKey == key { return .writeFailed(key: key, reason: reason) }
    return .writeFailed(key: key, reason: "it was written with '\(failedKey)', which failed: \(reason)")
}
