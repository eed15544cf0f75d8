/// A change to several keys that is worked out from their values outside every lock (working it out may run
/// the value types' own decoding, or a migration the user wrote), then written with one
/// ``ConfigStore/updateValues(forKeys:_:)`` that first checks that the values are still the ones it was worked
/// out from, and otherwise works it out again from the values the store holds now.
///
/// On a store whose update is atomic across processes, two processes making the same change at once make it
/// once: the second finds the values changed, works the change out again, and finds nothing left to do.
struct PlannedUpdate {
    /// The values read so far, by key; a key with no value is known and absent.
    final class Snapshot {
        private(set) var values: [String: StoredValue] = [:]
        private(set) var known: [String] = []
        private var knownSet: Set<String> = []
        private let store: any ConfigStore

        init(store: any ConfigStore, keys: [String]) throws {
            self.store = store
            values = try store.values(forKeys: keys)
            for key in keys where knownSet.insert(key).inserted { known.append(key) }
        }

        /// The value of `key`, read from the store the first time it is asked for.
        func value(forKey key: String) throws -> StoredValue? {
            if knownSet.insert(key).inserted {
                known.append(key)
                values[key] = try store.value(forKey: key)
            }
            return values[key]
        }

        /// Takes the values the store holds under its lock, when they differ from those planned from.
        func replace(with seen: [String: StoredValue]) {
            values = seen.filter { knownSet.contains($0.key) }
        }
    }

    /// How the update ended.
    enum Outcome {
        /// The change was written (or there was nothing to change).
        case done(changes: [String: StoredValue?])
        /// The store failed to write; it was reported, and the store holds what it held.
        case writeFailed
        /// The values kept changing under the plan, 50 times.
        case gaveUp
    }

    private struct ValuesChanged: Error {
        let seen: [String: StoredValue]
    }

    /// Reads `keys`, lets `plan` work out the changes (key → new value, `nil` to remove; empty for none), and
    /// writes them through `hub`, so that the other configs bound to the storage take them.
    /// - Throws: What reading the store or `plan` throws; nothing is then written.
    static func run(
        keys: [String], in store: any ConfigStore, hub: StoreHub, origin: ObjectIdentifier,
        plan: (Snapshot) throws -> [String: StoredValue?]
    ) throws -> Outcome {
        let snapshot = try Snapshot(store: store, keys: keys)
        for _ in 0..<50 {
            let changes = try plan(snapshot)
            if changes.isEmpty { return .done(changes: [:]) }
            let planned = snapshot.values
            let verified = snapshot.known
            let written = verified + changes.keys.filter { !verified.contains($0) }
            do {
                let result = try hub.update(
                    keys: written,
                    { values in
                        for key in verified where values[key] != planned[key] {
                            throw ValuesChanged(seen: values)
                        }
                        for (key, value) in changes { values[key] = value }
                    }, in: store, from: origin, storeKeys: true)
                return result.failed ? .writeFailed : .done(changes: changes)
            } catch let changed as ValuesChanged {
                snapshot.replace(with: changed.seen)
            }
        }
        return .gaveUp
    }
}
