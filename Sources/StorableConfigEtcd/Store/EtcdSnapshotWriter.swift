import Foundation
import StorableConfig

/// Writes an ``EtcdStorage``'s snapshot after its values change, at most once per ``interval``: a change after a
/// quiet spell is written at once (on the writer's queue), and the changes that arrive within the interval after a
/// write are written together, when it ends, with the values as they are then.
@available(watchOS, unavailable)
final class EtcdSnapshotWriter: @unchecked Sendable {
    let url: URL
    /// The storage whose values are written; weak, so that a pending write does not keep a store nobody uses.
    private weak var storage: EtcdStorage?
    /// Guards `scheduled`, `lastWrite`, `failing` and `counts`; held for no write.
    private let lock = Lock()
    private var scheduled = false
    private var lastWrite: ContinuousClock.Instant?
    /// Whether the last write failed (reported once, until one succeeds).
    private var failing = false
    private var counts = 0
    private let queue = DispatchQueue(label: "StorableConfig.EtcdSnapshotWriter")
    /// Held from taking a due write to its end, wherever it runs: a caller that must find the file on disk waits
    /// for a write the queue has begun. Recursive as a guard only: the queue's write keeps its storage alive until
    /// `writeIfDue` returns, so the storage's `deinit` (which takes this lock too) runs after it, never inside.
    private let writing = NSRecursiveLock()

    /// The shortest time between two writes.
    static let interval: TimeInterval = 0.25

    init(url: URL, storage: EtcdStorage) {
        self.url = url
        self.storage = storage
    }

    /// Files written so far, for the tests.
    var writes: Int { lock.withLock { counts } }

    /// Writes the snapshot at once, or when ``interval`` has passed since the last write, unless a write is
    /// already due.
    func schedule() {
        let (due, wait) = lock.withLock { () -> (Bool, Duration) in
            defer { scheduled = true }
            let next = lastWrite.map { $0 + .seconds(Self.interval) } ?? .now
            return (scheduled, max(.zero, next - .now))
        }
        guard !due else { return }
        let nanoseconds = Int((wait / .nanoseconds(1)).rounded(.up))
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            guard let self, let storage = self.storage else { return }
            self.writeIfDue(from: storage)
        }
    }

    /// Writes the due snapshot of `storage` now, on the caller's thread, or waits for the write that the queue has
    /// begun: either way the file is on disk when this returns, for a process that stops next.
    func writeIfDue(from storage: EtcdStorage) {
        let failure = writing.withLock { () -> StorableConfigError? in
            guard takeScheduled(), let snapshot = storage.snapshotContents() else { return nil }
            return write(snapshot, store: storage.description)
        }
        // Reported with no lock held: the handler is the user's code.
        if let failure { StorableConfig.report(failure) }
    }

    /// Whether a write was due; it is no longer.
    private func takeScheduled() -> Bool {
        lock.withLock {
            defer { scheduled = false }
            return scheduled
        }
    }

    /// Writes `snapshot` now, on the caller's thread; returns the failure to report: the first, until a write
    /// succeeds.
    private func write(_ snapshot: EtcdSnapshot, store: String) -> StorableConfigError? {
        lock.withLock { lastWrite = .now }
        do {
            try snapshot.write(to: url)
            lock.withLock {
                failing = false
                counts += 1
            }
            return nil
        } catch {
            let first = lock.withLock { () -> Bool in
                defer { failing = true }
                return !failing
            }
            guard first else { return nil }
            return .reloadFailed(
                store: store,
                reason: "the snapshot \(url.path) could not be written (\(error)); the store goes on without it, and "
                    + "the file keeps what it had")
        }
    }
}
