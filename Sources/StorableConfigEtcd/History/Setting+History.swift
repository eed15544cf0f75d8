import Foundation
import StorableConfig

/// One earlier (or the current) value of a setting, as a store that keeps history holds it: see
/// ``StorableConfig/Setting/history(limit:)``.
///
/// ```swift
/// for entry in try await limits.$maxUploadMB.history(limit: 5) {
///     print(entry.revision, entry.value.map(String.init(describing:)) ?? entry.text)
/// }
/// // 42 80
/// // 17 50
/// ```
@available(watchOS, unavailable)
public struct SettingRevision<Value: Sendable>: Sendable {
    /// The revision of the change that wrote this value (etcd's `mod_revision`).
    public let revision: Int64
    /// The value, or `nil` if the stored text is no longer a value of the setting's type.
    public let value: Value?
    /// The value as the store holds it: its JSON text.
    public let text: String
    /// The revision the key was at when the history was read: the first entry's. A rollback to this entry is
    /// refused if the key has changed since.
    public let latestRevision: Int64

    /// Creates an entry: for a type-erased history and for tests.
    public init(revision: Int64, value: Value?, text: String, latestRevision: Int64) {
        self.revision = revision
        self.value = value
        self.text = text
        self.latestRevision = latestRevision
    }
}

@available(watchOS, unavailable)
extension Setting {
    /// Returns the values the store still keeps for the setting, newest first: the value it holds now, then
    /// each earlier one, each with the revision of the change that wrote it.
    ///
    /// ```swift
    /// let history = try await limits.$maxUploadMB.history(limit: 10)
    /// try await limits.$maxUploadMB.rollBack(to: history[1])   // the value before the last change
    /// ```
    ///
    /// The list ends at `limit` entries, where the key did not exist (it was created, or removed and created
    /// again, there), or where the store forgot earlier revisions (etcd's compaction). A stored value that is not
    /// a value of the setting's type (any more) has a `nil` ``SettingRevision/value``, and its text; one that
    /// another version of the type wrote reads as the setting reads it (see ``StorableConfig/Setting/value(of:)``).
    /// A key that holds no value now has no history. The store is read off the caller's thread.
    /// - Parameter limit: The most entries to return; each costs one read of the cluster.
    /// - Returns: The entries, newest first.
    /// - Throws: ``StorableConfig/StorableConfigError/historyNotKept(store:)`` if the setting's store keeps no
    ///   history (``StorableConfig/InMemoryStore``, ``StorableConfig/JSONFileStore``,
    ///   ``StorableConfig/UserDefaultsStore``); an error if the store cannot be read.
    public func history(limit: Int = 10) async throws -> [SettingRevision<Value>] {
        try await historyEntries(limit: limit) { self.value(of: $0) }
    }

    /// Assigns the value that `entry` holds, if the key has not changed since its history was read.
    ///
    /// The same as ``StorableConfig/AnySetting/rollBack(to:ifUnchangedSince:)`` with the entry's revision and
    /// ``SettingRevision/latestRevision``.
    /// - Throws: What ``StorableConfig/AnySetting/rollBack(to:ifUnchangedSince:)`` throws.
    public func rollBack(to entry: SettingRevision<Value>) async throws {
        try await rollBack(to: entry.revision, ifUnchangedSince: entry.latestRevision)
    }
}

@available(watchOS, unavailable)
extension AnySetting {
    /// The same as ``StorableConfig/Setting/history(limit:)``, with each value as text in the form of
    /// ``StorableConfig/AnySetting/valueText`` (`nil` if it is not a value of the setting's type): for code that
    /// does not know the setting's type.
    public func historyTexts(limit: Int) async throws -> [SettingRevision<String>] {
        try await historyEntries(limit: limit) { self.valueText(of: $0) }
    }

