import Foundation
import StorableConfig

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one watch of an ``EtcdStore``'s prefix: a streamed response with one JSON object per line, resumed on
/// the next endpoint at the last seen revision + 1 when it ends, and restarted from a fresh read after a
/// compaction.
final class EtcdWatcher: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private weak var store: EtcdStore?
    private let client: EtcdClient
    private let prefix: String
    private let lock = NSLock()
    private var session: URLSession?
    private var task: URLSessionDataTask?
    private var buffer = Data()
    private var stopped = false
    private var endpointIndex = 0
    private var delay: TimeInterval = 0.05
    private let queue = DispatchQueue(label: "StorableConfig.EtcdWatcher")

    init(store: EtcdStore) {
        self.store = store
        client = store.client
        prefix = store.prefix
        super.init()
    }

    func start() {
        queue.async { self.connect() }
    }

    func stop() {
        let (task, session) = lock.withLock { () -> (URLSessionDataTask?, URLSession?) in
            stopped = true
            defer {
                self.task = nil
                self.session = nil
            }
            return (self.task, self.session)
        }
        task?.cancel()
        session?.invalidateAndCancel()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Reads the prefix first if the store never could, then opens the watch.
    private func connect() {
        guard !isStopped, let store else { return }
        if !store.isConnected {
            do {
                let changed = try store.readAll()
                if !changed.isEmpty { store.storageDidChange(forKeys: changed) }
            } catch {
                retryLater()
                return
            }
        }
        let endpoint = lock.withLock { client.endpoints[endpointIndex % client.endpoints.count] }
        var request = URLRequest(url: endpoint.appendingPathComponent("v3").appendingPathComponent("watch"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        // Without quorum, the member answers an error and closes the stream, so the watch moves on.
        request.setValue("true", forHTTPHeaderField: "Grpc-Metadata-hasleader")
        do {
            if let token = try client.authorization() { request.setValue(token, forHTTPHeaderField: "Authorization") }
        } catch {
            retryLater()
            return
        }
        let create: [String: Any] = [
            "create_request": [
                "key": prefix.isEmpty ? Data([0]).base64EncodedString() : EtcdClient.base64(prefix),
                "range_end": EtcdClient.rangeEnd(ofPrefix: prefix),
                "start_revision": String(store.watchRevision + 1),
            ]
        ]
        request.httpBody = try? JSONSerialization.data(withJSONObject: create)
        // On Linux the request timeout is an idle timeout on a streamed response: a quiet watch must not end.
        request.timeoutInterval = 365 * 24 * 3600
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 365 * 24 * 3600
        configuration.timeoutIntervalForResource = 365 * 24 * 3600
        let operations = OperationQueue()
        operations.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: operations)
        let task = session.dataTask(with: request)
        let started = lock.withLock { () -> Bool in
            guard !stopped else { return false }
            buffer = Data()
            self.session = session
            self.task = task
            return true
        }
        guard started else {
            session.invalidateAndCancel()
            return
        }
        task.resume()
    }

    private func retryLater() {
        let wait = lock.withLock { () -> TimeInterval in
            endpointIndex += 1
            defer { delay = min(delay * 2, 1) }
            return delay
        }
        guard !isStopped else { return }
        queue.asyncAfter(deadline: .now() + wait) { self.connect() }
    }

    // MARK: URLSessionDataDelegate

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let lines = lock.withLock { () -> [Data] in
            buffer.append(data)
            var lines: [Data] = []
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(buffer[buffer.startIndex..<newline])
                buffer = Data(buffer[buffer.index(after: newline)...])
            }
            return lines
        }
        for line in lines { take(line, from: dataTask) }
    }

    private func take(_ line: Data, from dataTask: URLSessionDataTask) {
        guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else { return }
        guard let result = object["result"] as? [String: Any] else {
            // An error line: the member cannot serve the watch (no leader, a bad token); try the next one.
            dataTask.cancel()
            return
        }
        lock.withLock { delay = 0.05 }
        if (result["canceled"] as? Bool) == true {
            if EtcdClient.int(result["compact_revision"]) > 0 { store?.resynchronise() }
            dataTask.cancel()
            return
        }
        let headerRevision = EtcdClient.int((result["header"] as? [String: Any])?["revision"])
        let events = result["events"] as? [[String: Any]] ?? []
        if !events.isEmpty { store?.take(events: events, headerRevision: headerRevision) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        session.finishTasksAndInvalidate()
        let isCurrent = lock.withLock { () -> Bool in
            guard self.task === task else { return false }
            self.task = nil
            self.session = nil
            return !stopped
        }
        if isCurrent { retryLater() }
    }
}
