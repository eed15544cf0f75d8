import StorableConfig

/// The merge rules, the same on every device: the later stamp wins, per key, and per record for a record
/// collection. Pure functions of the two sides, so that any two devices that hold the same two sides agree.
enum CloudMerge {
    /// The winner of one key: the later of the two stamped values; the one side there is when the other has none.
    static func single(local: Stamped?, cloud: Stamped?) -> Stamped? {
        guard let local else { return cloud }
        guard let cloud else { return local }
        return later(cloud, local)
    }

    /// The later of the cloud's stamped value and this device's. A value this device held before sync was turned
    /// on and has not yet sent (stamped `0.0`) loses to whatever the cloud holds, as a value already in the cloud
    /// should. Two values under one stamp (a value changed without passing through the sync, on a device that has
    /// not relaunched since) are ordered by their JSON text, so that every device picks the same; two whose text
    /// is the same (a date and its text) are the same value, and this device keeps its own.
    static func later(_ cloud: Stamped, _ local: Stamped) -> Stamped {
        if local.stamp.isBeforeSync { return cloud }
        guard cloud.stamp == local.stamp, cloud.value != local.value else {
            return cloud.stamp > local.stamp ? cloud : local
        }
        let cloudText = cloud.value?.jsonText() ?? ""
        let localText = local.value?.jsonText() ?? ""
        return cloudText == localText || cloudText.utf8.lexicographicallyPrecedes(localText.utf8) ? local : cloud
    }

    /// The records of both sides, each record the later of its two stamped values.
    ///
    /// A record that one side lacks is kept unless that side has seen its writer's state at or after its stamp:
    /// then it had the record and deleted it, and its tombstone has since been dropped. The result has seen what
    /// either side saw and every stamp either holds. Tombstones older than the lifetime before `now` are dropped.
    static func records(local: RecordStamps, cloud: RecordStamps, now: Int64) -> RecordStamps {
        var merged = RecordStamps()
        merged.seen = local.seen.merging(cloud.seen) { max($0, $1) }
        for id in Set(local.entries.keys).union(cloud.entries.keys) {
            switch (local.entries[id], cloud.entries[id]) {
            case (let mine?, let theirs?): merged.entries[id] = later(theirs, mine)
            case (let mine?, nil): merged.entries[id] = cloud.hasSeen(mine) ? nil : mine
            case (nil, let theirs?): merged.entries[id] = local.hasSeen(theirs) ? nil : theirs
            case (nil, nil): break
            }
        }
        // Every write either side held is taken in, the ones a later write replaced too.
        for entry in local.entries.values { merged.see(entry.stamp) }
        for entry in cloud.entries.values { merged.see(entry.stamp) }
        merged.pruneTombstones(now: now)
        return merged
    }

    /// The stamps of a record collection after a local write changed its records from `old` to `new`: a record
    /// added or changed takes `stamp`, a record removed becomes a tombstone stamped `stamp`.
    static func recordsAfterLocalWrite(
        _ stamps: RecordStamps, old: [String: StoredValue], new: [String: StoredValue], stamp: CloudStamp
    ) -> RecordStamps {
        var stamps = stamps
        // Only what this write changed in the store: a record the sync took from the cloud and has not yet written
        // keeps the other device's stamp.
        for (id, value) in new where old[id] != value {
            stamps.entries[id] = Stamped(stamp: stamp, value: value)
        }
        for id in old.keys where new[id] == nil {
            stamps.entries[id] = Stamped(stamp: stamp, value: nil)
        }
        stamps.see(stamp)
        // A record the store lost without a write through this device (another program's edit) is not deleted in
        // the cloud: only what this device removed is.
        return stamps
    }
}
