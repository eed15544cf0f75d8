import Foundation
import StorableConfig

/// The state that every ``EtcdStore`` for one cluster, prefix and user shares in a process: the client, the
/// cache and the one watch. It is their storage identity, so configs over any of them see each other's writes
/// at once, from one cache.
final class EtcdStorage: SharedConfigStore, @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    let prefix: String

    let client: EtcdClient
    private let lock = NSLock()
    /// By setting key (without the prefix): the JSON text, or `nil` for a deleted key, and its revision.
    private var cache: [String: (text: String?, revision: Int64)] = [:]
    /// The revision up to which the cache is complete.
    private(set) var revision: Int64 = 0
    /// Revisions of this store's own writes, whose watch events need not be announced.
    private var ownRevisions: Set<Int64> = []
    private var watcher: EtcdWatcher?

    /// Connects to the cluster at `endpoints` and reads every key under `prefix`.
    ///
    /// Creating the store never hangs: the first read tries each endpoint once, for at most `timeout` each and
    /// three timeouts in all (15 s by default), however many endpoints there are. If no member answers, the
    /// store starts empty (configs read their defaults), keeps trying in the background, and delivers the
    /// values as changes when the cluster answers; ``isConnected`` tells which.
    /// - Throws: ``StorableConfig/StorableConfigError/reloadFailed(store:reason:)`` if `endpoints` is empty or
    ///   the cluster refuses the credentials.
    init(
        endpoints: [URL], prefix: String, credentials: EtcdStore.Credentials?, timeout: TimeInterval,
        watchIdleLimit: TimeInterval
    ) throws {
        self.prefix = prefix
        self.watchIdleLimit = watchIdleLimit
        client = EtcdClient(endpoints: endpoints, timeout: timeout, credentials: credentials)
        do {
            try readAll(deadline: Date().addingTimeInterval(3 * timeout))
        } catch let error as EtcdClient.ServerError {
            throw StorableConfigError.reloadFailed(store: description, reason: "\(error)")
        } catch {
            // Unreachable: start empty; the watcher keeps trying.
        }
        let watcher = EtcdWatcher(store: self)
        lock.withLock { self.watcher = watcher }
        watcher.start()
    }

    deinit {
        watcher?.stop()
    }

    /// Whether the store has read the cluster at least once.
    var isConnected: Bool { lock.withLock { revision > 0 } }

    var description: String {
        "etcd \(client.endpointList)" + (prefix.isEmpty ? "" : " prefix \(prefix)")
    }

    /// Itself: the stores that share it share one storage.
    var storageIdentity: AnyObject { self }

    private struct Weak {
        weak var storage: EtcdStorage?
    }

    private static let shared = Locked<[String: Weak]>([:])

    /// The storage for `endpoints`, `prefix` and the credentials, made if no store in the process uses it.
    static func storage(
        endpoints: [URL], prefix: String, credentials: EtcdStore.Credentials?, timeout: TimeInterval,
        watchIdleLimit: TimeInterval
    ) throws -> EtcdStorage {
        let name =
            endpoints.map(\.absoluteString).sorted().joined(separator: ",") + "|" + prefix + "|"
            + (credentials.map { "\($0.user)|\($0.password.hashValue)" } ?? "")
        if let existing = shared.withLock({ $0[name]?.storage }) { return existing }
        let made = try EtcdStorage(
            endpoints: endpoints, prefix: prefix, credentials: credentials, timeout: timeout,
            watchIdleLimit: watchIdleLimit)
        return shared.withLock { storages in
            if let existing = storages[name]?.storage {
                made.watcherObject?.stop()
                return existing
            }
            storages[name] = Weak(storage: made)
            return made
        }
    }

    /// The watcher: to stop one made in vain, and for the tests.
    var watcherObject: EtcdWatcher? { lock.withLock { watcher } }

    // MARK: ConfigStore

    /// The cached value of `key`.
    /// - Throws: If the value in etcd is not JSON text.
    func value(forKey key: String) throws -> StoredValue? {
        guard let text = lock.withLock({ cache[key]?.text }) else { return nil }
        do {
            return try StoredValue(jsonText: text)
        } catch {
            throw EtcdClient.Failure(
                description: "the value of \(prefix + key) in etcd is not JSON text (\(error)); it is left alone")
        }
    }

    /// Puts `value` under `key` and returns when the cluster has committed it.
    func setValue(_ value: StoredValue, forKey key: String) throws {
        try commit(puts: [key: value], deletes: [])
    }

    /// Deletes `key` and returns when the cluster has committed it.
    func removeValue(forKey key: String) throws {
        try commit(puts: [:], deletes: [key])
    }

    /// One transaction: every put and delete, or none.
    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        try commit(puts: values, deletes: keysToRemove)
    }

    /// Reads `keys` and their revisions in one transaction, transforms them, and writes the result in a
    /// transaction that succeeds only if no key changed meanwhile; retries on conflict.
    @discardableResult
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try checkOperationCount(keys.count, what: "a read-modify-write of \(keys.count) keys")
        for _ in 0..<100 {
            let (current, revisions) = try readFresh(keys)
            var values = current
            try transform(&values)
            var puts: [String: StoredValue] = [:]
            var deletes: [String] = []
            for key in keys {
                if let new = values[key] {
                    puts[key] = new
                } else if current[key] != nil {
                    deletes.append(key)
                }
            }
            let compares = keys.map { key -> [String: Any] in
                if let revision = revisions[key] {
                    return [
                        "key": EtcdClient.base64(prefix + key), "target": "MOD", "result": "EQUAL",
                        "mod_revision": String(revision),
                    ]
                }
                return [
                    "key": EtcdClient.base64(prefix + key), "target": "CREATE", "result": "EQUAL",
                    "create_revision": "0",
                ]
            }
            if try commit(puts: puts, deletes: deletes, compares: compares) {
                var result: [String: StoredValue] = [:]
                for key in keys { result[key] = puts[key] }
                return result
            }
        }
        throw EtcdClient.Failure(description: "the keys kept changing under a read-modify-write: \(keys)")
    }

    /// ``StorableConfig/ConfigStoreAtomicity/acrossProcesses``: a transaction comparing revisions.
    var updateAtomicity: ConfigStoreAtomicity { .acrossProcesses }

    /// Reads every key under the prefix again.
    func reload() throws {
        _ = try readAll()
    }

    // MARK: Reading and writing

    /// Reads the whole prefix into the cache and returns the keys whose values changed.
    /// (`revision` reads the prefix as it was then, as a read answered late would: for the tests.)
    @discardableResult
    func readAll(deadline: Date? = nil, revision atRevision: Int64? = nil) throws -> Set<String> {
        var request: [String: Any] = [
            "key": prefix.isEmpty ? Data([0]).base64EncodedString() : EtcdClient.base64(prefix),
            "range_end": EtcdClient.rangeEnd(ofPrefix: prefix),
        ]
        if let atRevision { request["revision"] = String(atRevision) }
        let answer = try client.call("kv/range", request, deadline: deadline)
        let (answerRevision, found) = Self.entries(in: answer, prefix: prefix)
        let readRevision = atRevision ?? answerRevision
        return lock.withLock {
            // A key this store wrote, or the watch brought, after the read's revision keeps its newer value.
            var changed: Set<String> = []
            for (key, entry) in cache where entry.text != nil && found[key] == nil && entry.revision <= readRevision {
                changed.insert(key)
                cache[key] = (nil, readRevision)
            }
            for (key, entry) in found where cache[key]?.text != entry.text {
                if let cached = cache[key], cached.revision > readRevision { continue }
                changed.insert(key)
                cache[key] = entry
            }
            revision = max(revision, readRevision)
            return changed
        }
    }

    /// The revision of a `kv/range` answer, and by setting key (without the prefix) the text and mod revision of
    /// each key under the prefix that it holds.
    static func entries(
        in answer: [String: Any], prefix: String
    ) -> (revision: Int64, entries: [String: (text: String?, revision: Int64)]) {
        let header = answer["header"] as? [String: Any]
        var found: [String: (text: String?, revision: Int64)] = [:]
        for kv in answer["kvs"] as? [[String: Any]] ?? [] {
            guard let fullKey = EtcdClient.text(base64: kv["key"]), let key = settingKey(fullKey, prefix: prefix)
            else { continue }
            found[key] = (EtcdClient.text(base64: kv["value"]) ?? "", EtcdClient.int(kv["mod_revision"]))
        }
        return (EtcdClient.int(header?["revision"]), found)
    }

    /// The values and mod revisions of `keys` as the cluster holds them now, in one transaction.
    private func readFresh(_ keys: [String]) throws -> ([String: StoredValue], [String: Int64]) {
        let answer = try client.call(
            "kv/txn", ["success": keys.map { ["request_range": ["key": EtcdClient.base64(prefix + $0)]] }])
        return try Self.freshValues(in: answer, prefix: prefix)
    }

    /// The values and mod revisions, by setting key, in a `kv/txn` answer of range requests.
    /// - Throws: If a value is not JSON text.
    static func freshValues(
        in answer: [String: Any], prefix: String
    ) throws -> ([String: StoredValue], [String: Int64]) {
        var values: [String: StoredValue] = [:]
        var revisions: [String: Int64] = [:]
        for response in answer["responses"] as? [[String: Any]] ?? [] {
            guard let range = response["response_range"] as? [String: Any],
                let kv = (range["kvs"] as? [[String: Any]])?.first,
                let fullKey = EtcdClient.text(base64: kv["key"]), let key = settingKey(fullKey, prefix: prefix)
            else { continue }
            revisions[key] = EtcdClient.int(kv["mod_revision"])
            let text = EtcdClient.text(base64: kv["value"]) ?? ""
            guard let value = try? StoredValue(jsonText: text) else {
                throw EtcdClient.Failure(
                    description: "the value of \(fullKey) in etcd is not JSON text; it is left alone")
            }
            values[key] = value
        }
        return (values, revisions)
    }

    /// Writes `puts` and `deletes` in one transaction, if `compares` hold; returns whether it was applied.
    @discardableResult
    private func commit(
        puts: [String: StoredValue], deletes: [String], compares: [[String: Any]] = []
    ) throws -> Bool {
        try checkOperationCount(puts.count + deletes.count, what: "a write of \(puts.count + deletes.count) keys")
        var operations: [[String: Any]] = []
        var texts: [String: String] = [:]
        for (key, value) in puts {
            let text = value.jsonText()
            texts[key] = text
            operations.append(
                ["request_put": ["key": EtcdClient.base64(prefix + key), "value": EtcdClient.base64(text)]])
        }
        for key in deletes {
            operations.append(["request_delete_range": ["key": EtcdClient.base64(prefix + key)]])
        }
        guard !operations.isEmpty else { return true }
        var body: [String: Any] = ["success": operations]
        if !compares.isEmpty { body["compare"] = compares }
        let answer: [String: Any]
        do {
            answer = try client.call("kv/txn", body)
        } catch let error as EtcdClient.ServerError
            where error.message.contains("too large") || error.message.contains("larger than max")
            || error.status == 413 || error.status == 429
        {
            let sizes = texts.sorted { $0.value.utf8.count > $1.value.utf8.count }.prefix(3).map {
                "\(prefix + $0.key) is \($0.value.utf8.count) bytes of JSON text"
            }
            throw EtcdClient.Failure(
                description: "etcd refused the write as too large for its --max-request-bytes (1.5 MiB by default): "
                    + sizes.joined(separator: ", "))
        } catch {
            throw EtcdClient.Failure(
                description: "etcd (\(client.endpointList)) did not take the write: \(error)")
        }
        if !compares.isEmpty, (answer["succeeded"] as? Bool) != true { return false }
        let committed = EtcdClient.int((answer["header"] as? [String: Any])?["revision"])
        lock.withLock {
            // Unless the watch has already brought (and announced) it.
            if committed > revision { ownRevisions.insert(committed) }
            for (key, text) in texts where (cache[key]?.revision ?? 0) < committed { cache[key] = (text, committed) }
            for key in deletes where (cache[key]?.revision ?? 0) < committed { cache[key] = (nil, committed) }
        }
        return true
    }

    private func checkOperationCount(_ count: Int, what: String) throws {
        if count > 128 {
            throw EtcdClient.Failure(
                description: "\(what) does not fit in one etcd transaction (at most 128 operations); it was not "
                    + "split, and nothing was written")
        }
    }

    // MARK: The watch

    /// Takes the events of the watch, in order: updates the cache, and announces each key that others
    /// changed before taking the next event, so that an observer sees every value, not only the last.
    func take(events: [[String: Any]], headerRevision: Int64) {
        for event in events {
            guard let (key, text, eventRevision) = Self.change(in: event, prefix: prefix) else { continue }
            let announce = lock.withLock { () -> Bool in
                if (cache[key]?.revision ?? 0) < eventRevision {
                    cache[key] = (text, eventRevision)
                }
                revision = max(revision, eventRevision)
                // Every key of one of our transactions shares its revision: all of them are ours.
                return !ownRevisions.contains(eventRevision)
            }
            if announce { storageDidChange(forKeys: [key]) }
        }
        lock.withLock {
            revision = max(revision, headerRevision)
            ownRevisions = ownRevisions.filter { $0 > revision }
        }
    }

    /// What one event of the watch changes: the setting key (without the prefix), its text (`nil` when it was
    /// deleted) and the revision; `nil` for an event that is not about a key under the prefix.
    static func change(in event: [String: Any], prefix: String) -> (key: String, text: String?, revision: Int64)? {
        guard let kv = event["kv"] as? [String: Any], let fullKey = EtcdClient.text(base64: kv["key"]),
            let key = settingKey(fullKey, prefix: prefix)
        else { return nil }
        let isDelete = (event["type"] as? String) == "DELETE"
        return (key, isDelete ? nil : EtcdClient.text(base64: kv["value"]) ?? "", EtcdClient.int(kv["mod_revision"]))
    }

    /// The setting key of the etcd key `fullKey`, if it is under `prefix`: compared and cut by bytes, as etcd
    /// compares keys, not by characters (a key that goes on after the prefix with a combining mark makes a
    /// character of the mark and the prefix's last letter).
    static func settingKey(_ fullKey: String, prefix: String) -> String? {
        guard fullKey.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: fullKey.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// A progress notification: etcd sends one only to a watch that has every event up to `headerRevision`,
    /// so the watch may resume after it.
    func takeProgress(headerRevision: Int64) {
        lock.withLock {
            revision = max(revision, headerRevision)
            ownRevisions = ownRevisions.filter { $0 > revision }
        }
    }

    /// The revision the watch resumes after.
    var watchRevision: Int64 { lock.withLock { revision } }

    /// How long the watch waits for a byte before it takes the member for gone.
    let watchIdleLimit: TimeInterval

    /// What the watch has done so far.
    var watchStatistics: EtcdWatcher.Counts { lock.withLock { watcher }?.statistics ?? .init() }

    /// After a compaction: reads the prefix again and announces the differences.
    func resynchronise() {
        if let changed = try? readAll(), !changed.isEmpty { storageDidChange(forKeys: changed) }
    }
}
