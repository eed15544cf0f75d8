/// A place where settings are kept: UserDefaults, a JSON file, memory, or one you write.
///
/// A store maps keys to ``StoredValue``s and knows nothing about Swift types or config classes. A
/// ``StorableConfig`` reads every key it declares from its store once, when it is created, keeps the values
/// in memory, and calls ``setValue(_:forKey:)`` or ``removeValue(forKey:)`` on every assignment.
///
/// Three methods make a store; the others have default implementations built on them:
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
/// A store whose storage other processes or machines change, or that several store objects share, also
/// adopts ``IdentifiedConfigStore``. `Docs/WritingAStore.md` in the repository walks through a store, and the
/// `StorableConfigTesting` library checks one against what follows in one call.
///
/// ## What every store must guarantee
/// - Every method is safe to call from any thread at any time.
/// - Read your writes: after ``setValue(_:forKey:)`` returns, ``value(forKey:)`` returns that value, and after
///   ``removeValue(forKey:)`` returns, `nil`, until the next change.
/// - A change to one key leaves every other key as it was: keys that no config declares are never removed
///   or rewritten.
/// - Values come back as they were given, or in a form that ``StoredValue``'s conversions accept for the
///   same Swift type (a date as ISO 8601 text, data as base64 text, a `Float` as a `Double`).
/// - ``updateValues(forKeys:_:)`` changes nothing when its transform throws, and otherwise applies the whole
///   result or throws.
///
/// ## What a store documents as its own
/// - **Durability**: when a change is safe (on disk before the call returns, committed by a quorum, in
///   memory only).
/// - **Failure**: what the storage holds after a write throws. A file can promise the previous value; a
///   network store cannot, because a timeout can come after the commit. ``keepsFailedWrites`` says what the
///   configs in this process read then.
/// - **Atomicity across processes**: ``updateAtomicity``.
/// - **Outside changes**: how changes made by others become visible (``reload()``, a watch).
public protocol ConfigStore: AnyObject, Sendable {
    /// Returns the value stored for `key`, or `nil` if there is none.
    /// - Throws: If the storage cannot be read.
    func value(forKey key: String) throws -> StoredValue?

    /// Stores `value` for `key`.
    /// - Throws: If the value cannot be stored.
    func setValue(_ value: StoredValue, forKey key: String) throws

    /// Removes the value stored for `key`, if any.
    /// - Throws: If the storage cannot be written.
    func removeValue(forKey key: String) throws

    /// Returns the values stored for `keys`; keys with no value are absent from the result.
    ///
    /// The default implementation calls ``value(forKey:)`` for each key; a store that can read many keys at
    /// once should implement it.
    /// - Throws: If the storage cannot be read.
    func values(forKeys keys: [String]) throws -> [String: StoredValue]

    /// Stores `values` and removes the values of `keysToRemove`, as one write where the store can.
    ///
    /// The framework calls it for a ``StorableConfig/batch(_:)``. The default implementation calls
    /// ``setValue(_:forKey:)`` and ``removeValue(forKey:)`` for each key, so a failure can leave some of the
    /// changes made.
    /// - Throws: If the storage cannot be written.
    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws

