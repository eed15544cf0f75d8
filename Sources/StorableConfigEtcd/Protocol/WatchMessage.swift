import Foundation

/// What one line of a watch's stream says.
@available(watchOS, unavailable)
enum WatchMessage {
    /// etcd created the watch, at the cluster's revision `headerRevision` (0 if not given).
    case created(headerRevision: Int64)
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
        let headerRevision = EtcdClient.int((result["header"] as? [String: Any])?["revision"])
        if created {
            self = .created(headerRevision: headerRevision)
            return
        }
        let events = result["events"] as? [[String: Any]] ?? []
        self =
            events.isEmpty ? .progress(headerRevision: headerRevision) : .events(events, headerRevision: headerRevision)
    }
}
