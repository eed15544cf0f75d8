#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Read-modify-writes of several keys (moves, migrations, records) and reloads through the hub.
extension StoreHub {
    /// Replaces the values of `keys` by `transform` of their values in `store`, as one
    /// ``ConfigStore/updateValues(forKeys:_:)``, then tells every other config bound to the storage, as
    /// ``write(_:to:from:)`` does.
    ///
    /// `keys` are configs' keys, which aliases may send elsewhere, or, with `storeKeys`, the store's own (a move
    /// or a migration, which reads and writes earlier keys themselves). A record change passes `oneAtATime`
    /// (``oneAtATime(_:_:)``).
    ///
    /// - Returns: The version of the write, the values of `keys` after it, and whether the store failed to
    ///   write them (the values are then what the store holds).
    /// - Throws: What `transform` throws; nothing is then changed.
    func update(
        keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void, in store: any ConfigStore,
        from origin: ObjectIdentifier, storeKeys: Bool = false, oneAtATime: Bool = false
    ) throws -> (version: UInt64, values: [String: StoredValue], failed: Bool) {
        var failure: (any Error)?
        var targets: [StorableConfig] = []
        var updated: [String: StoredValue] = [:]
        var transformFailure: (any Error)?
        var carryFailed = false
        let call = beginStoreCall(keys: keys, translating: !storeKeys)
        let translated = call.storeKeys != keys
        // A record change through an alias takes the earlier key's records along, in the same call, as a plain write
        // through an alias removes the earlier key's value: a later move would take those, older, for newer ones.
        let earlierKeys = oneAtATime && translated ? zip(keys, call.storeKeys).filter { $0 != $1 }.map(\.0) : []
        // The transform sees the values under the keys it was given, wherever the store holds them.
        func given(_ stored: [String: StoredValue]) -> [String: StoredValue] {
            guard translated else { return stored }
            var values: [String: StoredValue] = [:]
            for (key, storeKey) in zip(keys, call.storeKeys) { values[key] = stored[storeKey] }
            return values
        }
        var (version, certain) = try OutsideLocks.deferring {
            do {
                let result = try self.oneAtATime(oneAtATime ? store : nil) {
                    try store.updateValues(forKeys: call.storeKeys + earlierKeys) { values in
                        do {
                            guard translated else { return try transform(&values) }
                            var mine = given(values)
                            for key in earlierKeys {
                                guard case .dictionary(let earlier)? = values[key],
                                    case .dictionary(let records) = mine[key] ?? .dictionary([:])
                                else { continue }
                                mine[key] = .dictionary(records.merging(earlier) { current, _ in current })
                                values[key] = nil
                            }
                            try transform(&mine)
                            // Several of `keys` may go to one store key (an old class's and its successor's, both in
                            // one import): the current key's own value wins, else the first earlier key's by name.
                            let pairs = zip(keys, call.storeKeys).sorted {
                                ($0.0 == $0.1 ? 0 : 1, $0.0) < ($1.0 == $1.1 ? 0 : 1, $1.0)
                            }
                            var written: Set<String> = []
                            for (key, storeKey) in pairs where written.insert(storeKey).inserted {
                                values[storeKey] = mine[key]
                            }
                        } catch {
                            transformFailure = error
                            throw error
                        }
                    }
                }
                updated = given(result)
            } catch {
                // The caller's transform refused: nothing changed, nobody is told.
                if let transformFailure {
                    feed.withLock { $0.storeCallsInFlight -= 1 }
                    throw transformFailure
                }
                // The store failed: it holds what it held, or the change in memory; read that.
                failure = error
                updated = given((try? store.values(forKeys: call.storeKeys)) ?? [:])
            }
            return numberWrite(
                keys: call.storeKeys, succeeded: failure == nil, from: origin, startVersion: call.startVersion,
                generation: call.generation, targets: &targets)
        }
        if let failure {
            report(failure, keys: keys)
        }
        let told = zip(keys, call.storeKeys).filter { !storeKeys || !isAliased($0.1) }
        // Every config takes every value of the update before any observer is told.
        var telling: [() -> Void] = []
        for target in targets {
            for (key, storeKey) in told {
                if let tell = target.receive(key: storeKey, stored: updated[key], typedValue: nil, version: version) {
                    telling.append(tell)
                }
            }
        }
        for tell in telling { tell() }
        if !certain {
            defer { storageChanged(keys: Set(call.storeKeys)) }
            // An alias came while the store call was under way: what it wrote at an earlier key is done again at
            // the current key.
            let changes = zip(keys, call.storeKeys).map { ($0, $1, updated[$0]) }
            if !storeKeys, failure == nil,
                let carried = try withoutActuallyEscaping(
                    transform,
                    do: { transform in
                        try carryToCurrentKeys(
                            changes, since: call.generation, in: store, from: origin, reapplying: transform,
                            oneAtATime: oneAtATime)
                    })
            {
                version = carried.version
                for (key, value) in carried.values { updated[key] = value }
                carryFailed = carried.failed
            }
        }
        return (version, updated, failure != nil || carryFailed)
    }

