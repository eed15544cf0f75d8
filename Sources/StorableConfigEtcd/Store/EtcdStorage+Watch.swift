import Foundation
import StorableConfig

/// What the watch (``EtcdWatcher``) hands the storage: the events of other writers, in order, and the revision
/// to resume after.
@available(watchOS, unavailable)
extension EtcdStorage {
    /// Takes the events of the watch, in order: updates the cache, and announces each key that others
    /// changed before taking the next event, so that an observer sees every value, not only the last.
    ///
    /// The watch resumes after the last revision whose events it has all taken, as etcd's Go client does (after
    /// the last event's `mod_revision`), never after `headerRevision`: that is the cluster's revision when the
    /// line was sent, and a watch that catches up gets its events in lines of at most 1,000 revisions, each with
    /// the cluster's current revision in its header, so a watch that resumed after a header would skip the
    /// events of the lines it never got. etcd sends every event of one revision in one line.
    /// - Throws: ``EtcdAnswer/Malformed`` at the first event that etcd would not send (the events before it are
    ///   taken; none are if an event's `mod_revision` is not one etcd would send); the watch then moves to another
    ///   member.
    func take(events: [[String: Any]], headerRevision: Int64) throws {
        let revisions = try events.map { try EtcdAnswer.revision(ofEvent: $0, atMost: headerRevision) }
        for (index, event) in events.enumerated() {
            let entry = try EtcdAnswer.change(in: event, prefix: prefix, atMost: headerRevision)
            // The last event of its revision: the cache is complete up to that revision.
            let completes = index == events.count - 1 || revisions[index + 1] > revisions[index]
            let announce = lock.withLock { () -> Bool in
                if completes { revision = max(revision, revisions[index]) }
                guard let entry else { return false }
                if (cache[entry.key]?.revision ?? 0) < entry.revision {
                    cache[entry.key] = (entry.value, entry.revision)
                }
                // Every key of one of our transactions shares its revision: all of them are ours.
                return !ownRevisions.contains(entry.revision)
            }
            if let entry, announce { storageDidChange(forKeys: [entry.key]) }
        }
        lock.withLock { ownRevisions = ownRevisions.filter { $0 > revision } }
        if !events.isEmpty { snapshotWriter?.schedule() }
    }

    /// A progress notification: etcd sends one only to a watch that has every event up to `headerRevision`
    /// (a watch that is catching up gets none), so the watch may resume after it. The answer that creates a
    /// watch says no such thing: its header is the cluster's revision, and the events from the revision the watch
    /// asked for come after it; it never moves the revision the watch resumes after.
    func takeProgress(headerRevision: Int64) {
        lock.withLock {
            revision = max(revision, headerRevision)
            ownRevisions = ownRevisions.filter { $0 > revision }
        }
    }

    /// The revision the watch resumes after.
    var watchRevision: Int64 { lock.withLock { revision } }

    /// What the watch has done so far.
    var watchStatistics: EtcdWatcher.Counts { lock.withLock { watcher }?.statistics ?? .init() }

    /// After a compaction, or when a member says the cluster is at a revision before the store's: reads the
    /// prefix again (which decides, see ``readAll(deadline:revision:)``) and announces the differences.
    /// `first` is the endpoint asked first: the one whose answer showed the need.
    func resynchronise(from first: Int? = nil) {
        if let changed = try? readAll(from: first), !changed.isEmpty { storageDidChange(forKeys: changed) }
    }
}
