/// Earlier keys still in use: a config of another class that uses a key which a newer class moved reads and
/// writes the current key (see Docs/Migrations.md).
extension StoreHub {
    /// Earlier keys that a config class created on this storage moves values from, and their current keys: a
    /// config of another class that still uses such a key reads and writes the current key instead (see
    /// Docs/Migrations.md). Kept for the hub's life, the storage's, so that every config of the storage agrees,
    /// whenever it was created.
    struct KeyAliases {
        /// Earlier key → current key.
        var currentKey: [String: String] = [:]
        /// Current key → earlier keys, and the class that declares them.
        var earlierKeys: [String: [String]] = [:]
        var movedBy: [String: String] = [:]
        /// Changed whenever an alias is added, so that a write under way can tell that its key moved.
        var generation: UInt64 = 0
        /// Pairs of (class, key) already reported.
        var reported: Set<String> = []

        /// Every entry of `currentKey` leads to a key that is itself not sent elsewhere, so one look-up resolves
        /// a chain of renames (`a` → `b` → `c`).
        func storeKey(_ key: String) -> String { currentKey[key] ?? key }

        /// Sends `earlier` to where `current` is stored; earlier keys that were sent to `earlier` follow it.
        /// - Returns: Whether anything changed.
        mutating func add(_ earlier: String, to current: String, movedBy className: String) -> Bool {
            let target = storeKey(current)
            guard currentKey[earlier] == nil, earlier != target else { return false }
            for key in earlierKeys.removeValue(forKey: earlier) ?? [] {
                currentKey[key] = target
                earlierKeys[target, default: []].append(key)
            }
            currentKey[earlier] = target
            earlierKeys[target, default: []].append(earlier)
            movedBy[earlier] = className
            return true
        }
    }

    /// The key under which the store holds what a config knows as `key`.
    func storeKey(_ key: String) -> String {
        feed.withLock { $0.aliases.storeKey(key) }
    }

    /// The earlier keys that aliases send to `storeKey`, for a config that knows the value by one of them.
    func earlierKeys(aliasedTo storeKey: String) -> [String] {
        feed.withLock { $0.aliases.earlierKeys[storeKey] ?? [] }
    }

    /// Reads `keys` from `store`, each under the key that holds it: ``ConfigStore/values(forKeys:)`` with
    /// aliases applied, and a key whose move from an earlier key waits to be written read there (``PendingMoves``).
    func values(forKeys keys: [String], in store: any ConfigStore) throws -> [String: StoredValue] {
        guard hasAliases else { return try store.values(forKeys: keys) }
        let (storeKeys, waiting) = feed.withLock { feed in
            (keys.map(feed.aliases.storeKey), feed.pendingMoves.entries)
        }
        var found = try store.values(forKeys: storeKeys)
        if !waiting.isEmpty { found = try readingWaitingMoves(storeKeys, found: found, in: store, waiting: waiting) }
        var values: [String: StoredValue] = [:]
        for (key, storeKey) in zip(keys, storeKeys) { values[key] = found[storeKey] }
        return values
    }

    /// Sends the earlier keys of `schema`'s settings to their current keys for every config on this storage,
    /// before `schema`'s config moves their values; reports each config of another class that uses one. The
    /// configs that now read another key read it when ``storageChanged(keys:)`` is called with the current keys,
    /// after the move.
    /// - Returns: Whether an alias was added (the first config of the class on this storage).
    @discardableResult
    func addAliases(of schema: ConfigSchema) -> Bool {
        guard schema.hasEarlierKeys else { return false }
        let added = feed.withLock { feed -> Bool in
            var added = false
            for (index, earlier) in schema.earlierKeys.enumerated() {
                let current = schema.keys[index]
                for key in earlier where feed.aliases.add(key, to: current, movedBy: schema.className) {
                    added = true
                }
            }
            if added { feed.aliases.generation &+= 1 }
            return added
        }
        guard added else { return false }
        let configs = feed.withLock { feed in feed.receivers.values.flatMap { $0.byContext.values.compactMap(\.config) }
        }
        for config in configs where config.schema !== schema {
            reportAliases(of: config.schema)
        }
        return true
    }

    /// Whether `report` (a problem and the key it is about) is made for the first time on this storage: each is
    /// reported once for the storage's life.
    func isFirstReport(of report: String) -> Bool {
        feed.withLock { $0.aliases.reported.insert(report).inserted }
    }

