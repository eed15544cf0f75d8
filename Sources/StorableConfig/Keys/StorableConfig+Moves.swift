import Foundation

extension StorableConfig {
    /// Moves each setting's value from the first of its earlier keys that holds a readable one to its current
    /// key (replacing what the current key holds: it was written since the last move, unless the current key was
    /// written while this move was under way), and removes it from every earlier key that holds a readable value,
    /// in one write. A value of the wrong type at an earlier key is reported and left where it is; so is a key
    /// that the store cannot read (a value in etcd that is not JSON text), and the other settings' values are
    /// moved all the same. A move that the store fails to write waits: the settings read the earlier key's
    /// value until it is written (``PendingMoves``).
    ///
    /// A move of a record collection that comes during another thread's record change runs on that thread right
    /// after it, with the migrations, which must follow it (``StoreHub/movingRecords(in:queueing:_:)``); until
    /// then every config reads the collection as the move will write it (``PendingMoves``).
    /// - Returns: Whether the move, and so the migrations, run later.
    func moveValuesFromEarlierKeys() -> Bool {
        // Decided once per class, in the schema: most classes have no earlier keys at all.
        guard schema.hasEarlierKeys else { return false }
        let indices = schema.earlierKeys.indices.filter { !schema.earlierKeys[$0].isEmpty }
        guard !indices.isEmpty else { return false }
        let collections = indices.filter { settings[$0].isRecordCollection }
        let values = indices.filter { !settings[$0].isRecordCollection }
        if !values.isEmpty { moveValues(of: values) }
        guard !collections.isEmpty else { return false }
        let hub = context.hub
        let config = Unchecked(self)
        return hub.movingRecords(in: store, queueing: { showWhileQueued(collections) }) { later in
            config.value.moveValues(of: collections)
            guard later else { return }
            config.value.runMigrations()
            // This config was not told the move's values: it would have read them after its own move.
            hub.storageChanged(keys: Set(config.value.schema.keys.map(hub.storeKey)))
        }
    }

    /// Has every config read the record collections at `indices` as their move will write them, while it waits for
    /// a record change under way.
    private func showWhileQueued(_ indices: [Int]) {
        let targets = schema.keys.map(context.hub.storeKey)
        guard let values = try? store.values(forKeys: indices.flatMap { [targets[$0]] + schema.earlierKeys[$0] })
        else { return }
        var entries: [String: PendingMoves.Entry] = [:]
        for index in indices {
            guard let earlierKey = schema.earlierKeys[index].first(where: { values[$0] != nil }),
                let earlierValue = values[earlierKey]
            else { continue }
            entries[targets[index]] = PendingMoves.Entry(
                earlierKey: earlierKey, earlierValue: earlierValue, currentValue: values[targets[index]],
                mergesRecords: true)
        }
        context.hub.recordWaitingMoves(entries, of: self)
    }

    /// ``moveValuesFromEarlierKeys()`` of the settings at `indices`.
    private func moveValues(of indices: [Int]) {
        // Where each setting's value goes: its current key, or, if a later class moved that key on this storage,
        // where that class reads it (see StoreHub's aliases).
        let targets = schema.keys.map(context.hub.storeKey)
        let oldFiles = previousNamespaceFiles()
        var reports: [StorableConfigError] = []
        do {
            reports = try moveValues(of: indices, to: targets, skipping: [], oldFiles: oldFiles)
        } catch {
            // The store refused to read the keys together: find the keys it cannot read, report each under its
            // own name, and move the values of the settings whose current key can be read without them.
            let keys = indices.flatMap { [targets[$0]] + schema.earlierKeys[$0] }
            var unreadable: Set<String> = []
            for key in keys where !unreadable.contains(key) {
                do {
                    _ = try store.value(forKey: key)
                } catch {
                    unreadable.insert(key)
                    reports.append(.readFailed(key: key, reason: "\(error)"))
                }
            }
            let movable = indices.filter { !unreadable.contains(targets[$0]) }
            do {
                reports += try moveValues(of: movable, to: targets, skipping: unreadable, oldFiles: oldFiles)
            } catch {
                for index in movable { reports.append(.readFailed(key: targets[index], reason: "\(error)")) }
            }
        }
        for report in reports { StorableConfig.report(report) }
    }

