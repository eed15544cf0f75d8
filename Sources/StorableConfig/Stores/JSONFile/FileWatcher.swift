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
    /// What a watcher on a thread of its own and its thread share; the pipe is closed when both are done with it.
    private final class Shared: @unchecked Sendable {
        let stopRead: Int32
        let stopWrite: Int32
        let finished = DispatchSemaphore(value: 0)
        // Written once by the thread as it starts, before anyone can call `stop()` on it from there.
        var thread: pthread_t?

        init(stopRead: Int32, stopWrite: Int32) {
            self.stopRead = stopRead
            self.stopWrite = stopWrite
        }

        deinit {
            close(stopRead)
            close(stopWrite)
        }
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
    /// - Throws: `FileSystem.Failure` if the pipe that stops a watching thread cannot be made.
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
                    let shared = try? Self.startThread(
                        path: path, interval: pollingInterval, forcePolling: true, filter: filter,
                        changedBefore: true, onChange: onChange)
                    let unused = backing.withLock { backing -> Shared? in
                        guard case .stopped = backing else {
                            if let shared { backing = .thread(shared) }
                            return nil
                        }
                        return shared
                    }
                    if let unused { Self.stopThread(unused, waiting: false) }
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
        let shared = try Self.startThread(
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
        var byte: UInt8 = 1
        _ = write(shared.stopWrite, &byte, 1)
        if !waiting { return }
        if let thread = shared.thread, pthread_equal(thread, pthread_self()) != 0 { return }
        shared.finished.wait()
    }

    /// Starts a thread of its own that watches `path` (kernel events where they can be had on Apple platforms,
    /// else polling) until stopped, and returns once the watching has begun.
    private static func startThread(
        path: String, interval: Double, forcePolling: Bool, filter: NameFilter, changedBefore: Bool,
        onChange: @escaping @Sendable () -> Void
    ) throws -> Shared {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw FileSystem.Failure(path: path, operation: "pipe", errno: errno) }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let shared = Shared(stopRead: pipeEnds[0], stopWrite: pipeEnds[1])
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            shared.thread = pthread_self()
            // `started` is signalled once the watching has begun, so that `init` returns only then.
            var announced = false
            func ready() {
                guard !announced else { return }
                announced = true
                started.signal()
            }
            defer { shared.finished.signal() }
            defer { ready() }
            #if canImport(Darwin)
                if !forcePolling {
                    if Self.watchWithDispatchSources(
                        path: path, interval: interval, filter: filter, stop: shared.stopRead, ready: ready,
                        onChange: onChange)
                    {
                        return
                    }
                }
            #endif
            // A change between the kernel's last report and the first snapshot would be missed: report one.
            Self.watchByPolling(
                path: path, interval: interval, filter: filter, stop: shared.stopRead, ready: ready,
                changedBefore: changedBefore || announced, onChange: onChange)
        }
        started.wait()
        return shared
    }

    /// Waits up to `milliseconds` (-1: for ever) for the stop signal or for `other` to be readable.
    static func waitForStop(_ stop: Int32, orReadable other: Int32?, milliseconds: Int32) -> (
        stop: Bool, readable: Bool
    ) {
        var descriptors = [pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
        if let other { descriptors.append(pollfd(fd: other, events: Int16(POLLIN), revents: 0)) }
        let result = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        guard result > 0 else { return (false, false) }
        return (descriptors[0].revents != 0, descriptors.count > 1 && descriptors[1].revents != 0)
    }

    private static func watchByPolling(
        path: String, interval: Double, filter: NameFilter, stop: Int32, ready: () -> Void, changedBefore: Bool,
        onChange: () -> Void
    ) {
        var last = Snapshot(of: path, filter: filter)
        ready()
        if changedBefore { onChange() }
        while !waitForStop(stop, orReadable: nil, milliseconds: Int32(interval * 1000)).stop {
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
                let entryPath = FileWatcher.joined(path, name)
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
        let end = joined(last.directory, last.name)
        var info = stat()
        guard stat(end, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return directories }
        directories[end, default: WatchedDirectory(directory: end)].everyName = true
        for name in filter.namesToLookAt(in: end) {
            let entry = joined(end, name)
            if lstat(entry, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                add(FileSystem.entriesOnTheWay(to: entry).entries)
            }
        }
        return directories
    }

    /// `name` in `directory`.
    static func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
