import Foundation
import StorableConfig

/// History and rollback: etcd keeps every revision of a key until the cluster is compacted. See Docs/Etcd.md,
/// "History and rollback".
///
/// ```swift
/// let history = try await limits.$maxUploadMB.history(limit: 5)   // newest first, with mod_revisions
/// try await limits.$maxUploadMB.rollBack(to: history[1])          // refused if the key changed since
/// ```
@available(watchOS, unavailable)
extension EtcdStore: ConfigStoreHistory {
    /// Returns the values `key` held, the current one first, newest first, at most `limit`: one range read per
    /// entry, each at the revision before the last one's `mod_revision`, until `limit`, the key's creation, or the
    /// cluster's compaction.
    /// - Throws: If no member answers.
    public func history(forKey key: String, limit: Int) throws -> [StoredRevision] {
        try storage.history(forKey: key, limit: limit)
    }

    /// Returns the value `key` held at `revision`, read from the cluster; `nil` if it had none.
    /// - Throws: ``StorableConfig/StorableConfigError/revisionCompacted(key:revision:)`` if the cluster compacted
    ///   that revision away, or an error if no member answers.
    public func value(forKey key: String, atRevision revision: Int64) throws -> StoredRevision? {
        try storage.value(forKey: key, atRevision: revision)
    }

    /// Puts `value` under `key` in a transaction that compares the key's `mod_revision` with `revision` (`0`: the
    /// key must be absent), and returns when the cluster has committed it.
    /// - Throws: ``StorableConfig/StorableConfigError/changedSinceRevision(key:seen:current:)`` if the key is at
    ///   another revision; nothing is written then.
    public func setValue(_ value: StoredValue, forKey key: String, ifModifiedAt revision: Int64) throws {
        try storage.setValue(value, forKey: key, ifModifiedAt: revision)
    }
}
