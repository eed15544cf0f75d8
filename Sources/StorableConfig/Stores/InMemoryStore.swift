/// A store that keeps values in memory, for tests, previews and settings that need not outlive the process.
///
/// ```swift
/// let config = AppConfig(store: InMemoryStore())
/// config.userName = "nkysu1"
/// ```
public final class InMemoryStore: ConfigStore, CustomStringConvertible {
    private let storage: Locked<[String: StoredValue]>

    /// Creates a store holding `values`.
    public init(_ values: [String: StoredValue] = [:]) {
        storage = Locked(values)
    }

    /// Every key and value the store holds.
    public var allValues: [String: StoredValue] {
        storage.withLock { $0 }
    }

    /// Returns the value stored for `key`.
    public func value(forKey key: String) -> StoredValue? {
        storage.withLock { $0[key] }
    }

    /// Returns the values stored for `keys`.
    public func values(forKeys keys: [String]) -> [String: StoredValue] {
        storage.withLock { values in keys.reduce(into: [:]) { $0[$1] = values[$1] } }
    }

    /// Stores `value` for `key`.
    public func setValue(_ value: StoredValue, forKey key: String) {
        // The value replaced (a struct's whole tree, say) is released after the unlock.
        let replaced = storage.withLock { $0.updateValue(value, forKey: key) }
        withExtendedLifetime(replaced) {}
    }

    /// Removes the value stored for `key`.
    public func removeValue(forKey key: String) {
        let removed = storage.withLock { $0.removeValue(forKey: key) }
        withExtendedLifetime(removed) {}
    }

    /// Stores `values` and removes `keysToRemove` at once.
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) {
        storage.withLock { stored in
            for (key, value) in values { stored[key] = value }
            for key in keysToRemove { stored[key] = nil }
        }
    }

    /// Reads, transforms and writes the values of `keys` under the store's lock: no other write, from any
    /// thread, comes between. (`transform` must not use the store.)
    @discardableResult
    public func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try storage.withLock { stored in
            let current = keys.reduce(into: [String: StoredValue]()) { $0[$1] = stored[$1] }
            let (changed, removed) = try ConfigStoreUpdate.apply(transform, to: current, keys: keys)
            for (key, value) in changed { stored[key] = value }
            for key in removed { stored[key] = nil }
            return changed
        }
    }

    /// ``ConfigStoreAtomicity/acrossProcesses``: memory is not shared with other processes, and within this
    /// one every update holds the store's lock.
    public var updateAtomicity: ConfigStoreAtomicity { .acrossProcesses }

    /// "memory".
    public var description: String { "memory" }
}

extension InMemoryStore: CustomReflectable {
    /// What the store is, without its values: `dump` of a config shows no stored value, secret or not.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description])
    }
}
