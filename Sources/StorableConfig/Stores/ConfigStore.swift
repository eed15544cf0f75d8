/// A place where settings are kept: UserDefaults, a JSON file, memory, or one you write.
///
/// A store maps keys to ``StoredValue``s and knows nothing about Swift types or config classes. A
/// ``StorableConfig`` reads every key it declares from its store once, when it is created, keeps the values
/// in memory, and calls ``setValue(_:forKey:)`` or ``removeValue(forKey:)`` on every assignment.
///
/// ```swift
/// final class RemoteStore: ConfigStore {
///     func value(forKey key: String) throws -> StoredValue? { … }
///     func setValue(_ value: StoredValue, forKey key: String) throws { … }
///     func removeValue(forKey key: String) throws { … }
/// }
/// let config = AppConfig(store: RemoteStore())
/// ```
///
/// ## What an implementation must guarantee
/// - Every method is safe to call from any thread at any time.
/// - After ``setValue(_:forKey:)`` returns, ``value(forKey:)`` returns that value until the next change,
///   and the value is as durable as the store documents (the stores in this package keep it across a
///   normal process exit).
/// - A method that fails throws; the durable storage then still holds the previous value. (A store may keep
///   the change in memory and write it later, as ``JSONFileStore`` does.) Keys that no config declares are
///   never removed or rewritten.
/// - Values come back as they were given, or in a form that ``StoredValue``'s conversions accept for the
///   same Swift type (a date as ISO 8601 text, data as base64 text, a `Float` as a `Double`).
///
/// Configs bound to stores with the same ``storageIdentity`` in one process see each other's writes at
/// once: the framework tells them, so an implementation need not notify anyone.
public protocol ConfigStore: AnyObject, Sendable {
    /// Returns the value stored for `key`, or `nil` if there is none.
    /// - Throws: If the storage cannot be read.
    func value(forKey key: String) throws -> StoredValue?

    /// Returns the values stored for `keys`; keys with no value are absent from the result.
    ///
    /// The default implementation calls ``value(forKey:)`` for each key; a store that can read many keys at
    /// once should implement this.
    /// - Throws: If the storage cannot be read.
    func values(forKeys keys: [String]) throws -> [String: StoredValue]

    /// Stores `value` for `key`.
    /// - Throws: If the value cannot be stored; the durable storage then still holds the previous value.
    func setValue(_ value: StoredValue, forKey key: String) throws

    /// Removes the value stored for `key`, if any.
    /// - Throws: If the storage cannot be written; the durable storage then still holds the previous value.
    func removeValue(forKey key: String) throws

    /// Applies several changes as one write, where the store can: a `nil` value removes the key.
    ///
    /// The default implementation applies the changes one by one.
    /// - Throws: If the storage cannot be written.
    func apply(_ changes: [String: StoredValue?]) throws

    /// Replaces the value of `key` by `transform` of its current value, as one read-modify-write: a `nil`
    /// result removes the key. Record collections use it to change one record of a stored dictionary.
    ///
    /// The default implementation reads with ``value(forKey:)`` and writes with ``setValue(_:forKey:)`` or
    /// ``removeValue(forKey:)``; the framework serialises it against every other write in this process. A
    /// store shared by several processes should make it atomic across them, as ``JSONFileStore`` does.
    /// - Returns: The new value.
    /// - Throws: What `transform` throws (nothing is then changed), or if the storage cannot be written.
    func update(_ key: String, _ transform: (StoredValue?) throws -> StoredValue?) throws -> StoredValue?

    /// Re-reads the underlying storage so that changes made by other processes become visible.
    ///
    /// The default implementation does nothing, which suits stores that always read through.
    /// - Throws: If the storage cannot be read.
    func reload() throws

    /// Returns, and forgets, the keys whose values the store found changed by someone else (another process,
    /// a person editing a file) since it was last asked.
    ///
    /// The framework asks after every write and updates the configs bound to the storage, so a store that
    /// re-reads its storage before writing makes outside changes visible with the next write. The default
    /// implementation returns an empty set.
    func externallyChangedKeys() -> Set<String>

    /// The object whose identity decides which stores share one storage within this process.
    ///
    /// Two ``JSONFileStore``s for one file share it, as do two ``UserDefaultsStore``s for one `UserDefaults`
    /// object. The default is the store itself.
    var storageIdentity: AnyObject { get }
}

extension ConfigStore {
    /// Reads each key with ``value(forKey:)``.
    public func values(forKeys keys: [String]) throws -> [String: StoredValue] {
        var result: [String: StoredValue] = [:]
        for key in keys {
            if let value = try value(forKey: key) { result[key] = value }
        }
        return result
    }

    /// Applies each change with ``setValue(_:forKey:)`` or ``removeValue(forKey:)``.
    public func apply(_ changes: [String: StoredValue?]) throws {
        for (key, value) in changes {
            if let value {
                try setValue(value, forKey: key)
            } else {
                try removeValue(forKey: key)
            }
        }
    }

    /// Reads, transforms and writes the value.
    public func update(_ key: String, _ transform: (StoredValue?) throws -> StoredValue?) throws -> StoredValue? {
        let updated = try transform(try value(forKey: key))
        if let updated {
            try setValue(updated, forKey: key)
        } else {
            try removeValue(forKey: key)
        }
        return updated
    }

    /// Does nothing.
    public func reload() throws {}

    /// Returns an empty set.
    public func externallyChangedKeys() -> Set<String> { [] }

    /// The store itself.
    public var storageIdentity: AnyObject { self }
}
