import Foundation
import StorableConfig

/// The one watch of an ``EtcdStore``'s prefix, on a thread of its own: a streamed response with one JSON object
/// per line, resumed on the next endpoint after the last revision whose events the store took when it ends, and
/// restarted from a fresh read after a compaction. Another member is asked now and then whether the watch has
/// fallen behind (see ``checkLag()``): a frozen member keeps the connection open and sends nothing.
@available(watchOS, unavailable)
final class EtcdWatcher: @unchecked Sendable {
    private weak var store: EtcdStorage?
    private let client: EtcdClient
    private let prefix: String
    private let lock = Lock()
    private var connection: HTTPConnection?
    private var stopped = false
    private var endpointIndex = 0
    private var counts = Counts()
    private var deniedInARow = 0
    /// The endpoint whose watch etcd created, while that watch is open.
    private var watching: Int?
    /// When the open watch's last whole line came.
    private var lastLine = ContinuousClock.now
    /// The newest change of the prefix that the last check found the watch without.
    private var behind: Int64?
    private var checking = false
    private var lagTimer: DispatchSourceTimer?
    /// Why the last watches (one per endpoint at most) could not be set up, since one was.
    private var setupFailures: [String] = []
    /// Whether a watch that cannot be set up has been reported, since one was.
    private var setupFailureReported = false

    /// What the watch has done so far, for the tests.
    struct Counts {
        /// Watches etcd created (the first, and one after each failover, compaction or idle limit; a watch it
        /// cancels at once for a compaction is counted too).
        var watchesOpened = 0
        /// Progress notifications received: lines with no event, which keep a quiet watch's connection busy.
        var progressNotifications = 0
        /// Fresh reads of the prefix after a compaction canceled the watch.
        var resynchronisations = 0
        /// Watches refused for a token or a permission.
        var watchesRefused = 0
        /// Watches left because another member had committed a change of the prefix that they had not delivered
        /// within the lag limit.
        var watchesLeftBehind = 0
    }

    /// A watch with no event is kept alive by etcd's progress notifications (every 10 minutes by default);
    /// with no byte for longer than this, the member is taken for gone and the watch moves on.
    static let idleLimit: TimeInterval = 15 * 60

    var statistics: Counts { lock.withLock { counts } }

    init(store: EtcdStorage) {
        self.store = store
        client = store.client
        prefix = store.prefix
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "StorableConfig.EtcdWatcher"
        thread.start()
        startLagChecks()
    }

    func stop() {
        let (connection, timer) = lock.withLock { () -> (HTTPConnection?, DispatchSourceTimer?) in
            stopped = true
            defer { lagTimer = nil }
            return (self.connection, lagTimer)
        }
        timer?.cancel()
        connection?.shutdownNow()
        wakeUp.signal()
    }

    deinit {
        lagTimer?.cancel()
    }

    private var isStopped: Bool { lock.withLock { stopped } }
    /// Ends the wait between two watches when the watcher is stopped.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// Between two watches refused for permission once it has been reported: no tight loop of authentications.
    static let refusedDelay: TimeInterval = 30

    private func run() {
        var delay: TimeInterval = 0.05
        while !isStopped {
            if watchOnce() { delay = 0.05 }
            guard !isStopped else { return }
            let refused = lock.withLock { () -> Bool in
                endpointIndex += 1
                return deniedInARow >= 2
            }
            _ = wakeUp.wait(timeout: .now() + (refused ? Self.refusedDelay : delay))
            delay = min(delay * 2, 1)
        }
    }