    /// Tries again the moves of this config that the store failed to write. A current key written since the move
    /// was planned, while the earlier key was not, keeps its value: it is the newer one, and the earlier key's
    /// value is removed.
    func retryWaitingMoves() {
        let waiting = context.hub.waitingMoves
        let targets = schema.keys.map(context.hub.storeKey)
        let indices = targets.indices.filter { waiting[targets[$0]] != nil && !schema.earlierKeys[$0].isEmpty }
        guard !indices.isEmpty else { return }
        guard indices.contains(where: { settings[$0].isRecordCollection }) else {
            return retryMoves(of: indices, waiting: waiting, to: targets)
        }
        // One at a time with record changes, as a first move (a record change under way runs it after itself).
        let config = Unchecked(self)
        context.hub.movingRecords(in: store) { _ in
            let waiting = config.value.context.hub.waitingMoves
            config.value.retryMoves(of: indices.filter { waiting[targets[$0]] != nil }, waiting: waiting, to: targets)
        }
    }

    private func retryMoves(of indices: [Int], waiting: [String: PendingMoves.Entry], to targets: [String]) {
        guard !indices.isEmpty else { return }
        do {
            let reports = try moveValues(of: indices, to: targets, skipping: [], oldFiles: [], waiting: waiting)
            for report in reports { StorableConfig.report(report) }
        } catch {
            StorableConfig.report(.readFailed(key: targets[indices[0]], reason: "\(error)"))
        }
    }

    /// Moves the values of the settings at `indices`, reading none of the keys in `unreadable`, and returns the
    /// problems to report. Moves that the store fails to write wait in the hub (``PendingMoves``); `waiting` holds
    /// those already waiting, by current key.
    /// - Throws: What reading the store throws; nothing is then moved.
    private func moveValues(
        of indices: [Int], to targets: [String], skipping unreadable: Set<String>, oldFiles: [JSONFileStore],
        waiting: [String: PendingMoves.Entry] = [:]
    ) throws -> [StorableConfigError] {
        let keys = indices.flatMap { [targets[$0]] + schema.earlierKeys[$0] }.filter { !unreadable.contains($0) }
        guard !keys.isEmpty else { return [] }
        var reports: [StorableConfigError] = []
        var moved: [(index: Int, value: StoredValue)] = []
        var planned: [String: PendingMoves.Entry] = [:]
        // What the current keys held when the move was first worked out.
        var firstSeen: [String: StoredValue]?
        let outcome = try PlannedUpdate.run(
            keys: keys, in: store, hub: context.hub, origin: ObjectIdentifier(context)
        ) { snapshot in
            let first = firstSeen ?? snapshot.values
            firstSeen = first
            reports = []
            moved = []
            planned = [:]
            var changes: [String: StoredValue?] = [:]
            for index in indices {
                let target = targets[index]
                let readableEarlierKeys = schema.earlierKeys[index].filter { key in
                    snapshot.values[key].map { settings[index].readProblem($0) == nil } ?? false
                }
                // The current key holds the newer value, and the earlier keys are only emptied, when it was written
                // while this move was under way (through an alias, by a config of this class, or by another process)
                // and its earlier keys were not, or, for a move that waited, since that move was planned while its
                // earlier key was not.
                if snapshot.values[target] != first[target]
                    && schema.earlierKeys[index].allSatisfy({ snapshot.values[$0] == first[$0] })
                    || waiting[target].map({
                        !$0.earlierWins(current: snapshot.values[target], earlier: snapshot.values[$0.earlierKey])
                    }) == true
                {
                    for key in readableEarlierKeys { changes[key] = .some(nil) }
                    if let merged = movedValue(
                        readableEarlierKeys.compactMap { snapshot.values[$0] }, over: snapshot.values[target],
                        currentIsNewer: true, index: index)
                    {
                        changes[target] = merged
                    }
                    continue
                }
                // Every move removes the earlier keys' values in the same write, so a value at an earlier key of
                // the store was written since the last move, by code that still uses that key: it is the newer
                // one, and replaces what the current key holds. A previous namespace's file is another file,
                // which one write cannot change with this one: it is read only while the current key is empty.
                let currentHolds = snapshot.values[target] != nil
                guard
                    let found = firstReadable(
                        index, in: snapshot.values, oldFiles: currentHolds ? [] : oldFiles, reports: &reports)
                else { continue }
                let others = readableEarlierKeys.filter { $0 != found.key }.compactMap { snapshot.values[$0] }
                if let value = movedValue(
                    [found.value] + others, over: snapshot.values[target], currentIsNewer: false, index: index)
                {
                    changes[target] = value
                }
                if !currentHolds { moved.append((index, found.value)) }
                if found.inStore {
                    planned[target] = PendingMoves.Entry(
                        earlierKey: found.key, earlierValue: found.value, currentValue: snapshot.values[target],
                        mergesRecords: settings[index].isRecordCollection)
                }
                for key in readableEarlierKeys { changes[key] = .some(nil) }
            }
            return changes
        }
        switch outcome {
        case .done:
            removeMovedValues(moved, from: oldFiles)
            context.hub.waitingMovesWritten(indices.map { targets[$0] })
        case .writeFailed:
            // Until the store takes the move, every config on it reads the earlier key's value, not the default.
            context.hub.recordWaitingMoves(planned, of: self)
        case .gaveUp:
            reports.append(
                .writeFailed(
                    key: keys[0],
                    reason: "the earlier keys' values kept changing while they were being moved; they stay "
                        + "where they are"))
        }
        return reports
    }

