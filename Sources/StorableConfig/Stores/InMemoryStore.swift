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
        storage.withLock { values in
            var result: [String: StoredValue] = [:]
            for key in keys {
                if let value = values[key] { result[key] = value }
            }
            return result
        }
    }

    /// Stores `value` for `key`.
    public func setValue(_ value: StoredValue, forKey key: String) {
        storage.withLock { $0[key] = value }
    }

    /// Removes the value stored for `key`.
    public func removeValue(forKey key: String) {
        storage.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Applies all changes at once.
    public func apply(_ changes: [String: StoredValue?]) {
        storage.withLock { values in
            for (key, value) in changes { values[key] = value }
        }
    }

    /// "memory".
    public var description: String { "memory" }
}
