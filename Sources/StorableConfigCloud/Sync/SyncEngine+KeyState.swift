import StorableConfig

extension SyncEngine {
    /// What a merge writes: to the local store (values, and keys to remove) and to the cloud.
    struct Plan {
        let generation: Int
        let write: (values: [String: StoredValue], removing: [String])?
        let upload: CloudEntry?
    }
}

extension SyncEngine.State {
    /// Merges the key's local state with the cloud's entry, moves the clock past the cloud's stamps, and says what
    /// to write where. `rewrite`: write the local state even if the merge changed nothing.
    mutating func plan(
        _ key: String, cloud: CloudEntry?, device: String, cloudName: String, now: Int64, rewrite: Bool
    ) -> SyncEngine.Plan? {
        guard var keyState = keys[key] else { return nil }
        var changed = false
        var upload: CloudEntry?
        var taken: CloudStamp?
        if keyState.holdsRecords {
            var theirs: RecordStamps?
            if case .records(_, let records)? = cloud { theirs = records }
            for entry in theirs?.entries.values ?? [:].values { clock.witness(entry.stamp) }
            let merged = CloudMerge.records(local: keyState.records, cloud: theirs ?? RecordStamps(), now: now)
            if merged != keyState.records {
                taken = merged.entries.filter { keyState.records.entries[$0.key] != $0.value }.values.map(\.stamp).max()
                keyState.records = merged
                changed = true
            }
            if merged != theirs && !(theirs == nil && merged.entries.isEmpty) { upload = .records(key: key, merged) }
        } else {
            var theirs: Stamped?
            if case .single(_, let stamped)? = cloud {
                theirs = stamped
                clock.witness(stamped.stamp)
            }
            let winner = CloudMerge.single(local: keyState.single, cloud: theirs)
            if winner != keyState.single {
                keyState.single = winner
                taken = winner?.stamp
                changed = true
            }
            if let winner, winner != theirs { upload = .single(key: key, winner) }
        }
        if changed {
            keyState.generation += 1
            keyState.origin = taken.flatMap { $0.device == device ? nil : "\(cloudName) (device \"\($0.device)\")" }
        }
        keys[key] = keyState
        return SyncEngine.Plan(
            generation: keyState.generation, write: changed || rewrite ? keyState.localWrite(key) : nil, upload: upload)
    }
}

extension SyncEngine.KeyState {
    /// Reads the key's local state from its value and its stamps in the local store. A value stored without a
    /// stamp was there before sync was turned on.
    mutating func load(from values: [String: StoredValue], key: String, device: String) {
        let meta = values[SyncEngine.metaKey(key)]
        if holdsRecords {
            let stored = values[key]?.members ?? [:]
            let stamps = meta?.members?["stamps"]?.members ?? [:]
            var records = RecordStamps()
            for (id, value) in stored {
                records.entries[id] = Stamped(
                    stamp: Self.stamp(stamps[id]) ?? .beforeSync(device: device), value: value)
            }
            for (id, text) in meta?.members?["deleted"]?.members ?? [:] where stored[id] == nil {
                if let stamp = Self.stamp(text) { records.entries[id] = Stamped(stamp: stamp, value: nil) }
            }
            records.prunedBefore = Self.stamp(meta?.members?["prunedBefore"])
            self.records = records
        } else if let stamp = Self.stamp(meta) {
            single = Stamped(stamp: stamp, value: values[key])
        } else {
            single = values[key].map { Stamped(stamp: .beforeSync(device: device), value: $0) }
        }
    }

    private static func stamp(_ value: StoredValue?) -> CloudStamp? {
        guard case .string(let text)? = value else { return nil }
        return try? CloudStamp(text: text)
    }

    /// Every stamp the local state holds.
    var stamps: [CloudStamp] { holdsRecords ? records.entries.values.map(\.stamp) : single.map { [$0.stamp] } ?? [] }

    /// The stamps as the local store keeps them beside the value, under ``SyncEngine/metaKey(_:)``.
    var meta: StoredValue? {
        guard holdsRecords else { return single.map { .string($0.stamp.description) } }
        guard !records.entries.isEmpty || records.prunedBefore != nil else { return nil }
        var stamps: [String: StoredValue] = [:]
        var deleted: [String: StoredValue] = [:]
        for (id, entry) in records.entries {
            if entry.value == nil {
                deleted[id] = .string(entry.stamp.description)
            } else {
                stamps[id] = .string(entry.stamp.description)
            }
        }
        var meta: [String: StoredValue] = ["stamps": .dictionary(stamps), "deleted": .dictionary(deleted)]
        if let prunedBefore = records.prunedBefore { meta["prunedBefore"] = .string(prunedBefore.description) }
        return .dictionary(meta)
    }

    /// The local store's write of this state: the value (or its removal) and its stamps.
    func localWrite(_ key: String) -> (values: [String: StoredValue], removing: [String]) {
        var values: [String: StoredValue] = [:]
        var removing: [String] = []
        let metaKey = SyncEngine.metaKey(key)
        if let meta { values[metaKey] = meta } else { removing.append(metaKey) }
        if holdsRecords, !records.entries.isEmpty {
            values[key] = .dictionary(records.values)
        } else if !holdsRecords, let value = single?.value {
            values[key] = value
        } else {
            removing.append(key)
        }
        return (values, removing)
    }

    /// The entry the cloud should hold for this state; `nil` when there is nothing to hold.
    func entry(_ key: String) -> CloudEntry? {
        guard holdsRecords else { return single.map { .single(key: key, $0) } }
        return records.entries.isEmpty && records.prunedBefore == nil ? nil : .records(key: key, records)
    }
}
