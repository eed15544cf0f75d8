import StorableConfig

extension SyncEngine {
    /// What a merge writes: to the local store (values, and keys to remove) and to the cloud.
    struct Plan {
        let generation: Int
        let write: (values: [String: StoredValue], removing: [String])?
        let upload: CloudEntry?
        /// A cloud stamp more than ``SyncEngine/farAhead`` ahead of this device's clock, to report.
        let farAhead: String?
    }
}

extension SyncEngine.State {
    /// Merges the key's local state with the cloud's entry, moves the clock past the cloud's stamps, and says what
    /// to write where. `rewrite`: write the local state even if the merge changed nothing.
    mutating func plan(
        _ key: String, cloud: CloudEntry?, device: String, cloudName: String, now: Int64, rewrite: Bool
    ) -> SyncEngine.Plan? {
        guard var keyState = keys[key] else { return nil }
        // What this device's clock reads before it witnesses the cloud's stamps: its wall clock, or the latest stamp
        // it saw if that is later.
        let reading = max(now, clock.last.milliseconds)
        var changed = false
        var upload: CloudEntry?
        var taken: CloudStamp?
        if keyState.holdsRecords {
            var theirs: RecordStamps?
            if case .records(_, let records)? = cloud { theirs = records }
            for entry in theirs?.entries.values ?? [:].values { clock.witness(entry.stamp) }
            for stamp in theirs?.seen.values ?? [:].values { clock.witness(stamp) }
            var merged = CloudMerge.records(local: keyState.records, cloud: theirs ?? RecordStamps(), now: now)
            // A record held before sync was turned on goes up with a stamp of its own.
            for (id, entry) in merged.entries where entry.stamp.isBeforeSync {
                merged.entries[id]?.stamp = .sentBeforeSync(device: device)
                merged.see(.sentBeforeSync(device: device))
            }
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
            var winner = CloudMerge.single(local: keyState.single, cloud: theirs)
            // A value held before sync was turned on goes up with a stamp of its own.
            if winner?.stamp.isBeforeSync == true { winner?.stamp = .sentBeforeSync(device: device) }
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
        var farAhead: String?
        if let newest = cloud?.stamps.max(), newest.milliseconds > reading,
            newest.milliseconds - reading > SyncEngine.farAhead
        {
            farAhead =
                "its value from device \"\(newest.device)\" is stamped \(newest), more than a day ahead of this "
                + "device's clock; it wins, as a later stamp does, and this device's clock moves to it"
        }
        return SyncEngine.Plan(
            generation: keyState.generation, write: changed || rewrite ? keyState.localWrite(key) : nil, upload: upload,
            farAhead: farAhead)
    }
}

extension SyncEngine.KeyState {
    /// Reads the key's local state from its value and its stamps in the local store, moving `clock` past them.
    ///
    /// A value stored without a stamp was there before sync was turned on; so was one whose stamp cannot be read
    /// (one past the last stamp, which the version before this one took from the cloud): it is reported. A value
    /// that differs from the one its stamp was given to (its digest, kept beside the stamp, differs) was written
    /// without passing through the sync (another program, a widget writing the shared suite): it takes a new stamp,
    /// as a write now.
    /// - Returns: Whether the stamps must be written again (a value took a new stamp, or a stamp could not be read),
    ///   and the problems to report.
    mutating func load(
        from values: [String: StoredValue], key: String, device: String, cloudName: String, clock: inout HybridClock,
        now: Int64
    ) -> (rewrite: Bool, problems: [String]) {
        let meta = values[SyncEngine.metaKey(key)]
        var changedOutside: [String] = []
        var problems: [String] = []
        let read = { (kept: StoredValue?) in Self.stampAndDigest(kept, problems: &problems) }
        if holdsRecords {
            let stored = values[key]?.members ?? [:]
            let stamps = meta?.members?["stamps"]?.members ?? [:]
            var records = RecordStamps()
            for (id, value) in stored {
                let written = read(stamps[id])
                records.entries[id] = Stamped(stamp: written?.stamp ?? .beforeSync(device: device), value: value)
                // A record with no stamp beside it was added outside the sync; one whose stamp cannot be read counts
                // as held before sync, as a setting's does.
                if meta != nil && (stamps[id] == nil || written.map { $0.digest != Self.digest(value) } == true) {
                    changedOutside.append(id)
                }
            }
            for (id, text) in meta?.members?["deleted"]?.members ?? [:] {
                guard let stamp = read(text)?.stamp else { continue }
                if stored[id] == nil { records.entries[id] = Stamped(stamp: stamp, value: nil) }
            }
            // A record removed without passing through the sync.
            for id in stamps.keys where stored[id] == nil {
                records.entries[id] = Stamped(stamp: .beforeSync(device: device), value: nil)
                changedOutside.append(id)
            }
            for (device, text) in meta?.members?["seen"]?.members ?? [:] {
                if let stamp = read(text)?.stamp { records.seen[device] = stamp }
            }
            self.records = records
        } else if let written = read(meta) {
            single = Stamped(stamp: written.stamp, value: values[key])
            if written.digest != Self.digest(values[key]) { changedOutside.append(key) }
        } else {
            single = values[key].map { Stamped(stamp: .beforeSync(device: device), value: $0) }
        }
        for stamp in stamps + records.seen.values { clock.witness(stamp) }
        // Who wrote the value held, as its stamp says: another device's value is still its, after a relaunch.
        let newest = holdsRecords ? records.entries.values.filter { $0.value != nil }.map(\.stamp).max() : single?.stamp
        if let newest, newest.device != device, !newest.isBeforeSync {
            origin = "\(cloudName) (device \"\(newest.device)\")"
        }
        let unreadable = !problems.isEmpty
        guard !changedOutside.isEmpty else { return (unreadable, problems) }
        guard let fresh = clock.tick(now: now) else {
            problems.append(
                "its value was changed outside the sync, but \(SyncEngine.clockAtTheLastStamp); it keeps its stamp")
            return (unreadable, problems)
        }
        origin = nil
        if holdsRecords {
            for id in changedOutside { records.entries[id]?.stamp = fresh }
            records.see(fresh)
        } else {
            single?.stamp = fresh
        }
        return (true, problems)
    }

