import Foundation

/// One earlier (or the current) value of a setting, as a store that keeps history holds it: see
/// ``Setting/history(limit:)``.
///
/// ```swift
/// for entry in try await limits.$maxUploadMB.history(limit: 5) {
///     print(entry.revision, entry.value.map(String.init(describing:)) ?? entry.text)
/// }
/// // 42 80
/// // 17 50
/// ```
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
    /// a value of the setting's type (any more) has a `nil` ``SettingRevision/value``, and its text. A key that
    /// holds no value now has no history. The store is read off the caller's thread.
    /// - Parameter limit: The most entries to return; each costs one read of the cluster.
    /// - Returns: The entries, newest first.
    /// - Throws: ``StorableConfigError/historyNotKept(store:)`` if the setting's store keeps no history
    ///   (``InMemoryStore``, ``JSONFileStore``, ``UserDefaultsStore``); an error if the store cannot be read.
    public func history(limit: Int = 10) async throws -> [SettingRevision<Value>] {
        let (store, key, _) = try historyStore()
        let entries = try await Self.offThread { try store.history(forKey: key, limit: max(0, limit)) }
        let latest = entries.first?.revision ?? 0
        let traits = ValueTraits<Value>.shared
        return entries.map { entry in
            SettingRevision(
                revision: entry.revision, value: entry.value.flatMap { try? traits.decode($0) }, text: entry.text,
                latestRevision: latest)
        }
    }

    /// Assigns the value that `entry` holds, if the key has not changed since its history was read.
    ///
    /// The same as ``rollBack(to:ifUnchangedSince:)`` with the entry's revision and
    /// ``SettingRevision/latestRevision``.
    /// - Throws: What ``rollBack(to:ifUnchangedSince:)`` throws.
    public func rollBack(to entry: SettingRevision<Value>) async throws {
        try await rollBack(to: entry.revision, ifUnchangedSince: entry.latestRevision)
    }

    /// Assigns the value the setting's key held at `revision`, if the key is still at the revision `seen`.
    ///
    /// A rollback is an ordinary assignment of an earlier value: the value must be of the setting's type and
    /// pass its range or check. It is written only if the key is still at `seen` (when `nil`, the revision the
    /// key is at when the rollback begins), as one compare-and-swap, so that it never overwrites a change that
    /// landed after the caller looked. When it returns, this config and every config on the storage in this
    /// process read the value, and observers have been told.
    ///
    /// ```swift
    /// try await limits.$maxUploadMB.rollBack(to: 17, ifUnchangedSince: 42)
    /// ```
    /// - Parameters:
    ///   - revision: A revision of the store: the key's value then is assigned.
    ///   - seen: The revision the caller saw the key at; `nil` for the revision it is at now.
    /// - Throws: ``StorableConfigError/historyNotKept(store:)`` if the store keeps no history;
    ///   ``StorableConfigError/revisionCompacted(key:revision:)`` if the store no longer keeps `revision`;
    ///   ``StorableConfigError/noValueAtRevision(key:revision:)`` if the key held nothing then;
    ///   ``StorableConfigError/typeMismatch(key:expectedType:found:reason:foundText:)`` or
    ///   ``StorableConfigError/invalidText(key:text:expected:)`` if that value is not of the setting's type;
    ///   ``StorableConfigError/invalidValue(key:value:reason:)`` if it fails the setting's check;
    ///   ``StorableConfigError/changedSinceRevision(key:seen:current:)`` if the key changed after `seen`. Nothing
    ///   is written then.
    public func rollBack(to revision: Int64, ifUnchangedSince seen: Int64? = nil) async throws {
        let (store, key, hub) = try historyStore()
        let shownKey = self.key
        try await Self.offThread { [self] in
            let expected = try seen ?? store.history(forKey: key, limit: 1).first?.revision ?? 0
            guard let earlier = try store.value(forKey: key, atRevision: revision) else {
                throw StorableConfigError.noValueAtRevision(key: shownKey, revision: revision)
            }
            let traits = ValueTraits<Value>.shared
            guard let stored = earlier.value else {
                throw StorableConfigError.invalidText(
                    key: shownKey, text: isSecret ? StorableConfigError.redacted : earlier.text,
                    expected: "\(valueTypeName): \(expectedFormat)")
            }
            let value: Value
            do {
                // A value stored by another version of the type reads as it does in the setting.
                var fallbacks: [ValueEvolution.FieldFallback] = []
                value = try decodeFillingGaps(stored, traits: traits, fallbacks: &fallbacks)
                if let fallback = fallbacks.first {
                    throw StoredValueCoding.Failure(
                        description: "its field \(fallback.path) is not of the field's type"
                            + (isSecret ? "" : " (\(fallback.reason))"))
                }
            } catch {
                throw StorableConfigError.typeMismatch(
                    key: shownKey, expectedType: valueTypeName,
                    found: isSecret ? .string(StorableConfigError.redacted) : stored, reason: "\(error)")
            }
            if let error = validationError(value) { throw error }
            var encoded: StoredValue
            do {
                encoded = try traits.encode(value)
            } catch {
                throw StorableConfigError.encodingFailed(
                    key: shownKey, reason: isSecret ? StorableConfigError.redacted : "\(error)")
            }
            // The revision's members that this version of the type does not know are restored with it.
            if let known = knownMembers(of: stored, writing: encoded) {
                encoded = ValueEvolution.carrying(stored, into: encoded, known: known) ?? encoded
            }
            if let overridden { reportAssignment(overriddenBy: overridden) }
            try store.setValue(encoded, forKey: key, ifModifiedAt: expected)
        }
        // Every config on the storage reads the key again, as after an outside change, and tells its observers.
        hub.storageChanged(keys: [key])
    }

    /// The same as ``history(limit:)``, with each value as text in the form of ``valueText`` (`nil` if it is not
    /// a value of the setting's type): for code that does not know the setting's type.
    public func historyTexts(limit: Int) async throws -> [SettingRevision<String>] {
        try await history(limit: limit).map { entry in
            SettingRevision(
                revision: entry.revision,
                value: entry.value.flatMap { try? ValueTraits<Value>.shared.encode($0) }.map(text(of:)),
                text: entry.text, latestRevision: entry.latestRevision)
        }
    }

    /// The setting's store, if it keeps history, the key it holds the value under, and the storage's hub.
    private func historyStore() throws -> (any ConfigStoreHistory, String, StoreHub) {
        guard let binding = locked({ binding }) else {
            throw StorableConfigError.historyNotKept(store: "of a setting that belongs to no config")
        }
        let store = binding.context.store
        guard let history = store as? any ConfigStoreHistory else {
            throw StorableConfigError.historyNotKept(store: "\(type(of: store)) (\(store))")
        }
        return (history, binding.context.hub.storeKey(binding.key), binding.context.hub)
    }

    /// Runs `body` on a thread of its own, not the caller's: a store's calls block until the storage answers.
    static func offThread<Answer: Sendable>(_ body: @escaping @Sendable () throws -> Answer) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}