    /// Reports, once per class and key, each setting of `schema` whose key aliases send elsewhere.
    func reportAliases(of schema: ConfigSchema) {
        guard hasAliases else { return }
        let reports = feed.withLock { feed -> [StorableConfigError] in
            var reports: [StorableConfigError] = []
            for key in schema.keys {
                guard let current = feed.aliases.currentKey[key], let movedBy = feed.aliases.movedBy[key],
                    feed.aliases.reported.insert(schema.className + "\u{0}" + key).inserted
                else { continue }
                reports.append(
                    .earlierKeyInUse(className: schema.className, key: key, currentKey: current, movedBy: movedBy))
            }
            return reports
        }
        for report in reports { StorableConfig.report(report) }
    }

    /// Moves to its current key each change of a write during which an alias (added since `generation`) sent its
    /// key elsewhere, from the key it was written to, in one update, while that key still holds it.
    ///
    /// An earlier key must hold no value that code of this process wrote after its alias came: a move takes an
    /// earlier key's value for one written since the last move, newer than the current key's, and would overwrite
    /// what was written to the current key meanwhile. So a write through an alias removes the earlier key's value
    /// in the same store call, and a write that was already under way when the alias came is carried over here.
    /// (A store that fails the removal, or writes secret keys one at a time and fails between them, can still
    /// leave one there.)
    ///
    /// A read-modify-write (a record change, an import) is carried over by running its `transform` again on the
    /// current key's value, whether or not the earlier key still holds what it wrote (it is removed from there only
    /// if it does): it was worked out from the earlier key's value, which the move took before or after it landed.
    /// Its operations are by id or by value, so running them again where the move took their result changes
    /// nothing. A record change's carry-over is a record change too (`oneAtATime`), and keeps the records of the
    /// earlier key's value that the current key lacks: it is the collection as the change read it there.
    /// - Returns: The version of the carrying update, the values it left at the current keys of the changes it
    ///   carried, by the keys the writer gave, and whether the store failed it; `nil` if it carried none.
    /// - Throws: What `transform` throws.
    @discardableResult
    func carryToCurrentKeys(
        _ changes: [(key: String, writtenTo: String, stored: StoredValue?)], since generation: UInt64,
        in store: any ConfigStore, from origin: ObjectIdentifier,
        reapplying transform: ((inout [String: StoredValue]) throws -> Void)? = nil, oneAtATime: Bool = false
    ) throws -> (version: UInt64, values: [(key: String, value: StoredValue?)], failed: Bool)? {
        typealias Move = (key: String, current: String, writtenTo: String, stored: StoredValue?)
        let moved = feed.withLock { feed -> [Move] in
            guard feed.aliases.generation != generation else { return [] }
            return changes.compactMap { change -> Move? in
                let current = feed.aliases.storeKey(change.key)
                return current == change.writtenTo ? nil : (change.key, current, change.writtenTo, change.stored)
            }
        }
        guard !moved.isEmpty else { return nil }
        var carried: [Move] = []
        let result = try update(
            keys: moved.map(\.writtenTo) + moved.map(\.current),
            { values in
                // A plain write only while the earlier key still holds it: a move may have taken it already, and a
                // write to the current key since is newer.
                carried = []
                var mine: [String: StoredValue] = [:]
                for change in moved {
                    let stillThere = values[change.writtenTo] == change.stored
                    if stillThere { values[change.writtenTo] = nil }
                    guard stillThere || transform != nil else { continue }
                    carried.append(change)
                    mine[change.key] = transform == nil ? change.stored : values[change.current]
                    // A record change left at the earlier key the whole collection it read there, which may hold
                    // records that no move has taken yet: the current key keeps those it lacks.
                    if oneAtATime, stillThere, case .dictionary(let earlier)? = change.stored,
                        case .dictionary(let records) = mine[change.key] ?? .dictionary([:])
                    {
                        mine[change.key] = .dictionary(records.merging(earlier) { current, _ in current })
                    }
                }
                try transform?(&mine)
                for change in carried { values[change.current] = mine[change.key] }
            }, in: store, from: origin, storeKeys: true, oneAtATime: oneAtATime)
        guard !carried.isEmpty || result.failed else { return nil }
        return (result.version, carried.map { ($0.key, result.values[$0.current]) }, result.failed)
    }
}