    /// Reads the prefix first if the store never could, then watches until the stream ends. Returns whether
    /// the watch was established.
    ///
    /// The store is held strongly only while the watch is set up and while a line is taken: a store that
    /// nobody uses any more goes away during a quiet watch, and its `deinit` stops this watcher.
    private func watchOnce() -> Bool {
        let prepared: (Int, URL, [(name: String, value: String)], Data, TimeInterval)?
        do {
            prepared = try prepareWatch()
        } catch {
            failedSetup("\(error)")
            return false
        }
        guard let (index, endpoint, headers, body, idleLimit) = prepared else { return false }
        // Until etcd says the watch is created, a member has the client's timeout, all told, to connect and
        // answer: a member that sends a byte now and then does not hold it. After that, each line must come
        // within the idle limit of the one before.
        let setupDeadline = ContinuousClock.now + .seconds(client.timeout)
        let progress = WatchProgress()
        let connection: HTTPConnection
        do {
            connection = try HTTPConnection(to: endpoint, through: client.connector, before: setupDeadline)
        } catch {
            failedSetup("\(endpoint.absoluteString): \(error)")
            return false
        }
        let proceed = lock.withLock { () -> Bool in
            guard !stopped else { return false }
            self.connection = connection
            return true
        }
        guard proceed else { return false }
        defer {
            lock.withLock {
                self.connection = nil
                watching = nil
            }
            connection.shutdownNow()
        }
        var lines = WatchLines()
        var status = 0
        var refused = ""
        var failure = ""
        do {
            let request = try HTTPConnection.request(
                path: EtcdClient.path(of: endpoint, "v3/watch"), host: HTTPConnection.hostHeader(of: endpoint),
                headers: headers, body: body)
            try connection.send(request, before: setupDeadline)
            _ = try connection.readResponse(
                maximumBody: nil,
                deadline: { progress.opened ? progress.lastLine + .seconds(idleLimit) : setupDeadline },
                onHead: { status = $0 }
            ) { bytes in
                try lines.append(bytes)
                while let line = lines.next() {
                    progress.lastLine = .now
                    lock.withLock { lastLine = progress.lastLine }
                    guard let store else {
                        connection.shutdownNow()
                        return
                    }
                    switch take(line, store: store) {
                    case .created:
                        progress.opened = true
                        lock.withLock {
                            counts.watchesOpened += 1
                            watching = index
                            behind = nil
                        }
                    case .carryOn:
                        break
                    case .canceled:
                        progress.canceled = true
                        connection.shutdownNow()
                    case .refused:
                        refused += String(decoding: line.prefix(1000), as: UTF8.self)
                        connection.shutdownNow()
                    }
                }
            }
        } catch {
            // The member went away, was told to, or sent what a watch cannot be: the loop moves to the next one.
            failure = "\(error)"
        }
        refused += String(decoding: lines.remainder.prefix(1000), as: UTF8.self)
        if progress.opened {
            lock.withLock {
                deniedInARow = 0
                setupFailures = []
                setupFailureReported = false
            }
        } else if status == 401 || refused.contains("auth token") || refused.contains("permission denied") {
            deniedWatch(refused)
        } else if !isStopped {
            let answer = status == 0 ? failure : "answered \(status) \(refused.prefix(200))"
            failedSetup("\(endpoint.absoluteString): \(answer.isEmpty ? "the connection closed" : answer)")
        }
        // A watch canceled at once (a compaction) does not count as established: the wait before the next one
        // keeps growing if that keeps happening.
        return progress.opened && !progress.canceled
    }

    /// What one watch has seen so far; read by the connection's idle timeout.
    private final class WatchProgress {
        var opened = false
        var canceled = false
        /// When the last whole line came.
        var lastLine = ContinuousClock.now
    }

    /// A watch refused for its token: etcd forgets a token that has not been used for `--auth-token-ttl`
    /// (5 minutes by default), and a quiet watch uses its token only when it opens. The next watch
    /// authenticates again; if that one is refused too, the user may not read the prefix, which is reported
    /// once (until a watch is established again), and the watch is tried every ``refusedDelay`` seconds.
    private func deniedWatch(_ answer: String) {
        client.forgetToken()
        let count = lock.withLock {
            deniedInARow += 1
            counts.watchesRefused += 1
            return deniedInARow
        }
        guard count == 2, let store else { return }
        StorableConfig.report(
            .reloadFailed(
                store: store.description,
                reason: "etcd refused to watch the prefix \"\(prefix)\" (\(answer.prefix(200))); "
                    + "changes made elsewhere are not seen until it accepts"))
    }

    /// A watch that could not be set up (no descriptor left, a member that refuses the connection or never
    /// answers, a read of the prefix that failed): once one has failed on every endpoint since the last that was
    /// set up, that is reported, once, with each cause, until a watch is set up again.
    private func failedSetup(_ cause: String) {
        let causes = lock.withLock { () -> [String]? in
            setupFailures.append(String(cause.prefix(500)))
            if setupFailures.count > client.endpoints.count { setupFailures.removeFirst() }
            guard !setupFailureReported, setupFailures.count >= client.endpoints.count else { return nil }
            setupFailureReported = true
            return setupFailures
        }
        guard let causes, let store else { return }
        StorableConfig.report(
            .reloadFailed(
                store: store.description,
                reason: "the watch of the prefix \"\(prefix)\" could not be set up ("
                    + causes.joined(separator: "; ")
                    + "); changes made elsewhere are not seen until it is, and it is tried again"))
    }

    /// The endpoint (its index and URL), headers, body and idle limit of the next watch, after a read of the
    /// prefix if the store never could read it; `nil` if the store is gone.
    /// - Throws: Why the read or the token failed.
    private func prepareWatch() throws -> (Int, URL, [(name: String, value: String)], Data, TimeInterval)? {
        guard let store else {
            stop()
            return nil
        }
        if !store.isConnected {
            let changed = try store.readAll()
            if !changed.isEmpty { store.storageDidChange(forKeys: changed) }
        }
        let index = lock.withLock { endpointIndex % client.endpoints.count }
        var headers = [(name: "Grpc-Metadata-hasleader", value: "true")]
        let token = try client.authorization() ?? ""
        if !token.isEmpty { headers.append(("Authorization", token)) }
        let create = Self.watchRequest(prefix: prefix, after: store.watchRevision)
        let body = try JSONSerialization.data(withJSONObject: create)
        return (index, client.endpoints[index], headers, body, store.watchIdleLimit)
    }