    /// A stamp as the local store keeps it: `<stamp> <digest>`, the digest of the value it was given to. A text
    /// that is not a stamp is added to `problems`.
    private static func stampAndDigest(
        _ value: StoredValue?, problems: inout [String]
    ) -> (stamp: CloudStamp, digest: String)? {
        guard case .string(let text)? = value else { return nil }
        // The digest has no space; a device identifier may.
        let space = text.lastIndex(of: " ")
        do {
            let stamp = try CloudStamp(text: String(text[..<(space ?? text.endIndex)]))
            return (stamp, space.map { String(text[text.index(after: $0)...]) } ?? "")
        } catch {
            problems.append(
                "its stamp kept in the local store cannot be read (\(error)), so the clock does not move to it, and "
                    + "the value it stamps counts as one held before sync was turned on (a deletion, as none)")
            return nil
        }
    }

    /// 16 hexadecimal digits of the FNV-1a hash of the value's JSON text; `-` for no value.
    static func digest(_ value: StoredValue?) -> String {
        guard let value else { return "-" }
        return String(CloudLimits.fnv1a(value.jsonText()), radix: 16)
    }

    private static func kept(_ stamped: Stamped) -> StoredValue {
        .string("\(stamped.stamp) \(digest(stamped.value))")
    }

    /// Every stamp the local state holds.
    var stamps: [CloudStamp] { holdsRecords ? records.entries.values.map(\.stamp) : single.map { [$0.stamp] } ?? [] }

    /// The stamps as the local store keeps them beside the value, under ``SyncEngine/metaKey(_:)``, each with the
    /// digest of its value.
    var meta: StoredValue? {
        guard holdsRecords else { return single.map(Self.kept) }
        guard !records.entries.isEmpty || !records.seen.isEmpty else { return nil }
        var stamps: [String: StoredValue] = [:]
        var deleted: [String: StoredValue] = [:]
        for (id, entry) in records.entries {
            if entry.value == nil {
                deleted[id] = Self.kept(entry)
            } else {
                stamps[id] = Self.kept(entry)
            }
        }
        var meta: [String: StoredValue] = ["stamps": .dictionary(stamps), "deleted": .dictionary(deleted)]
        if !records.seen.isEmpty { meta["seen"] = .dictionary(records.seen.mapValues { .string($0.description) }) }
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
        return records.entries.isEmpty && records.seen.isEmpty ? nil : .records(key: key, records)
    }
}
