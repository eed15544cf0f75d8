import Foundation

/// Calls `onChange` soon after what a path leads to changes: for a file, when it is written in place, replaced
/// (renamed over), removed or created; for a directory, when an entry in it is added, written in place, replaced
/// or removed (only the entries `names` gives, and the kubelet's `..` entries, when it is given). Calls may be
/// spurious or coalesced: the caller compares contents.
///
/// Where the path leads through symbolic links, every link on the way is watched too (see
/// ``FileSystem/entriesOnTheWay(to:)``), so a link re-pointed (a dotfile manager's `ln -sf`, the kubelet's
/// rename of `..data` in a ConfigMap or Secret volume) is a change; so are the links inside a watched
/// directory. A path that does not exist yet is watched from its nearest existing directory.
///
/// On Linux it asks the kernel through the process's one inotify instance (`FileWatcher+Inotify.swift`), shared
/// by every watcher, whose thread calls `onChange`; a change is seen within milliseconds. On Apple platforms,
/// kernel events on the same directories wake a thread of its own at once, and it polls as well for what they do
/// not report (`FileWatcher+Dispatch.swift`). Elsewhere, with `forcePolling`, and where the kernel's watching
/// cannot be had (the user's inotify instances or watches are used up), its own thread compares a ``Snapshot`` of
/// the path every `pollingInterval`; the first such fallback in the process is reported
/// (``StorableConfigError/watchingByPolling(path:reason:interval:)``).
final class FileWatcher: Sendable {
    /// What a watcher on a thread of its own and its thread share.
    private final class Shared: @unchecked Sendable {
        /// Signalled by `stop()` once `stopped` is set, and on Apple platforms by the kernel's events: one semaphore,
        /// so that the thread waits for either, and for its polling interval, in one call.
        let wake = DispatchSemaphore(value: 0)
        let stopped = Locked(false)
        let finished = DispatchSemaphore(value: 0)
        // Written once by the thread as it starts, before anyone can call `stop()` on it from there.
        var thread: pthread_t?
    }

    /// How the watching is done now.
    private enum Backing {
        /// Being started.
        case starting
        /// By the process's inotify instance, under this registration.
        case kernel(Int)
        /// By a thread of its own.
        case thread(Shared)
        case stopped
    }

    private let backing: Locked<Backing>

    /// Whether the process has fallen back to polling once already (it is said once per process).
    private static let fellBack = Locked(false)

    /// Starts watching `path`, a file or a directory, which need not exist. When this returns, the watching has
    /// begun: a change made after it is seen.
    /// - Parameters:
    ///   - names: For a directory at the end of the path, the names in it that matter (besides the kubelet's
    ///     `..` entries), asked again at each event; `nil`: every name.
    /// - Throws: Nothing any more (a watching thread needs no pipe since it waits on a semaphore); the `throws`
    ///   stays until `SourceRegistry`, which handles a watcher that cannot be had, drops its `catch`.
    init(
        path: String, pollingInterval: Double = 0.25, forcePolling: Bool = false,
        names: (@Sendable () -> Set<String>)? = nil, onChange: @escaping @Sendable () -> Void
    ) throws {
        let backing = Locked(Backing.starting)
        self.backing = backing
        let filter = NameFilter(names: names)
        #if canImport(Glibc) || canImport(Musl)
            if !forcePolling {
                // When the kernel's watching is lost later (a directory on the way that cannot be watched any
                // more), a thread of its own polls instead, unless the watcher was stopped meanwhile.
                let lost: @Sendable (String) -> Void = { reason in
                    Self.fallBack(reason, path: path, interval: pollingInterval)
                    let shared = Self.startThread(
                        path: path, interval: pollingInterval, forcePolling: true, filter: filter,
                        changedBefore: true, onChange: onChange)
                    let kept = backing.withLock { backing -> Bool in
                        guard case .stopped = backing else {
                            backing = .thread(shared)
                            return true
                        }
                        return false
                    }
                    if !kept { Self.stopThread(shared, waiting: false) }
                }
                switch Inotify.add(path: path, filter: filter, onChange: onChange, onLoss: lost) {
                case .success(let registration):
                    backing.withLock { backing in
                        if case .starting = backing { backing = .kernel(registration) }
                    }
                    return
                case .failure(let failure):
                    Self.fallBack(failure.reason, path: path, interval: pollingInterval)
                }
            }
        #endif
        let shared = Self.startThread(
            path: path, interval: pollingInterval, forcePolling: forcePolling, filter: filter, changedBefore: false,
            onChange: onChange)
        backing.withLock { $0 = .thread(shared) }
    }

