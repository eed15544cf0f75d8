/// A store that keeps earlier values of its keys, each at a revision, and writes a key only if it is still at
/// the revision the caller saw: what `Setting.history(limit:)` and `rollBack(to:)`, of the `StorableConfigEtcd`
/// library, need.
///
/// `EtcdStore` adopts it: etcd keeps every revision of a key until the cluster is compacted.
///
/// ```swift
/// let history = try store.history(forKey: "prod.Limits.maxUploadMB", limit: 5)
/// // [StoredRevision(revision: 42, text: "80"), StoredRevision(revision: 17, text: "50")]
/// try store.setValue(.int(50), forKey: "prod.Limits.maxUploadMB", ifModifiedAt: 42)
/// ```
///
/// ## What an implementation must guarantee
/// - Revisions are positive and grow with every change of the store; a key's revision is the revision of its
///   last change.
/// - ``history(forKey:limit:)`` lists the value the key holds now first, then each earlier one, newest first,
///   and ends, without throwing, where the store no longer keeps earlier values or where the key did not exist.
/// - ``setValue(_:forKey:ifModifiedAt:)`` writes nothing unless the key's revision is exactly the one given,
///   checked and written as one step that no writer in any process can come between.
/// - After a conditional write returns, ``ConfigStore/value(forKey:)`` reads the value written (read your writes).
public protocol ConfigStoreHistory: ConfigStore {
    /// Returns the values `key` held, the current one first, newest first, at most `limit` of them.
    /// - Throws: If the store cannot be read.
    func history(forKey key: String, limit: Int) throws -> [StoredRevision]

    /// Returns the value `key` held at `revision`, with the revision of the change that wrote it; `nil` if the key
    /// held no value then.
    /// - Throws: ``StorableConfigError/revisionCompacted(key:revision:)`` if the store no longer keeps that
    ///   revision, or an error if it cannot be read.
    func value(forKey key: String, atRevision revision: Int64) throws -> StoredRevision?

    /// Stores `value` for `key` if the key is still at `revision` (`0`: if it holds no value).
    /// - Throws: ``StorableConfigError/changedSinceRevision(key:seen:current:)`` if the key is at another revision
    ///   (nothing is written), or an error if the store cannot be written.
    func setValue(_ value: StoredValue, forKey key: String, ifModifiedAt revision: Int64) throws
}

/// One value of a key as a ``ConfigStoreHistory`` keeps it: the text stored, and the revision of the change that
/// wrote it.
///
/// ```swift
/// let entry = StoredRevision(revision: 17, text: "50")
/// entry.value    // .int(50)
/// ```
public struct StoredRevision: Sendable, Hashable {
    /// The revision of the change that wrote this value (etcd's `mod_revision`).
    public let revision: Int64
    /// The value as the store holds it: JSON text, unless someone stored other text.
    public let text: String

    /// Creates an entry for `text`, written at `revision`.
    public init(revision: Int64, text: String) {
        self.revision = revision
        self.text = text
    }

    /// The value that ``text`` holds; `nil` if it is not JSON text.
    public var value: StoredValue? { try? StoredValue(jsonText: text) }
}
