import Foundation
import StorableConfig

/// The synced keys of one local store, their stamps, and the two moves that keep the store and the cloud in
/// step: a local write takes a new stamp and goes up; a cloud value is merged (``CloudMerge``) and the winner
/// written to whichever side lacks it.
///
/// No lock is held while the store or the cloud is called. Each key's state has a generation, moved on by every
/// change; an operation that finds the generation moved on after its calls (another thread changed the key
/// meanwhile, and its older write may have landed last) writes the key's state again, to both sides.
final class SyncEngine: Sendable {
    let cloud: any KeyValueCloud
    let local: any ConfigStore
    let device: String
    private let now: @Sendable () -> Date
    private let state: Locked<State>
    /// The store whose configs hear of the keys a merge changed: set once, by ``CloudSync``. (Not a closure: a
    /// closure in a generic `Locked` would be wrapped in two more reabstraction thunks at each `withLock`, a chain
    /// that grows with every change until releasing it overflows the stack.)
    let syncedStore = Locked(WeakStore())

    struct WeakStore {
        weak var store: SyncedStore?
    }

    struct KeyState {
        let holdsRecords: Bool
        let cloudKey: String
        var single: Stamped?
        var records = RecordStamps()
        var generation = 0
        /// Who wrote the value this device holds, when another device did.
        var origin: String?
    }

    struct State {
        var clock: HybridClock
        var keys: [String: KeyState] = [:]
        var keyOfCloudKey: [String: String] = [:]
        /// Bytes (key and value) that each synced cloud key takes, as last read or written.
        var cloudBytes: [String: Int] = [:]
        var reported: Set<String> = []
    }

    init(cloud: any KeyValueCloud, local: any ConfigStore, device: String, now: @escaping @Sendable () -> Date) {
        self.cloud = cloud
        self.local = local
        self.device = device
        self.now = now
        state = Locked(State(clock: HybridClock(device: device)))
    }

    static func metaKey(_ key: String) -> String { key + "~cloud" }

    var syncedKeys: [String] { state.withLock { Array($0.keys.keys) } }

    func origin(forKey key: String) -> String? { state.withLock { $0.keys[key]?.origin } }