    /// Assigns the value the setting's key held at `revision`, if the key is still at the revision `seen`.
    ///
    /// A rollback is an ordinary assignment of an earlier value: the value must be of the setting's type and
    /// pass its range or check (``StorableConfig/AnySetting/storedValueToAssign(_:)``). It is written only if the
    /// key is still at `seen` (when `nil`, the revision the key is at when the rollback begins), as one
    /// compare-and-swap, so that it never overwrites a change that landed after the caller looked. When it
    /// returns, this config and every config on the storage in this process read the value, and observers have
    /// been told.
    ///
    /// ```swift
    /// try await limits.$maxUploadMB.rollBack(to: 17, ifUnchangedSince: 42)
    /// ```
    /// - Parameters:
    ///   - revision: A revision of the store: the key's value then is assigned.
    ///   - seen: The revision the caller saw the key at; `nil` for the revision it is at now.
    /// - Throws: ``StorableConfig/StorableConfigError/historyNotKept(store:)`` if the store keeps no history;
    ///   ``StorableConfig/StorableConfigError/revisionCompacted(key:revision:)`` if the store no longer keeps
    ///   `revision`; ``StorableConfig/StorableConfigError/noValueAtRevision(key:revision:)`` if the key held
    ///   nothing then; ``StorableConfig/StorableConfigError/typeMismatch(key:expectedType:found:reason:foundText:)``
    ///   or ``StorableConfig/StorableConfigError/invalidText(key:text:expected:)`` if that value is not of the
    ///   setting's type; ``StorableConfig/StorableConfigError/invalidValue(key:value:reason:)`` if it fails the
    ///   setting's check; ``StorableConfig/StorableConfigError/changedSinceRevision(key:seen:current:)`` if the key
    ///   changed after `seen`. Nothing is written then.
    public func rollBack(to revision: Int64, ifUnchangedSince seen: Int64? = nil) async throws {
        let (store, key) = try historyStore()
        try await offThread { [self] in
            let expected = try seen ?? store.history(forKey: key, limit: 1).first?.revision ?? 0
            guard let earlier = try store.value(forKey: key, atRevision: revision) else {
                throw StorableConfigError.noValueAtRevision(key: self.key, revision: revision)
            }
            guard let stored = earlier.value else {
                throw StorableConfigError.invalidText(
                    key: self.key, text: isSecret ? StorableConfigError.redacted : earlier.text,
                    expected: "\(valueTypeName): \(expectedFormat)")
            }
            try store.setValue(storedValueToAssign(stored), forKey: key, ifModifiedAt: expected)
        }
        // Every config on the storage reads the key again, as after an outside change, and tells its observers.
        store.storageDidChange(forKeys: [key])
    }

    /// The entries of the store's history of the setting's key, each value made by `value` from its stored form.
    fileprivate func historyEntries<Entry>(
        limit: Int, _ value: @escaping @Sendable (StoredValue) -> Entry?
    ) async throws -> [SettingRevision<Entry>] {
        let (store, key) = try historyStore()
        let entries = try await offThread { try store.history(forKey: key, limit: max(0, limit)) }
        let latest = entries.first?.revision ?? 0
        return entries.map { entry in
            SettingRevision(
                revision: entry.revision, value: entry.value.flatMap(value), text: entry.text, latestRevision: latest)
        }
    }

    /// The setting's store, if it keeps history, and the key it holds the value under.
    private func historyStore() throws -> (any ConfigStoreHistory, String) {
        guard !holdsRecords else {
            throw StorableConfigError.readFailed(
                key: key, reason: "history and rollback are for @Setting properties, not for a \(type(of: self))")
        }
        guard let store else {
            let which =
                key.isEmpty ? "of a setting that belongs to no config" : "of a \(type(of: self)), which names none"
            throw StorableConfigError.historyNotKept(store: which)
        }
        guard let history = store as? any ConfigStoreHistory else {
            throw StorableConfigError.historyNotKept(store: "\(type(of: store)) (\(store))")
        }
        return (history, storeKey)
    }
}

/// Runs `body` on a thread of its own, not the caller's: a store's calls block until the storage answers.
@available(watchOS, unavailable)
private func offThread<Answer: Sendable>(_ body: @escaping @Sendable () throws -> Answer) async throws -> Answer {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