    /// The request for a watch of every key under `prefix` from the revision after `revision`, which comes from
    /// the network: a peer may have sent any number.
    static func watchRequest(prefix: String, after revision: Int64) -> [String: Any] {
        var create = EtcdClient.range(ofPrefix: prefix)
        create["start_revision"] = String(revision == .max ? revision : revision + 1)
        create["progress_notify"] = true
        return ["create_request": create]
    }

    // MARK: A watch left behind

    /// Every half lag limit, while a watch is open and has had no line for that long, another member is asked
    /// for the newest `mod_revision` under the prefix (keys only, one key): a watch that a later check still finds
    /// without a revision that an earlier one saw is closed, and the watch moves to the next member. A frozen
    /// member (stopped, a paused VM, a host whose packets are dropped) keeps the connection open and sends
    /// nothing until the idle limit. The cluster's own revision cannot serve: it counts writes to every key.
    private func startLagChecks() {
        guard let store else { return }
        let interval = store.watchLagLimit / 2
        guard client.endpoints.count > 1, interval > 0, interval < 86_400 else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(
            deadline: .now() + interval, repeating: interval, leeway: .milliseconds(Int(interval * 100)))
        timer.setEventHandler { [weak self] in self?.checkLag(interval: interval) }
        let started = lock.withLock { () -> Bool in
            guard !stopped else { return false }
            lagTimer = timer
            return true
        }
        if started { timer.resume() }
    }

    /// One check (see ``startLagChecks()``); checks do not overlap, and none takes longer than `interval`.
    private func checkLag(interval: TimeInterval) {
        let now = ContinuousClock.now
        let watched = lock.withLock { () -> Int? in
            guard !stopped, !checking, let watching else { return nil }
            // A member that sent a line lately is not frozen.
            if lastLine.duration(to: now) < .seconds(interval) {
                behind = nil
                return nil
            }
            checking = true
            return watching
        }
        guard let watched, let store else { return }
        defer { lock.withLock { checking = false } }
        let newest = try? client.call(
            "kv/range", Self.newestChangeRequest(prefix: prefix), deadline: Date().addingTimeInterval(interval),
            first: (watched + 1) % client.endpoints.count
        ) { answer in
            _ = try EtcdAnswer.headerRevision(of: answer)
            return EtcdClient.int(((answer["kvs"] as? [[String: Any]])?.first)?["mod_revision"])
        }
        let delivered = store.watchRevision
        let left = lock.withLock { () -> HTTPConnection? in
            // No answer (an election, the others down too) says nothing either way: the next check decides.
            guard let newest else { return nil }
            guard watching == watched, newest > delivered else {
                behind = nil
                return nil
            }
            if let earlier = behind, earlier > delivered {
                behind = nil
                counts.watchesLeftBehind += 1
                return connection
            }
            behind = newest
            return nil
        }
        left?.shutdownNow()
    }

    /// The newest change under `prefix`: keys only, sorted by `mod_revision`, the last one.
    static func newestChangeRequest(prefix: String) -> [String: Any] {
        EtcdClient.range(ofPrefix: prefix).merging(
            ["keys_only": true, "limit": "1", "sort_order": "DESCEND", "sort_target": "MOD"]
        ) { current, _ in current }
    }

    /// What a line of the stream means for the watch.
    private enum LineOutcome {
        /// etcd created the watch.
        case created
        /// Events or a progress notification: the watch goes on.
        case carryOn
        /// etcd canceled the watch (after a compaction, the store has read the prefix again).
        case canceled
        /// An error, or a watch canceled as soon as asked for (a token or a permission etcd refuses).
        case refused
    }

    /// Takes one line of the stream.
    private func take(_ line: Data, store: EtcdStorage) -> LineOutcome {
        switch WatchMessage(line: line) {
        case .error:
            return .refused
        case .canceled(let compactRevision, let created):
            if compactRevision > 0 {
                lock.withLock { counts.resynchronisations += 1 }
                store.resynchronise()
                return .canceled
            }
            return created ? .refused : .canceled
        case .created(let headerRevision):
            // The cluster is at a revision before the one the watch starts from: the store's revision came from
            // a member that is not to be believed (or from another cluster). A fresh read decides.
            if headerRevision > 0 && headerRevision < store.watchRevision {
                store.resynchronise(from: lock.withLock { endpointIndex % client.endpoints.count })
                return .canceled
            }
            return .created
        case .events(let events, let headerRevision):
            do {
                try store.take(events: events, headerRevision: headerRevision)
                return .carryOn
            } catch {
                // Not what etcd sends: the watch moves to another member.
                return .canceled
            }
        case .progress(let headerRevision):
            lock.withLock { counts.progressNotifications += 1 }
            store.takeProgress(headerRevision: headerRevision)
            return .carryOn
        }
    }
}
