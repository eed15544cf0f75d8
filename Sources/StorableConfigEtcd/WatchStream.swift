import Foundation

/// The lines of a watch's streamed answer, one JSON object each, from the body's bytes as they arrive.
///
/// Each byte is searched for the end of its line once, however the stream is split: a line of several megabytes
/// that arrives in small pieces costs no more than one that arrives whole.
struct WatchLines {
    private var pending: [UInt8] = []
    /// Where the first unfinished line starts, and how many of its bytes are known to hold no newline.
    private var start = 0
    private var searched = 0

    /// Adds the next bytes of the body.
    mutating func append(_ bytes: [UInt8]) {
        if start > 0 && start >= pending.count / 2 {
            pending.removeFirst(start)
            start = 0
        }
        pending += bytes
    }

    /// The next whole line, without its newline; `nil` until one has arrived.
    mutating func next() -> Data? {
        guard let newline = pending[(start + searched)...].firstIndex(of: 10) else {
            searched = pending.count - start
            return nil
        }
        let line = Data(pending[start..<newline])
        start = newline + 1
        searched = 0
        return line
    }

    /// The bytes after the last whole line.
    var remainder: [UInt8] { Array(pending[start...]) }
}

/// What one line of a watch's stream says.
enum WatchMessage {
    /// etcd created the watch.
    case created
    /// etcd canceled the watch: after a compaction (`compactRevision` > 0), or refusing it as soon as it was
    /// asked for (`created`).
    case canceled(compactRevision: Int64, created: Bool)
    /// Events, in order.
    case events([[String: Any]], headerRevision: Int64)
    /// A progress notification: no event up to `headerRevision`.
    case progress(headerRevision: Int64)
    /// An error, or not a watch answer: the member cannot serve the watch (no leader, a bad token).
    case error

    /// The message of `line`, which a network peer sent: anything that is not a watch answer is ``error``.
    init(line: Data) {
        guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any],
            let result = object["result"] as? [String: Any]
        else {
            self = .error
            return
        }
        let created = (result["created"] as? Bool) == true
        if (result["canceled"] as? Bool) == true {
            self = .canceled(compactRevision: EtcdClient.int(result["compact_revision"]), created: created)
            return
        }
        if created {
            self = .created
            return
        }
        let headerRevision = EtcdClient.int((result["header"] as? [String: Any])?["revision"])
        let events = result["events"] as? [[String: Any]] ?? []
        self =
            events.isEmpty ? .progress(headerRevision: headerRevision) : .events(events, headerRevision: headerRevision)
    }
}