    /// Stops watching. Called from any other thread and `waiting`, it waits until `onChange` can no longer be
    /// called; called from `onChange` itself (or from the thread that calls it), or not `waiting`, it returns at
    /// once, and `onChange` may be called once more meanwhile.
    func stop(waiting: Bool = true) {
        let previous = backing.withLock { backing -> Backing in
            defer { backing = .stopped }
            return backing
        }
        switch previous {
        case .kernel(let registration):
            #if canImport(Glibc) || canImport(Musl)
                Inotify.remove(registration, waiting: waiting)
            #endif
            _ = registration
        case .thread(let shared): Self.stopThread(shared, waiting: waiting)
        case .starting, .stopped: break
        }
    }

    /// Reports, the first time in the process, why the kernel's watching cannot be had and `path` is polled.
    private static func fallBack(_ reason: String, path: String, interval: Double) {
        let first = fellBack.withLock { fellBack -> Bool in
            defer { fellBack = true }
            return !fellBack
        }
        if first { StorableConfig.report(.watchingByPolling(path: path, reason: reason, interval: interval)) }
    }

    private static func stopThread(_ shared: Shared, waiting: Bool) {
        shared.stopped.withLock { $0 = true }
        shared.wake.signal()
        if !waiting { return }
        if let thread = shared.thread, pthread_equal(thread, pthread_self()) != 0 { return }
        shared.finished.wait()
    }