    /// What a move leaves at the current key of the setting at `index`, which holds `current` (`nil`: leave it),
    /// from the values of its earlier keys, the first found first: that one replaces a plain value unless
    /// `currentIsNewer`. A record collection keeps the records of all: those at an earlier key were written by
    /// code that still used it, those at the current key by code that already used the new one (a config of the
    /// old class created after the alias, or of the new class while the move was under way). Where several hold
    /// an id, the newer side's record is kept, and among earlier keys the first's.
    private func movedValue(
        _ moved: [StoredValue], over current: StoredValue?, currentIsNewer: Bool, index: Int
    ) -> StoredValue? {
        let records: [String: StoredValue]
        switch current {
        case nil where settings[index].isRecordCollection: records = [:]
        case .dictionary(let stored)? where settings[index].isRecordCollection: records = stored
        default: return currentIsNewer ? nil : moved.first
        }
        var merged: [String: StoredValue] = [:]
        for case .dictionary(let movedRecords) in moved.reversed() {
            merged.merge(movedRecords) { _, earlierListed in earlierListed }
        }
        merged.merge(records) { moved, current in currentIsNewer ? current : moved }
        return merged == records ? nil : .dictionary(merged)
    }

    /// The value of the first earlier key of the setting at `index` that holds one of its type, with that key and
    /// whether it is in the store: in the store, then in the previous namespaces' default files.
    private func firstReadable(
        _ index: Int, in values: [String: StoredValue], oldFiles: [JSONFileStore], reports: inout [StorableConfigError]
    ) -> (key: String, value: StoredValue, inStore: Bool)? {
        let setting = settings[index]
        for key in schema.earlierKeys[index] {
            let candidates = [values[key]] + oldFiles.map { $0.value(forKey: key) }
            for case let (position, value?) in candidates.enumerated() {
                guard let problem = setting.readProblem(value) else { return (key, value, position == 0) }
                reports.append(
                    .typeMismatch(
                        key: key, expectedType: setting.valueTypeName,
                        found: setting.isSecret ? .string(StorableConfigError.redacted) : value,
                        reason: "it is an earlier key of '\(schema.keys[index])' and \(problem); it is left where "
                            + "it is"))
            }
        }
        return nil
    }

    /// With the default store of Linux, a JSON file under the namespace, the default files of the previous
    /// namespaces that exist.
    private func previousNamespaceFiles() -> [JSONFileStore] {
        let namespaces = type(of: self).previousNamespaces
        guard !namespaces.isEmpty, let file = store.innermostStore as? JSONFileStore,
            file.url == JSONFileStore.defaultURL(namespace: StorableConfig.defaultNamespace).standardizedFileURL
        else { return [] }
        return namespaces.compactMap { namespace in
            let url = JSONFileStore.defaultURL(namespace: namespace)
            guard url != file.url, FileManager.default.fileExists(atPath: url.path) else { return nil }
            // Refused, not moved aside, if it does not parse: it is another program's file.
            return try? JSONFileStore(url: url, refusingCorruptFile: true)
        }
    }

    /// Removes, from the previous namespaces' files, the values that were moved, where they are still there.
    private func removeMovedValues(_ moved: [(index: Int, value: StoredValue)], from oldFiles: [JSONFileStore]) {
        for file in oldFiles {
            for (index, movedValue) in moved {
                // Only the value that was moved: anything else was written since, and is left alone.
                let holding = schema.earlierKeys[index].filter { file.value(forKey: $0) == movedValue }
                guard !holding.isEmpty else { continue }
                do {
                    try file.updateValues(forKeys: holding) { values in
                        for key in holding where values[key] == movedValue { values[key] = nil }
                    }
                } catch {
                    StorableConfig.report(.writeFailed(key: holding[0], reason: "\(error)"))
                }
            }
        }
    }
}

/// A value handed to another thread that the compiler cannot prove safe to share: a config, whose state is behind
/// its own locks.
private struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
