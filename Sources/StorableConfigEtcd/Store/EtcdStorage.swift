import Foundation
import StorableConfig

/// The state that every ``EtcdStore`` for one cluster, prefix and user shares in a process: the client, the
/// cache and the one watch. It is their storage identity, so configs over any of them see each other's writes
/// at once, from one cache.
@available(watchOS, unavailable)
final class EtcdStorage: IdentifiedConfigStore, @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    let prefix: String

    let client: EtcdClient
    let lock = Lock()
    /// By setting key (without the prefix): the JSON text (or why it cannot be read), `nil` for a deleted key,
    /// and its revision.
    var cache: [String: (value: EtcdAnswer.Value?, revision: Int64)] = [:]
    /// The revision up to which the cache is complete.
    var revision: Int64 = 0
    /// Revisions of this store's own writes, whose watch events need not be announced.
    var ownRevisions: Set<Int64> = []
    var watcher: EtcdWatcher?
    /// Why the last read of the prefix failed, until one succeeds.
    private var readProblem: String?
    /// The cluster's `header.cluster_id`, from the last read of the prefix.
    var clusterID = ""
    /// The snapshot the cache was filled from, until the first read of the prefix replaces it whole.
    var seededFrom: (revision: Int64, written: Date)?
    /// The cluster a snapshot found at start was taken of, until the first read of the prefix compares it.
    var snapshotClusterID: String?
    /// Writes the snapshot, if the store keeps one.
    private(set) var snapshotWriter: EtcdSnapshotWriter?

    /// Connects to the cluster at `endpoints` and reads every key under `prefix`.
    ///
    /// Creating the store never hangs: the first read tries each endpoint once, for at most `timeout` each and
    /// three timeouts in all (15 s by default), however many endpoints there are. If no member answers, the
    /// store starts empty (configs read their defaults), keeps trying in the background, and delivers the
    /// values as changes when the cluster answers; ``isConnected`` tells which.
    /// - Throws: ``StorableConfig/StorableConfigError/reloadFailed(store:reason:)`` if `endpoints` is empty or
    ///   the cluster refuses the credentials.
    init(
        endpoints: [URL], prefix: String, credentials: EtcdStore.Credentials?, tls: EtcdStore.TLS?,
        timeout: TimeInterval, watchIdleLimit: TimeInterval, watchLagLimit: TimeInterval, snapshot: URL? = nil
    ) throws {
        self.prefix = prefix
        self.watchIdleLimit = watchIdleLimit
        self.watchLagLimit = watchLagLimit
        var context: TLSContext?
        if tls != nil || endpoints.contains(where: { $0.scheme == "https" }) {
            do {
                context = try TLSContext(tls ?? EtcdStore.TLS())
            } catch {
                throw StorableConfigError.reloadFailed(
                    store: "etcd \(endpoints.map(\.absoluteString).joined(separator: ", "))", reason: "\(error)")
            }
        }
        client = EtcdClient(
            endpoints: endpoints, timeout: timeout, credentials: credentials, connector: Connector(tls: context))
        let found = snapshot.flatMap(usableSnapshot(at:))
        snapshotClusterID = found?.clusterID
        snapshotWriter = snapshot.map { EtcdSnapshotWriter(url: $0, storage: self) }
        do {
            try readAll(deadline: Date().addingTimeInterval(3 * timeout))
        } catch let error as EtcdClient.ServerError {
            throw StorableConfigError.reloadFailed(store: description, reason: "\(error)")
        } catch {
            // Unreachable, or no member gave etcd's answer: start from the snapshot, or empty; the watcher keeps
            // trying.
            if let found { seed(from: found, outage: error) }
        }
        // A store that read the cluster has its snapshot on disk when it is made: a process that stops at once
        // leaves one.
        if isConnected { snapshotWriter?.writeIfDue(from: self) }
        let watcher = EtcdWatcher(store: self)
        lock.withLock { self.watcher = watcher }
        watcher.start()
    }

    deinit {
        watcher?.stop()
        snapshotWriter?.writeIfDue(from: self)
    }

    /// Whether the store has read the cluster at least once.
    var isConnected: Bool { lock.withLock { revision > 0 } }

    /// Why the store has not read the cluster yet: what each endpoint did; `nil` once it has.
    var connectionProblem: String? { lock.withLock { revision > 0 ? nil : readProblem } }

    var description: String {
        "etcd \(client.endpointList)" + (prefix.isEmpty ? "" : " prefix \(prefix)")
    }

    /// Itself: the stores that share it share one storage.
    var storageIdentity: AnyObject { self }

    /// The watcher: to stop one made in vain, and for the tests.
    var watcherObject: EtcdWatcher? { lock.withLock { watcher } }

    // MARK: ConfigStore

    /// The cached value of `key`.
    /// - Throws: If the value in etcd is not JSON text.
    func value(forKey key: String) throws -> StoredValue? {
        let text: String
        switch lock.withLock({ cache[key]?.value }) {
        case nil: return nil
        case .unreadable(let reason): throw EtcdClient.Failure(description: reason)
        case .text(let value): text = value
        }
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
            let applied: Bool
            do {
                applied = try commit(puts: puts, deletes: deletes, compares: compares)
            } catch let lost as EtcdClient.AnswerLost {
                // Sent again, a transaction that was carried out would fail its own comparisons, and the
                // transform would run twice: see whether the cluster holds what it wrote.
                guard try holdsWrite(of: keys, puts: puts, after: revisions) else {
                    if try readFresh(keys).0 == current { continue }
                    throw EtcdClient.Failure(
                        description: "\(lost); the keys changed since, so it was not tried again")
                }
                applied = true
            }
            if applied {
                var result: [String: StoredValue] = [:]
                for key in keys { result[key] = puts[key] }
                return result
            }
        }
        throw EtcdClient.Failure(description: "the keys kept changing under a read-modify-write: \(keys)")
    }

    /// ``StorableConfig/ConfigStoreAtomicity/acrossProcesses``: a transaction comparing revisions.
    var updateAtomicity: ConfigStoreAtomicity { .acrossProcesses }

    /// `false`: a value that the cluster did not take is believed by no config in this process.
    var keepsFailedWrites: Bool { false }

    /// Reads every key under the prefix again.
    func reload() throws {
        _ = try readAll()
    }

    /// Whether the cluster holds, for `keys`, exactly `puts` (and nothing for the others), each written after its
    /// revision in `revisions`: a transaction whose answer was lost was carried out.
    private func holdsWrite(of keys: [String], puts: [String: StoredValue], after revisions: [String: Int64]) throws
        -> Bool
    {
        let (values, now) = try readFresh(keys)
        return keys.allSatisfy { key in
            values[key] == puts[key] && (puts[key] == nil || now[key, default: 0] > revisions[key, default: 0])
        }
    }

    // MARK: Reading and writing

    /// Reads the whole prefix into the cache and returns the keys whose values changed (every key read, when the
    /// cache was filled from the snapshot).
    /// (`revision` reads the prefix as it was then, as a read answered late would: for the tests.) `first` is
    /// the endpoint asked first.
    ///
    /// A read is linearizable: the cluster answers at a revision no earlier than any it had reached when the read
    /// was sent. An answer at an earlier revision than the store had then means that the store's revision came
    /// from a member not to be believed (or another cluster): the read replaces the cache whole, and that is
    /// reported.
    @discardableResult
    func readAll(deadline: Date? = nil, revision atRevision: Int64? = nil, from first: Int? = nil) throws -> Set<String>
    {
        var request = EtcdClient.range(ofPrefix: prefix)
        if let atRevision { request["revision"] = String(atRevision) }
        let revisionBefore = watchRevision
        let read: (revision: Int64, entries: [String: EtcdAnswer.Entry])
        let readClusterID: String
        do {
            (read, readClusterID) = try client.call("kv/range", request, deadline: deadline, first: first) {
                [prefix] in (try EtcdAnswer.range($0, prefix: prefix), EtcdAnswer.clusterID(of: $0))
            }
        } catch {
            lock.withLock { readProblem = "\(error)" }
            throw error
        }
        let readRevision = atRevision ?? read.revision
        let behind = atRevision == nil && readRevision < revisionBefore
        if behind { reportRevisionBehind(readRevision, storeRevision: revisionBefore) }
        // A cache filled from a snapshot is replaced whole: a key it holds that the cluster no longer has is
        // deleted, whatever its revision.
        let (fromSnapshot, snapshotOfAnotherCluster) = lock.withLock { () -> (Bool, String?) in
            defer { snapshotClusterID = nil }
            let other = snapshotClusterID.flatMap { $0 != readClusterID && !readClusterID.isEmpty ? $0 : nil }
            return (seededFrom != nil, other)
        }
        let resetting = behind || fromSnapshot
        if let snapshotOfAnotherCluster { setAsideSnapshot(ofCluster: snapshotOfAnotherCluster, not: readClusterID) }
        defer { snapshotWriter?.schedule() }
        return lock.withLock {
            readProblem = nil
            clusterID = readClusterID
            seededFrom = nil
            // A key this store wrote, or the watch brought, after the read's revision keeps its newer value.
            var changed: Set<String> = []
            for (key, entry) in cache where entry.value != nil && read.entries[key] == nil {
                guard resetting || entry.revision <= readRevision else { continue }
                changed.insert(key)
                cache[key] = (nil, readRevision)
            }
            for (key, entry) in read.entries where resetting || cache[key]?.value != entry.value {
                if !resetting, let cached = cache[key], cached.revision > readRevision { continue }
                // Every key of a cache filled from a snapshot is announced: the configs then hold the cluster's
                // values, and a move from an earlier key that waited for the cluster is written (an unchanged
                // value tells no observer).
                if cache[key]?.value != entry.value || fromSnapshot { changed.insert(key) }
                cache[key] = (entry.value, entry.revision)
            }
            if resetting {
                revision = readRevision
                ownRevisions = []
            } else {
                revision = max(revision, readRevision)
            }
            return changed
        }
    }

    private func reportRevisionBehind(_ clusterRevision: Int64, storeRevision: Int64) {
        StorableConfig.report(
            .reloadFailed(
                store: description,
                reason: "the cluster is at revision \(clusterRevision), before the revision \(storeRevision) that "
                    + "this store had from an earlier answer; values from that answer came from a member that is "
                    + "not to be believed or from another cluster, and the prefix was read again"))
    }

    /// The values and mod revisions of `keys` as the cluster holds them now, in one transaction.
    private func readFresh(_ keys: [String]) throws -> ([String: StoredValue], [String: Int64]) {
        let entries = try client.call(
            "kv/txn", ["success": keys.map { ["request_range": ["key": EtcdClient.base64(prefix + $0)]] }]
        ) { [prefix] in try EtcdAnswer.freshEntries($0, prefix: prefix) }
        var values: [String: StoredValue] = [:]
        var revisions: [String: Int64] = [:]
        for (key, entry) in entries {
            revisions[key] = entry.revision
            guard case .text(let text) = entry.value, let value = try? StoredValue(jsonText: text) else {
                throw EtcdClient.Failure(
                    description: "the value of \(prefix + key) in etcd is not JSON text; it is left alone")
            }
            values[key] = value
        }
        return (values, revisions)
    }

    /// Writes `puts` and `deletes` in one transaction, if `compares` hold; returns whether it was applied.
    @discardableResult
    func commit(
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
        let committed: Int64
        let succeeded: Bool
        do {
            (committed, succeeded) = try client.call(
                "kv/txn", body, resending: compares.isEmpty ? .allowed : .notAllowed
            ) { answer in
                // Only an answer with the revision it committed at says that etcd did it.
                (try EtcdAnswer.headerRevision(of: answer), (answer["succeeded"] as? Bool) == true)
            }
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
        } catch let error as EtcdClient.AnswerLost {
            throw error
        } catch {
            throw EtcdClient.Failure(
                description: "etcd (\(client.endpointList)) did not take the write: \(error)")
        }
        if !compares.isEmpty, !succeeded { return false }
        defer { snapshotWriter?.schedule() }
        lock.withLock {
            // Unless the watch has already brought (and announced) it.
            if committed > revision { ownRevisions.insert(committed) }
            for (key, text) in texts where (cache[key]?.revision ?? 0) < committed {
                cache[key] = (.text(text), committed)
            }
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

    /// How long the watch waits for a byte before it takes the member for gone.
    let watchIdleLimit: TimeInterval

    /// How long the watch may go without a change that another member has committed before it moves on.
    let watchLagLimit: TimeInterval
}