    /// Reads the values of `keys`, lets `transform` change them, and writes the result, as one
    /// read-modify-write: record collections change one record of a stored dictionary with it, and moves and
    /// migrations change several keys at once.
    ///
    /// `transform` receives the keys that hold a value; it may change, add or remove entries for `keys`
    /// (entries for other keys are ignored). If it throws, nothing is changed. When ``updateAtomicity`` is
    /// ``ConfigStoreAtomicity/withinProcess``, the framework makes the record changes of one storage in this process
    /// one at a time, with the moves of record collections from a renamed class's keys (one that code inside a call
    /// starts on the same thread goes ahead), and nothing else: a write between the read and the write of the default
    /// implementation is overwritten.
    /// The default implementation reads with ``values(forKeys:)`` and writes with
    /// ``setValues(_:removingValuesForKeys:)``.
    /// - Returns: The values of `keys` after the write.
    /// - Throws: What `transform` throws, or if the storage cannot be read or written.
    @discardableResult
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue]

    /// Whether ``updateValues(forKeys:_:)`` is atomic against writers in other processes. The default is
    /// ``ConfigStoreAtomicity/withinProcess``.
    var updateAtomicity: ConfigStoreAtomicity { get }

    /// Whether an assigned value whose write failed stays visible in this process.
    ///
    /// Either way the failure is reported (``StorableConfigError/writeFailed(key:reason:)``), once per key and
    /// cause until a write to the storage succeeds, and the store is asked for nothing more. `true`, the default: every config on the storage reads the assigned value, in
    /// memory only, until the key's next change (a store may write it later, as ``JSONFileStore`` does with its
    /// next write). `false`: every config reads the key from the store again, so the setting goes back to the
    /// value the store holds and observers are told of no change; a store that other servers share (a fleet's
    /// etcd) chooses it, because a value that one process believes and the others do not is worse than a failed
    /// write. Only a write that failed is affected: a failed read-modify-write (``updateValues(forKeys:_:)``)
    /// always leaves the configs on what the store holds. One failed write that a store keeping them did not keep
    /// is thrown as ``WriteNotKept``.
    var keepsFailedWrites: Bool { get }

    /// Re-reads the underlying storage so that changes made by others become visible.
    ///
    /// The default implementation does nothing, which suits stores that always read through.
    /// - Throws: If the storage cannot be read.
    func reload() throws

    /// Where the value stored for `key` came from, when the store knows more than "the store": a store that
    /// syncs keys with other devices says `iCloud (device "iPad")` for a value another device wrote.
    /// ``Setting/origin`` and ``ConfigChange/origin`` show it. The default is `nil`.
    ///
    /// It is asked while no lock of the framework is held, and should answer from memory.
    func origin(forKey key: String) -> String?
}

/// How far a store's ``ConfigStore/updateValues(forKeys:_:)`` is atomic.
public enum ConfigStoreAtomicity: Sendable, Hashable {
    /// Not atomic by itself: the framework makes the storage's record changes in this process one at a time, and
    /// any other write (in this process or another) may land between the read and the write.
    case withinProcess
    /// One all-or-nothing write that no writer in any process can interleave with: a file lock, a
    /// compare-and-swap transaction.
    case acrossProcesses
}

/// A store whose storage is shared: by several store objects in this process, or by other processes or
/// machines that change it.
///
/// Configs bound to stores with the same ``storageIdentity`` in one process see each other's writes at
/// once, without the store's help. Changes made elsewhere (another process, a person editing a file, an
/// operator of a remote store) reach the configs when the store reports them with
/// ``ConfigStore/storageDidChange(forKeys:)``, from any thread, at any time.
///
/// ```swift
/// final class RemoteStore: IdentifiedConfigStore {
///     // … the three ConfigStore methods …
///     var storageIdentity: AnyObject { connection }
///     func watchCallback(changedKeys: Set<String>) { storageDidChange(forKeys: changedKeys) }
/// }
/// ```
public protocol IdentifiedConfigStore: ConfigStore {
    /// The object whose identity decides which stores share one storage within this process.
    ///
    /// Two ``JSONFileStore``s for one file share it, as do two ``UserDefaultsStore``s for one `UserDefaults`
    /// object.
    var storageIdentity: AnyObject { get }
}

/// A store that passes its calls on to another, adding something on the way (secrets kept apart, syncing): what
/// the framework offers a store of its own kind (the text a ``JSONFileStore`` holds for a value, the default
/// file's earlier namespaces) it offers a wrapper of it too.
public protocol WrappingConfigStore: ConfigStore {
    /// The store this one passes its calls on to.
    var wrappedStore: any ConfigStore { get }
}

/// What a store whose failed writes are kept (``ConfigStore/keepsFailedWrites``) throws for one it did not keep:
/// a wrapper that sends some keys elsewhere (a secret store that failed) says so, and every config reads those keys
/// from the store again, as after a failed write of a store that keeps none. `error` is what is reported.
public struct WriteNotKept: Error, CustomStringConvertible {
    /// The problem reported: a ``StorableConfigError/writeFailed(key:reason:)`` naming the key, as a rule.
    public let error: StorableConfigError

    /// A failed write that no config believes, reported as `error`.
    public init(_ error: StorableConfigError) {
        self.error = error
    }

    /// The description of `error`.
    public var description: String { error.description }
}