    /// Starts a thread of its own that watches `path` (kernel events where they can be had on Apple platforms,
    /// else polling) until stopped, and returns once the watching has begun.
    private static func startThread(
        path: String, interval: Double, forcePolling: Bool, filter: NameFilter, changedBefore: Bool,
        onChange: @escaping @Sendable () -> Void
    ) -> Shared {
        let shared = Shared()
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            shared.thread = pthread_self()
            defer { shared.finished.signal() }
            Self.watch(
                path: path, interval: interval, filter: filter, shared: shared, kernelEvents: !forcePolling,
                changedBefore: changedBefore, ready: { started.signal() }, onChange: onChange)
        }
        started.wait()
        return shared
    }

    /// Compares a ``Snapshot`` of `path` every `interval` seconds, and on Apple platforms with `kernelEvents` at
    /// once when vnode sources on the directories on the way and on the end of the path report an event (see
    /// ``openSources(for:filter:queue:wake:)``); polling stays there, because a directory's source does not report
    /// a file in it written in place. Calls `ready` once the watching has begun, and returns once `shared` is
    /// stopped.
    /// - Parameter changedBefore: Whether to report a change at once: one between the kernel's last report and the
    ///   first snapshot would be missed.
    private static func watch(
        path: String, interval: Double, filter: NameFilter, shared: Shared, kernelEvents: Bool, changedBefore: Bool,
        ready: () -> Void, onChange: () -> Void
    ) {
        #if canImport(Darwin)
            let queue = DispatchQueue(label: "StorableConfig.FileWatcher")
            var sources = kernelEvents ? openSources(for: path, filter: filter, queue: queue, wake: shared.wake) : []
            defer { for source in sources { source.cancel() } }
        #endif
        var last = Snapshot(of: path, filter: filter)
        ready()
        if changedBefore { onChange() }
        while true {
            let woken = shared.wake.wait(timeout: .now() + interval) == .success
            // Events that came together are one: the sources are opened anew and the path compared once.
            if woken { while shared.wake.wait(timeout: .now()) == .success {} }
            if shared.stopped.withLock({ $0 }) { return }
            #if canImport(Darwin)
                if woken, kernelEvents {
                    // A rename may have changed the way: the sources are opened anew.
                    for source in sources { source.cancel() }
                    sources = openSources(for: path, filter: filter, queue: queue, wake: shared.wake)
                }
            #endif
            let current = Snapshot(of: path, filter: filter)
            if current != last {
                last = current
                onChange()
            }
        }
    }

    /// Which names in a directory at the end of the watched path matter: every name, or those a caller gives
    /// (asked again each time, as they can grow) and the kubelet's `..` entries.
    struct NameFilter: Sendable {
        let names: (@Sendable () -> Set<String>)?

        /// The names in `directory` to look at: those given, `..data` included, looked up one by one without
        /// listing the directory; or, with none given, every name in it.
        func namesToLookAt(in directory: String) -> [String] {
            names.map { Array($0().union(["..data"])) }
                ?? (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        }
    }

    /// What polling compares: the identity stamp of what the path leads to and, for a directory, of every
    /// entry in it that matters (following links, so that a ConfigMap's swapped `..data` changes every entry's
    /// stamp).
    enum Snapshot: Equatable {
        case missing
        case entry(FileSystem.Stamp)
        case directory(FileSystem.Stamp, entries: [String: FileSystem.Stamp])

        init(of path: String, filter: NameFilter) {
            var info = stat()
            guard stat(path, &info) == 0 else {
                self = .missing
                return
            }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                self = .entry(FileSystem.stamp(of: info))
                return
            }
            var entries: [String: FileSystem.Stamp] = [:]
            for name in filter.namesToLookAt(in: path) {
                var entry = stat()
                // A dangling link has no end to stamp: the link's own stamp stands for it.
                let entryPath = FileSystem.joined(path, name)
                if stat(entryPath, &entry) == 0 || lstat(entryPath, &entry) == 0 {
                    entries[name] = FileSystem.stamp(of: entry)
                }
            }
            self = .directory(FileSystem.stamp(of: info), entries: entries)
        }
    }

    /// A directory to watch, and which of its names matter.
    struct WatchedDirectory {
        var directory: String
        var names: Set<String> = []
        /// The watched path is this directory: every name matters, or those of the watcher's filter.
        var everyName = false

        /// Whether an event for `name` matters, given what the watcher's filter gave (`nil`: no filter, every name
        /// matters; else those it gave and the kubelet's `..` entries).
        func matters(_ name: String, filtered: Set<String>?) -> Bool {
            names.contains(name) || (everyName && (filtered.map { name.hasPrefix("..") || $0.contains(name) } ?? true))
        }
    }

    /// The directories whose changes can change what `path` leads to, by path (with no link in it): those of
    /// the entries on the way (for a missing path, the nearest existing directory, for the missing name); for a
    /// directory at the end, the directory itself, and the entries on the way to where each link in it that
    /// matters leads (every link when `filter` has no names; else those it names, and `..data`, looked up one by
    /// one without listing the directory).
    static func directoriesToWatch(for path: String, filter: NameFilter) -> [String: WatchedDirectory] {
        var directories: [String: WatchedDirectory] = [:]
        func add(_ entries: [FileSystem.DirectoryEntry]) {
            for (directory, name) in entries {
                directories[directory, default: WatchedDirectory(directory: directory)].names.insert(name)
            }
        }
        let (entries, reachedTheEnd) = FileSystem.entriesOnTheWay(to: path)
        add(entries)
        guard reachedTheEnd, let last = entries.last else { return directories }
        let end = FileSystem.joined(last.directory, last.name)
        var info = stat()
        guard stat(end, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return directories }
        directories[end, default: WatchedDirectory(directory: end)].everyName = true
        for name in filter.namesToLookAt(in: end) {
            let entry = FileSystem.joined(end, name)
            if lstat(entry, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                add(FileSystem.entriesOnTheWay(to: entry).entries)
            }
        }
        return directories
    }
}
