import Foundation

/// What etcd's answers hold, read strictly: an answer comes from a network peer, and one that is not what etcd
/// sends is refused as a whole (the client then asks the next member), never taken for an empty or a successful
/// one.
@available(watchOS, unavailable)
enum EtcdAnswer {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// A value as the store keeps it: JSON text, or why the bytes etcd holds cannot be read.
    enum Value: Equatable {
        case text(String)
        case unreadable(String)
    }

    /// A key under the prefix, its value (`nil` once deleted) and its `mod_revision`.
    struct Entry {
        let key: String
        let value: Value?
        let revision: Int64
    }

    /// The cluster's revision in an answer's header.
    /// - Throws: ``Malformed`` if the header or its revision is missing or is not a positive decimal number.
    static func headerRevision(of answer: [String: Any]) throws -> Int64 {
        guard let header = answer["header"] as? [String: Any] else {
            throw Malformed(description: "the answer has no header, which every etcd answer has")
        }
        guard let revision = EtcdClient.revision(header["revision"]), revision > 0 else {
            throw Malformed(description: "the answer's header has no revision that etcd would send")
        }
        return revision
    }

    /// The cluster's id in an answer's header (a decimal string, as the gateway sends 64-bit integers), or ""
    /// if there is none that etcd would send.
    static func clusterID(of answer: [String: Any]) -> String {
        guard let id = (answer["header"] as? [String: Any])?["cluster_id"] as? String, !id.isEmpty, id.count <= 20,
            id.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return "" }
        return id
    }

    /// The entries of a `kv/range` answer that are under `prefix`, and the revision the read was at.
    /// - Throws: ``Malformed`` if the answer is not one etcd sends: no header revision, `kvs` that is not a list of
    ///   objects, a key that is not base64, or a `mod_revision` that is not after 0 and at most the header's.
    static func range(
        _ answer: [String: Any], prefix: String
    ) throws -> (revision: Int64, entries: [String: Entry]) {
        let revision = try headerRevision(of: answer)
        var found: [String: Entry] = [:]
        for kv in try keyValues(answer["kvs"]) {
            guard let entry = try entry(kv, prefix: prefix, atMost: revision) else { continue }
            found[entry.key] = entry
        }
        return (revision, found)
    }

    /// The `kvs` of a range answer: absent (no key), or a list of objects.
    static func keyValues(_ field: Any?) throws -> [[String: Any]] {
        guard let field else { return [] }
        guard let list = field as? [[String: Any]] else {
            throw Malformed(description: "the answer's kvs is not a list of keys and values")
        }
        return list
    }

    /// The entry of one key-value object, if its key is under `prefix` and is text.
    /// - Throws: ``Malformed`` if the key is not base64, or the revision is not in `1...limit`.
    static func entry(
        _ kv: [String: Any], prefix: String, atMost limit: Int64 = .max, deleted: Bool = false
    ) throws -> Entry? {
        let fullKey: String
        switch EtcdClient.decoded(base64: kv["key"]) {
        case .text(let text): fullKey = text
        case .notUTF8: return nil  // Not a setting's key: those are text.
        case .notBase64: throw Malformed(description: "a key in the answer is not base64, as etcd sends keys")
        }
        guard let key = settingKey(fullKey, prefix: prefix) else { return nil }
        guard let revision = EtcdClient.revision(kv["mod_revision"]), revision > 0, revision <= limit else {
            throw Malformed(
                description: "the key \(HTTPResponseReader.shown(fullKey)) comes with a mod_revision that etcd "
                    + "would not send (\(HTTPResponseReader.shown("\(kv["mod_revision"] ?? "none")")), "
                    + "the answer being at revision \(limit))")
        }
        if deleted { return Entry(key: key, value: nil, revision: revision) }
        return Entry(key: key, value: value(of: kv, fullKey: fullKey), revision: revision)
    }

    /// The value of a key-value object, as the store keeps it.
    static func value(of kv: [String: Any], fullKey: String) -> Value {
        // etcd leaves out an empty value.
        guard kv["value"] != nil else { return .text("") }
        switch EtcdClient.decoded(base64: kv["value"]) {
        case .text(let text):
            return .text(text)
        case .notUTF8:
            return .unreadable("the value of \(fullKey) in etcd is not UTF-8 text; it is left alone")
        case .notBase64:
            return .unreadable(
                "the value of \(fullKey) came in an answer that is not base64, as etcd sends values; it is left alone")
        }
    }

    /// The setting key of the etcd key `fullKey`, if it is under `prefix`: compared and cut by bytes, as etcd
    /// compares keys, not by characters (a key that goes on after the prefix with a combining mark makes a
    /// character of the mark and the prefix's last letter).
    static func settingKey(_ fullKey: String, prefix: String) -> String? {
        guard fullKey.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: fullKey.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// What one event of the watch changes, at most at `headerRevision` (the watch answer's); `nil` for an event
    /// that is not about a key under the prefix.
    static func change(in event: [String: Any], prefix: String, atMost headerRevision: Int64) throws -> Entry? {
        guard let kv = event["kv"] as? [String: Any] else {
            throw Malformed(description: "a watch event has no kv")
        }
        let limit = headerRevision > 0 ? headerRevision : .max
        return try entry(kv, prefix: prefix, atMost: limit, deleted: (event["type"] as? String) == "DELETE")
    }

    /// The `mod_revision` of a watch event, whatever its key: the revision a watch that has taken the event may
    /// resume after.
    /// - Throws: ``Malformed`` if the event has no kv, or its `mod_revision` is not in `1...headerRevision`.
    static func revision(ofEvent event: [String: Any], atMost headerRevision: Int64) throws -> Int64 {
        let limit = headerRevision > 0 ? headerRevision : .max
        guard let kv = event["kv"] as? [String: Any], let revision = EtcdClient.revision(kv["mod_revision"]),
            revision > 0, revision <= limit
        else {
            throw Malformed(
                description: "a watch event comes with no mod_revision that etcd would send (the answer being at "
                    + "revision \(limit))")
        }
        return revision
    }

    /// The texts and mod revisions, by setting key, in a `kv/txn` answer of range requests.
    /// - Throws: ``Malformed`` as ``range(_:prefix:)`` does.
    static func freshEntries(_ answer: [String: Any], prefix: String) throws -> [String: Entry] {
        let revision = try headerRevision(of: answer)
        guard let responses = answer["responses"] as? [[String: Any]] else {
            throw Malformed(description: "the transaction's answer has no responses")
        }
        var entries: [String: Entry] = [:]
        for response in responses {
            guard let range = response["response_range"] as? [String: Any] else {
                throw Malformed(description: "a read in the transaction's answer is not a range response")
            }
            for kv in try keyValues(range["kvs"]) {
                if let entry = try entry(kv, prefix: prefix, atMost: revision) { entries[entry.key] = entry }
            }
        }
        return entries
    }
}