extension ConfigStore {
    /// The stores from this one down through its wrappers (``WrappingConfigStore``), this one first.
    var storeChain: [any ConfigStore] {
        var chain: [any ConfigStore] = [self]
        // A wrapper that wraps itself, or one of its wrappers, ends the chain.
        while let wrapper = chain.last as? any WrappingConfigStore,
            !chain.contains(where: { $0 === wrapper.wrappedStore })
        {
            chain.append(wrapper.wrappedStore)
        }
        return chain
    }

    /// The store at the bottom of the wrappers, if this is one (``WrappingConfigStore``); else this store.
    var innermostStore: any ConfigStore { storeChain.last ?? self }
}

/// The earlier name of ``IdentifiedConfigStore``: a store that names the storage it shares.
@available(*, deprecated, renamed: "IdentifiedConfigStore")
public typealias SharedConfigStore = IdentifiedConfigStore

extension ConfigStore {
    /// Tells every config bound to this store's storage (its ``IdentifiedConfigStore/storageIdentity``, or the
    /// store itself) that the values of `keys` changed outside the configs: each reads them again with
    /// ``ConfigStore/values(forKeys:)`` and tells its observers. A store calls it for a change made in another
    /// process; a module that writes the store itself (a rollback) calls it after the write.
    ///
    /// Call it after the store's own state holds the new values, without holding a lock that
    /// ``ConfigStore/values(forKeys:)`` takes. Called while the framework is writing to this storage (from
    /// inside ``ConfigStore/setValue(_:forKey:)``), the configs are told when that write ends.
    public func storageDidChange(forKeys keys: Set<String>) {
        let identity = (self as? any IdentifiedConfigStore)?.storageIdentity ?? self
        guard let hub = StoreHub.existingHub(for: identity) else { return }
        hub.storeReportedChange()
        hub.storageChanged(keys: keys)
    }
}

extension ConfigStore {
    /// `nil`: the store names no origin beyond itself.
    public func origin(forKey key: String) -> String? { nil }

    /// Reads each key with ``value(forKey:)``.
    public func values(forKeys keys: [String]) throws -> [String: StoredValue] {
        var result: [String: StoredValue] = [:]
        for key in keys {
            if let value = try value(forKey: key) { result[key] = value }
        }
        return result
    }

    /// Applies each change with ``setValue(_:forKey:)`` or ``removeValue(forKey:)``.
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        for (key, value) in values { try setValue(value, forKey: key) }
        for key in keysToRemove { try removeValue(forKey: key) }
    }

    /// Reads with ``values(forKeys:)``, transforms, and writes what changed with
    /// ``setValues(_:removingValuesForKeys:)``.
    @discardableResult
    public func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        let current = try values(forKeys: keys)
        let (changed, removed) = try ConfigStoreUpdate.apply(transform, to: current, keys: keys)
        if !changed.isEmpty || !removed.isEmpty { try setValues(changed, removingValuesForKeys: removed) }
        return changed
    }

    /// ``ConfigStoreAtomicity/withinProcess``.
    public var updateAtomicity: ConfigStoreAtomicity { .withinProcess }

    /// `true`: a value whose write failed stays visible in this process.
    public var keepsFailedWrites: Bool { true }

    /// Does nothing.
    public func reload() throws {}
}

/// What an ``ConfigStore/updateValues(forKeys:_:)`` changes, worked out once for every store.
enum ConfigStoreUpdate {
    /// Runs `transform` on `current`, the values of `keys`, and returns the values of `keys` after it, every one
    /// of which is to be stored (entries for keys outside `keys` are dropped), and the keys to remove.
    static func apply(
        _ transform: (inout [String: StoredValue]) throws -> Void, to current: [String: StoredValue], keys: [String]
    ) rethrows -> (changed: [String: StoredValue], removed: [String]) {
        var updated = current
        try transform(&updated)
        var changed: [String: StoredValue] = [:]
        var removed: [String] = []
        for key in keys {
            switch (current[key], updated[key]) {
            case (_, let new?):
                // Written whether or not it changed: comparing could cost more than writing (a record
                // collection's value is a dictionary of every record).
                changed[key] = new
            case (_?, nil): removed.append(key)
            case (nil, nil): break
            }
        }
        return (changed, removed)
    }
}