    /// The wall clock, in milliseconds since 1970; 0 when it reads past the last stamp or not a number: no reading
    /// (the clock's counter carries the order, and no tombstone is dropped by it).
    private var milliseconds: Int64 {
        let value = (now().timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite, value <= Double(CloudStamp.lastMilliseconds) else { return 0 }
        return Int64(exactly: value) ?? .min
    }

    /// How far ahead of this device's clock a cloud stamp is reported: a day, in milliseconds. Clocks that work
    /// differ by seconds; a time zone taken for the time, by hours.
    static let farAhead: Int64 = 24 * 3600 * 1000

    /// Why a write is refused when the clock has no later reading.
    static let clockAtTheLastStamp =
        "this device's clock is at the last stamp, \(CloudStamp.lastMilliseconds).\(UInt32.max) (the start of the "
        + "year 10000, taken from a value stamped there), and no later stamp is left"

    // MARK: Which keys

    /// Starts syncing `settings` (key and whether it holds records): checks the cloud's limits, reads the local
    /// state, and merges each with the cloud. A setting already synced is left as it is.
    func attach(_ settings: [(key: String, holdsRecords: Bool)]) {
        var refused: [(String, String)] = []
        var added: [(key: String, holdsRecords: Bool)] = []
        state.withLock { state in
            for setting in settings where state.keys[setting.key] == nil {
                let cloudKey = CloudLimits.cloudKey(for: setting.key)
                if let other = state.keyOfCloudKey[cloudKey] {
                    refused.append((setting.key, "its cloud key '\(cloudKey)' is also that of '\(other)'"))
                } else if state.keys.count >= CloudLimits.keyCount {
                    refused.append(
                        (setting.key, "the cloud holds at most \(CloudLimits.keyCount) keys, and as many are synced"))
                } else {
                    state.keyOfCloudKey[cloudKey] = setting.key
                    state.keys[setting.key] = KeyState(holdsRecords: setting.holdsRecords, cloudKey: cloudKey)
                    added.append(setting)
                }
            }
        }
        for (key, reason) in refused { report(key, reason) }
        for setting in added {
            let keys = [setting.key, Self.metaKey(setting.key)]
            let values: [String: StoredValue]
            do {
                values = try local.values(forKeys: keys)
            } catch {
                report(setting.key, "its local value cannot be read (\(error))")
                continue
            }
            let now = milliseconds
            let cloudName = cloud.name
            let loaded = state.withLock { state in
                state.keys[setting.key]?.load(
                    from: values, key: setting.key, device: device, cloudName: cloudName, clock: &state.clock, now: now)
            }
            for problem in loaded?.problems ?? [] { report(setting.key, problem) }
            merge(setting.key, rewrite: loaded?.rewrite ?? false)
        }
    }

    // MARK: Local writes

    /// Writes `values` and removes `keysToRemove` in the local store, with new stamps for the synced keys among
    /// them, then sends those to the cloud.
    func write(_ values: [String: StoredValue], removing keysToRemove: [String]) throws {
        let synced = state.withLock { state in (values.keys + keysToRemove).filter { state.keys[$0] != nil } }
        guard !synced.isEmpty else { return try local.setValues(values, removingValuesForKeys: keysToRemove) }
        // The generations before the old records are read: a merge that lands between that read and the write
        // below moves them on, and the key's state is then written again.
        let (recordKeys, generations) = state.withLock { state in
            (
                synced.filter { state.keys[$0]?.holdsRecords == true },
                synced.reduce(into: [String: Int]()) { $0[$1] = state.keys[$1]?.generation }
            )
        }
        let old = recordKeys.isEmpty ? [:] : try local.values(forKeys: recordKeys)
        var all = values
        let taken = try stampLocalChanges(synced, old: old, new: values, meta: &all)
        do {
            try local.setValues(all, removingValuesForKeys: keysToRemove)
        } catch {
            restore(taken)
            throw error
        }
        for key in taken.keys { merge(key, seen: (generations[key] ?? -2) + 1) }
    }

    /// Reads, transforms and writes `keys` in one read-modify-write of the local store, with new stamps for the
    /// synced keys that changed.
    func update(
        _ keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        let synced = state.withLock { state in keys.filter { state.keys[$0] != nil } }
        guard !synced.isEmpty else { return try local.updateValues(forKeys: keys, transform) }
        var taken: [String: KeyState] = [:]
        let requested = Set(keys)
        let result: [String: StoredValue]
        do {
            result = try local.updateValues(forKeys: keys + synced.map(Self.metaKey)) { stored in
                let old = stored.filter { requested.contains($0.key) }
                var visible = old
                try transform(&visible)
                visible = visible.filter { requested.contains($0.key) }
                let changed = synced.filter { old[$0] != visible[$0] }
                restore(taken)
                var written = visible
                taken = try stampLocalChanges(changed, old: old, new: visible, meta: &written)
                for key in requested where written[key] == nil { stored[key] = nil }
                for (key, value) in written { stored[key] = value }
            }
        } catch {
            restore(taken)
            throw error
        }
        for (key, before) in taken { merge(key, seen: before.generation + 1) }
        return result.filter { requested.contains($0.key) }
    }

    /// Takes one new stamp for the local changes of `keys` (from `old` to `new`; a key absent from `new` is
    /// removed) and adds their stamps to `meta`. Returns each key's state before.
    /// - Throws: ``StorableConfig/StorableConfigError/writeFailed(key:reason:)`` when the clock has no later
    ///   reading: the write is refused rather than stamped the same as an earlier one.
    private func stampLocalChanges(
        _ keys: [String], old: [String: StoredValue], new: [String: StoredValue], meta: inout [String: StoredValue]
    ) throws -> [String: KeyState] {
        guard !keys.isEmpty else { return [:] }
        let now = milliseconds
        let taken = state.withLock { state -> [String: KeyState]? in
            var before: [String: KeyState] = [:]
            guard let stamp = state.clock.tick(now: now) else { return nil }
            for key in keys {
                guard var keyState = state.keys[key] else { continue }
                before[key] = keyState
                if keyState.holdsRecords {
                    keyState.records = CloudMerge.recordsAfterLocalWrite(
                        keyState.records, old: old[key]?.members ?? [:], new: new[key]?.members ?? [:], stamp: stamp)
                } else {
                    keyState.single = Stamped(stamp: stamp, value: new[key])
                }
                keyState.origin = nil
                keyState.generation += 1
                meta[Self.metaKey(key)] = keyState.meta
                state.keys[key] = keyState
            }
            return before
        }
        guard let taken else {
            throw StorableConfigError.writeFailed(
                key: keys.min() ?? "",
                reason: "\(Self.clockAtTheLastStamp), so the write is refused rather than stamped the same as another")
        }
        return taken
    }

    /// Puts back the states of a local write that failed, where nothing changed them since.
    private func restore(_ taken: [String: KeyState]) {
        guard !taken.isEmpty else { return }
        state.withLock { state in
            for (key, before) in taken where state.keys[key]?.generation == before.generation + 1 {
                var restored = before
                restored.generation += 2
                state.keys[key] = restored
            }
        }
    }

    // MARK: Merging

    /// Merges the local and cloud values of `key` and writes the winner where it is missing. `seen`: the
    /// generation the caller left the key at; if it moved on, the key's state is written again, as it is with
    /// `rewrite`.
    func merge(_ key: String, seen: Int? = nil, rewrite: Bool = false) {
        var rewrite = rewrite
        if let seen, !rewrite { rewrite = state.withLock { $0.keys[key]?.generation != seen } }
        while let cloudKey = state.withLock({ $0.keys[key]?.cloudKey }) {
            guard let cloudEntry = readCloud(key, cloudKey) else { return }
            let now = milliseconds
            let cloudName = cloud.name
            let plan = state.withLock {
                $0.plan(key, cloud: cloudEntry, device: device, cloudName: cloudName, now: now, rewrite: rewrite)
            }
            guard let plan else { return }
            if let farAhead = plan.farAhead { report(key, farAhead) }
            if let write = plan.write {
                do {
                    try local.setValues(write.values, removingValuesForKeys: write.removing)
                    syncedStore.withLock { $0.store }?.storageDidChange(forKeys: [key])
                } catch {
                    report(key, "the value from another device cannot be written here (\(error))")
                }
            }
            if let upload = plan.upload { send(upload, key: key, cloudKey: cloudKey) }
            // Another thread changed the key while this one wrote: its write or this one may have landed last.
            guard state.withLock({ $0.keys[key]?.generation != plan.generation }) else { return }
            rewrite = true
        }
    }

    /// The cloud's entry for `key`: `.some(nil)` when there is none or it cannot be read (this device's value
    /// then replaces it), `nil` when it must be left alone (a later format, another key's value).
    private func readCloud(_ key: String, _ cloudKey: String) -> CloudEntry?? {
        guard let data = cloud.data(forKey: cloudKey) else { return .some(nil) }
        state.withLock { $0.cloudBytes[cloudKey] = cloudKey.utf8.count + data.count }
        do {
            let entry = try CloudEntry(decoding: data)
            guard entry.key == key else {
                report(key, "the cloud's value under '\(cloudKey)' belongs to '\(entry.key)'")
                return nil
            }
            return .some(entry)
        } catch {
            if error.isLaterFormat {
                report(key, "the cloud's value cannot be read: \(error), so it is left for the version that wrote it")
                return nil
            }
            report(key, "the cloud's value cannot be read (\(error)); this device's value replaces it")
            return .some(nil)
        }
    }

    /// Puts `entry` in the cloud, unless it would go past the cloud's size limits.
    private func send(_ entry: CloudEntry, key: String, cloudKey: String) {
        let data = entry.encoded()
        let bytes = cloudKey.utf8.count + data.count
        let refusal = state.withLock { state -> String? in
            let others = state.cloudBytes.reduce(0) { $0 + ($1.key == cloudKey ? 0 : $1.value) }
            guard others + bytes <= CloudLimits.totalBytes else {
                return "its value takes \(bytes) bytes in the cloud, and the synced keys would take \(others + bytes), "
                    + "over the \(CloudLimits.totalBytes) bytes the cloud holds in all"
            }
            state.cloudBytes[cloudKey] = bytes
            return nil
        }
        // Once per write: each merge until the next one tries again, and the other keys' bytes change the numbers.
        if let refusal { return report(key, refusal, cause: "size of \(entry.stamps.max().map(\.description) ?? "")") }
        cloud.setData(data, forKey: cloudKey)
    }

    // MARK: The cloud's notices

    func received(_ change: CloudChange) {
        switch change.reason {
        case .serverChange, .initialSyncChange:
            let keys = state.withLock { state in change.keys.compactMap { state.keyOfCloudKey[$0] } }
            for key in keys { merge(key) }
        case .quotaViolationChange:
            // The keys the service names, or, when it names none, every key this device sent a value for.
            let keys = state.withLock { state in
                change.keys.isEmpty
                    ? state.keys.filter { $0.value.entry($0.key) != nil }.keys.sorted()
                    : change.keys.compactMap { state.keyOfCloudKey[$0] }
            }
            for key in keys {
                report(key, "the cloud is over its quota, so this device's value may not be stored there", once: false)
            }
        case .accountChange:
            // The new account's values, or the defaults where it has none; nothing of the old account goes up.
            for key in syncedKeys.sorted() {
                let held = state.withLock { state -> Bool in
                    guard var keyState = state.keys[key] else { return false }
                    let held = keyState.single?.value != nil || !keyState.records.values.isEmpty
                    keyState.single = nil
                    keyState.records = RecordStamps()
                    keyState.generation += 1
                    state.keys[key] = keyState
                    return held
                }
                merge(key, rewrite: true)
                if held
                    && state.withLock({ $0.keys[key]?.single == nil && $0.keys[key]?.records.values.isEmpty == true })
                {
                    report(
                        key,
                        "the \(cloud.name) account changed; this device's value stays with the earlier account, and the "
                            + "setting reads its default", once: false)
                }
            }
        }
    }

    func synchronize() -> Bool {
        let answered = cloud.synchronize()
        for key in syncedKeys.sorted() { merge(key) }
        return answered
    }

    // MARK: Reports

    /// Reports `reason` for `key` to the error handler: once per key and `cause` (by default, the reason), or every
    /// time.
    func report(_ key: String, _ reason: String, once: Bool = true, cause: String? = nil) {
        if once {
            let first = state.withLock { $0.reported.insert(key + "\u{0}" + (cause ?? reason)).inserted }
            guard first else { return }
        }
        StorableConfig.report(.notSynced(key: key, reason: reason))
    }
}

extension StoredValue {
    /// A dictionary's members; `nil` for any other value.
    var members: [String: StoredValue]? {
        if case .dictionary(let members) = self { members } else { nil }
    }
}
