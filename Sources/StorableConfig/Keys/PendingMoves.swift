/// Moves from earlier keys that the store failed to write (an etcd cluster with no member answering, a read-only
/// disk), and what the settings read until they are written: the earlier key's value, not the default (see
/// Docs/Migrations.md, "A move that cannot be written"). Kept in the storage's hub, for every config on it.
struct PendingMoves {
    /// One setting's move: where its value is, and what the two keys held when the move was planned.
    struct Entry {
        /// The earlier key whose value the move takes.
        let earlierKey: String
        /// That key's value then.
        let earlierValue: StoredValue
        /// The current key's value then (`nil`: none).
        let currentValue: StoredValue?
        /// Whether the value is a record collection, read while it waits as the current key's records and the
        /// earlier key's together, as the move will write them.
        var mergesRecords = false

        /// Whether the value at the earlier key is still the one to read for the current key: unless the current
        /// key changed since the move was planned while the earlier one did not (then the current key was written
        /// after it, and is the newer). A value written to the earlier key since is newer than both, as at a start.
        func earlierWins(current: StoredValue?, earlier: StoredValue?) -> Bool {
            guard let earlier else { return false }
            return current == currentValue || earlier != earlierValue
        }
    }

    /// By current key (the store's).
    private(set) var entries: [String: Entry] = [:]
    /// The configs whose moves wait, by their context.
    private var configs: [ObjectIdentifier: Waiting] = [:]
    /// Whether the storage took a write or reported a change since the moves last failed: worth trying again.
    private(set) var due = false
    private var retrying = false

    private struct Waiting {
        weak var config: StorableConfig?
        var keys: Set<String>
    }

    var isEmpty: Bool { entries.isEmpty }

    // No weak reference is loaded below but in `takeDue()`, which hands it to the caller: one loaded and released
    // under the lock could be a config's last, whose deinit would take the lock again.

    /// Records the moves of `config` that failed; an entry already waiting for a key keeps what it recorded first.
    mutating func add(_ new: [String: Entry], of config: StorableConfig, context: ObjectIdentifier) {
        for (key, entry) in new where entries[key] == nil { entries[key] = entry }
        configs[context, default: Waiting(config: config, keys: [])].keys.formUnion(new.keys)
    }

    /// The storage took a write, or its store reported a change: the waiting moves may be written now.
    mutating func markDue() {
        if !entries.isEmpty { due = true }
    }

    /// The configs whose moves to try again, if they are due and no other thread is trying them; the caller calls
    /// ``finishRetry()`` after.
    mutating func takeDue() -> [StorableConfig]? {
        guard due, !retrying, !entries.isEmpty else { return nil }
        due = false
        retrying = true
        // The references loaded are released by the caller, after the lock; a config that is gone is dropped.
        var alive: [StorableConfig] = []
        for (context, waiting) in configs {
            if let config = waiting.config { alive.append(config) } else { configs[context] = nil }
        }
        return alive
    }

    /// Forgets the moves of the current keys `written`: a config wrote them (or found nothing left to move).
    mutating func remove(_ written: [String]) {
        for key in written { entries[key] = nil }
        // Nothing left to try: a write must not stay uncertain for a retry that has nothing to do.
        if entries.isEmpty { due = false }
        for context in Array(configs.keys) {
            configs[context]?.keys.subtract(written)
            if configs[context]?.keys.isEmpty == true { configs[context] = nil }
        }
    }

    /// Ends a retry. The moves still waiting wait for the next write or change: the one that made them due was
    /// spent on this retry.
    mutating func finishRetry() {
        retrying = false
        due = false
    }
}

extension StoreHub {
    /// The value to read for each of `storeKeys` whose move waits: the earlier key's, read from `store` with the
    /// others. `found` holds the values of `storeKeys`; returns it with those replaced.
    func readingWaitingMoves(
        _ storeKeys: [String], found: [String: StoredValue], in store: any ConfigStore,
        waiting: [String: PendingMoves.Entry]
    ) throws -> [String: StoredValue] {
        let moving = storeKeys.filter { waiting[$0] != nil }
        guard !moving.isEmpty else { return found }
        let earlier = try store.values(forKeys: moving.compactMap { waiting[$0]?.earlierKey })
        var values = found
        for key in moving {
            guard let entry = waiting[key] else { continue }
            let value = earlier[entry.earlierKey]
            if entry.mergesRecords, case .dictionary(let moved)? = value, case .dictionary(let records)? = found[key] {
                values[key] = .dictionary(records.merging(moved) { _, moved in moved })
            } else if entry.earlierWins(current: found[key], earlier: value) {
                values[key] = value
            }
        }
        return values
    }

    /// Records moves that `config` failed to write, so that every config on the storage reads the earlier keys'
    /// values until they are written.
    func recordWaitingMoves(_ entries: [String: PendingMoves.Entry], of config: StorableConfig) {
        guard !entries.isEmpty else { return }
        let context = ObjectIdentifier(config.context)
        feed.withLock { $0.pendingMoves.add(entries, of: config, context: context) }
    }

    /// Forgets the waiting moves of the current keys `written`, if any wait.
    func waitingMovesWritten(_ written: [String]) {
        feed.withLock { feed in
            if !feed.pendingMoves.isEmpty { feed.pendingMoves.remove(written) }
        }
    }

    /// The moves waiting on this storage's configs, by current key.
    var waitingMoves: [String: PendingMoves.Entry] {
        feed.withLock { $0.pendingMoves.entries }
    }

    /// The storage's store reported a change, or was reloaded: a store that answers again (an etcd cluster back)
    /// may take the waiting moves now.
    func storeReportedChange() {
        feed.withLock { $0.pendingMoves.markDue() }
    }

    /// Tries the waiting moves again if the storage took a write or reported a change since they failed.
    func retryWaitingMoves() {
        guard let configs = feed.withLock({ $0.pendingMoves.takeDue() }) else { return }
        for config in configs { config.retryWaitingMoves() }
        feed.withLock { $0.pendingMoves.finishRetry() }
    }
}
