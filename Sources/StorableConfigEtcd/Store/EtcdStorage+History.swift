import Foundation
import StorableConfig

/// History and rollback: etcd keeps every revision of a key until the cluster is compacted, and a `kv/range` with
/// a `revision` reads the key as it was then.
@available(watchOS, unavailable)
extension EtcdStorage: ConfigStoreHistory {
    /// Walks back from the key's current `mod_revision`: the range at `mod_revision - 1` gives the value before
    /// it, with its own `mod_revision`, and so on, one read per entry, until `limit`, the key's creation (the key
    /// is absent there), or the compaction (etcd refuses the revision): what was read so far is returned.
    func history(forKey key: String, limit: Int) throws -> [StoredRevision] {
        var entries: [StoredRevision] = []
        var revision: Int64?
        while entries.count < limit {
            let entry: EtcdAnswer.Entry?
            do {
                entry = try self.entry(forKey: key, atRevision: revision)
            } catch let error as EtcdClient.ServerError where Self.isCompaction(error) {
                break
            }
            guard let entry else { break }
            entries.append(StoredRevision(revision: entry.revision, text: Self.text(of: entry.value)))
            guard entry.revision > 1 else { break }
            revision = entry.revision - 1
        }
        return entries
    }

    /// The key's value as it was at `revision`, read from the cluster.
    /// - Throws: ``StorableConfig/StorableConfigError/revisionCompacted(key:revision:)`` if the cluster compacted
    ///   that revision away; an error naming the revision if the cluster has not reached it.
    func value(forKey key: String, atRevision revision: Int64) throws -> StoredRevision? {
        do {
            return try entry(forKey: key, atRevision: revision).map {
                StoredRevision(revision: $0.revision, text: Self.text(of: $0.value))
            }
        } catch let error as EtcdClient.ServerError where Self.isCompaction(error) {
            throw StorableConfigError.revisionCompacted(key: key, revision: revision)
        } catch let error as EtcdClient.ServerError where error.message.contains("future revision") {
            throw EtcdClient.Failure(
                description: "the cluster has not reached revision \(revision) yet (\(error)), so \(prefix + key) had "
                    + "no value then")
        }
    }

    /// One transaction that puts `value` only if the key's `mod_revision` is `revision` (`0`: only if the key is
    /// absent, by its `create_revision`).
    /// - Throws: ``StorableConfig/StorableConfigError/changedSinceRevision(key:seen:current:)`` if it is not.
    func setValue(_ value: StoredValue, forKey key: String, ifModifiedAt revision: Int64) throws {
        let compare: [String: Any] =
            revision > 0
            ? [
                "key": EtcdClient.base64(prefix + key), "target": "MOD", "result": "EQUAL",
                "mod_revision": String(revision),
            ]
            : ["key": EtcdClient.base64(prefix + key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"]
        let applied: Bool
        do {
            applied = try commit(puts: [key: value], deletes: [], compares: [compare])
        } catch let lost as EtcdClient.AnswerLost {
            // Sent again, a transaction that was carried out fails its own comparison: see whether the cluster
            // holds the value, written after `revision`, and read the prefix so that the cache holds it too.
            guard let now = try entry(forKey: key, atRevision: nil), now.revision > revision,
                now.value == .text(value.jsonText())
            else { throw lost }
            resynchronise()
            return
        }
        if !applied {
            let now = try entry(forKey: key, atRevision: nil)
            throw StorableConfigError.changedSinceRevision(key: key, seen: revision, current: now?.revision)
        }
    }

    /// The entry of `key` as the cluster holds it now, or held it at `revision`; `nil` if it was absent.
    /// - Throws: ``EtcdClient/ServerError`` when etcd refuses the revision (compacted, or in the future).
    func entry(forKey key: String, atRevision revision: Int64?) throws -> EtcdAnswer.Entry? {
        var request: [String: Any] = ["key": EtcdClient.base64(prefix + key)]
        if let revision { request["revision"] = String(revision) }
        return try client.call("kv/range", request) { [prefix] answer in
            let read = try EtcdAnswer.range(answer, prefix: prefix)
            guard read.entries.keys.allSatisfy({ $0 == key }) else {
                throw EtcdAnswer.Malformed(description: "a read of one key answered with another key")
            }
            let entry = read.entries[key]
            if let revision, let entry, entry.revision > revision {
                throw EtcdAnswer.Malformed(
                    description: "a read at revision \(revision) answered with a value written at the later revision "
                        + "\(entry.revision)")
            }
            return entry
        }
    }

    /// Whether etcd refused a read because the revision was compacted away.
    static func isCompaction(_ error: EtcdClient.ServerError) -> Bool {
        error.message.contains("required revision has been compacted")
    }

    /// The text of a value as the history shows it: JSON text, or why the bytes cannot be read.
    private static func text(of value: EtcdAnswer.Value?) -> String {
        switch value {
        case .text(let text)?: text
        case .unreadable(let reason)?: reason
        case nil: ""
        }
    }
}