    /// Runs `body`, a record change of `store` (`nil`: anything else), as the only one of the storage under way in
    /// this process when the store's read-modify-writes are atomic only within the process (the default
    /// ``ConfigStore/updateValues(forKeys:_:)``, `UserDefaults`): two threads changing records of one collection
    /// at once would each write back the dictionary they read, and the first written would be lost.
    ///
    /// The one exception to "no lock of the library is held while it calls a store": the `turn` lock is held
    /// across the store call of a record change, and of a move of a record collection
    /// (``movingRecords(in:queueing:_:)``), and taken by nothing else (not by plain writes, other moves, migrations
    /// or imports); creating a config never waits for it. A record change that code inside the call starts on the
    /// same thread (a `didChangeNotification` handler) goes ahead inside it; one that such code waits for on another
    /// thread would wait forever (Docs/Design.md, "Locks").
    private func oneAtATime<Result>(_ store: (any ConfigStore)?, _ body: () throws -> Result) rethrows -> Result {
        guard store?.updateAtomicity == .withinProcess else { return try body() }
        let thread = pthread_self()
        if holdsTurn(thread) { return try body() }
        turn.lock()
        feed.withLock { $0.turnHolder = thread }
        defer { passTurn() }
        return try body()
    }

    /// Runs `move`, a move of a record collection, one at a time with record changes (``oneAtATime(_:_:)``) but
    /// without waiting for one: a record change under way on another thread would otherwise write back, after the
    /// move, the collection it read before it. If another thread holds the turn, that thread runs `move` right
    /// after its record change, before it lets the turn go, and this returns at once: creating a config never waits
    /// for another thread's record change. `move` is told whether it runs later (perhaps on another thread, after
    /// this returns); `queueing` runs just before it is queued.
    /// - Returns: Whether `move` runs later.
    @discardableResult
    func movingRecords(
        in store: any ConfigStore, queueing: () -> Void = {}, _ move: @escaping @Sendable (_ later: Bool) -> Void
    ) -> Bool {
        guard store.updateAtomicity == .withinProcess else {
            move(false)
            return false
        }
        let thread = pthread_self()
        if holdsTurn(thread) {
            move(false)
            return false
        }
        if turn.tryLock() {
            feed.withLock { $0.turnHolder = thread }
            move(false)
            passTurn()
            return false
        }
        queueing()
        feed.withLock { $0.movesAfterTurn.append { move(true) } }
        // The holder may have let the turn go before the move was queued; then this thread runs it.
        if turn.tryLock() {
            feed.withLock { $0.turnHolder = thread }
            passTurn()
        }
        return true
    }

    private func holdsTurn(_ thread: pthread_t) -> Bool {
        feed.withLock { $0.turnHolder.map { pthread_equal($0, thread) != 0 } ?? false }
    }

    /// Runs the moves queued while this thread held the turn, then lets it go; a move queued after the last look
    /// is run by this thread if no other took the turn meanwhile (that one runs it otherwise).
    private func passTurn() {
        while true {
            while let move = feed.withLock({ $0.movesAfterTurn.isEmpty ? nil : $0.movesAfterTurn.removeFirst() }) {
                move()
            }
            feed.withLock { $0.turnHolder = nil }
            turn.unlock()
            guard feed.withLock({ !$0.movesAfterTurn.isEmpty }), turn.tryLock() else { return }
            feed.withLock { $0.turnHolder = pthread_self() }
        }
    }

    /// Replaces the value of `key` by `transform` of its value in `store`: ``update(keys:_:in:from:)`` for one
    /// key.
    func update(
        key: String, _ transform: (StoredValue?) throws -> StoredValue?, in store: any ConfigStore,
        from origin: ObjectIdentifier, oneAtATime: Bool = false
    ) throws -> (version: UInt64, value: StoredValue?, failed: Bool) {
        let result = try update(
            keys: [key], { values in values[key] = try transform(values[key]) }, in: store, from: origin,
            oneAtATime: oneAtATime)
        return (result.version, result.values[key], result.failed)
    }

    /// Reloads `store` and has every config bound to the storage read its settings again.
    func reload(_ store: any ConfigStore) throws {
        let (version, targets, _) = try OutsideLocks.deferring {
            do {
                try store.reload()
            } catch {
                throw StorableConfigError.reloadFailed(store: "\(store)", reason: "\(error)")
            }
            storeReportedChange()
            return numberOutsideChange()
        }
        retryWaitingMoves()
        for target in targets {
            target.loadSettings(version: version)
        }
    }
}
