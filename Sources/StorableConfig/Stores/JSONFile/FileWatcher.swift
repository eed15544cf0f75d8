import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Calls `onChange` soon after what a path leads to changes, on a thread of its own: for a file, when it is
/// written in place, replaced (renamed over), removed or created; for a directory, when an entry in it is added,
/// written in place, replaced or removed. Calls may be spurious or coalesced: the caller compares contents.
///
/// Where the path leads through symbolic links, every link on the way is watched too (see
/// ``FileSystem/entriesOnTheWay(to:)``), so a link re-pointed (a dotfile manager's `ln -sf`, the kubelet's
/// rename of `..data` in a ConfigMap or Secret volume) is a change; so are the links inside a watched
/// directory. A path that does not exist yet is watched from its nearest existing directory.
///
/// On Linux it asks the kernel (inotify, see `FileWatcher+Inotify.swift`), so a change is seen within
/// milliseconds. On Apple platforms, kernel events on the same directories wake it at once, and it polls as
/// well for what they do not report (`FileWatcher+Dispatch.swift`). Elsewhere, with `forcePolling`, and where
/// the kernel's watching cannot be had, it compares a ``Snapshot`` of the path every `pollingInterval`.
final class FileWatcher: Sendable {
    /// What the watcher and its thread share; the pipe is closed when both are done with it.
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

    private let shared: Shared

    /// Starts watching `path`, a file or a directory, which need not exist. When this returns, the watching has
    /// begun: a change made after it is seen.
    /// - Throws: `FileSystem.Failure` if the pipe that stops the watching cannot be made.
    init(
        path: String, pollingInterval: Double = 0.25, forcePolling: Bool = false,
        onChange: @escaping @Sendable () -> Void
    ) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw FileSystem.Failure(path: path, operation: "pipe", errno: errno) }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let shared = Shared(stopRead: pipeEnds[0], stopWrite: pipeEnds[1])
        self.shared = shared
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            shared.thread = pthread_self()
            Self.run(
                path: path, interval: pollingInterval, forcePolling: forcePolling, stop: shared.stopRead,
                started: started, onChange: onChange)
            shared.finished.signal()
        }
        started.wait()
    }

    /// Stops watching. Called from any other thread and `waiting`, it waits until `onChange` can no longer be
    /// called; called from `onChange` itself, or not `waiting`, it returns at once, and the watching ends when
    /// the watcher's thread next looks (`onChange` may be called once more meanwhile).
    func stop(waiting: Bool = true) {
        var byte: UInt8 = 1
        _ = write(shared.stopWrite, &byte, 1)
        if !waiting { return }
        if let thread = shared.thread, pthread_equal(thread, pthread_self()) != 0 { return }
        shared.finished.wait()
    }

    /// The watcher's thread: the kernel's watching where it can be had, else polling. `started` is signalled
    /// once the watching has begun (by the kernel or by a first snapshot), so that `init` returns only then.
    private static func run(
        path: String, interval: Double, forcePolling: Bool, stop: Int32, started: DispatchSemaphore,
        onChange: @Sendable () -> Void
    ) {
        var announced = false
        func ready() {
            guard !announced else { return }
            announced = true
            started.signal()
        }
        defer { ready() }
        if !forcePolling {
            #if canImport(Glibc) || canImport(Musl)
                if watchWithInotify(path: path, stop: stop, ready: ready, onChange: onChange) { return }
            #elseif canImport(Darwin)
                if watchWithDispatchSources(
                    path: path, interval: interval, stop: stop, ready: ready, onChange: onChange)
                {
                    return
                }
            #endif
        }
        // A change between the kernel's last report and the first snapshot would be missed: report one.
        watchByPolling(
            path: path, interval: interval, stop: stop, ready: ready, changedBefore: announced, onChange: onChange)
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
        path: String, interval: Double, stop: Int32, ready: () -> Void, changedBefore: Bool,
        onChange: () -> Void
    ) {
        var last = Snapshot(of: path)
        ready()
        if changedBefore { onChange() }
        while !waitForStop(stop, orReadable: nil, milliseconds: Int32(interval * 1000)).stop {
            let current = Snapshot(of: path)
            if current != last {
                last = current
                onChange()
            }
        }
    }

    /// What polling compares: the identity stamp of what the path leads to and, for a directory, of every
    /// entry in it (following links, so that a ConfigMap's swapped `..data` changes every entry's stamp).
    enum Snapshot: Equatable {
        case missing
        case entry(FileSystem.Stamp)
        case directory(FileSystem.Stamp, entries: [String: FileSystem.Stamp])

        init(of path: String) {
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
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
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
        /// Every name matters: the watched path is this directory.
        var everyName = false

        func matters(_ name: String) -> Bool { everyName || names.contains(name) }
    }

    /// The directories whose changes can change what `path` leads to, by path (with no link in it): those of
    /// the entries on the way (for a missing path, the nearest existing directory, for the missing name); for a
    /// directory at the end, the directory itself, and the entries on the way to where each link in it leads.
    /// - Returns: The directories, and the end when it is a directory (`nil` otherwise).
    static func directoriesToWatch(for path: String) -> (directories: [String: WatchedDirectory], end: String?) {
        var directories: [String: WatchedDirectory] = [:]
        func add(_ entries: [FileSystem.DirectoryEntry]) {
            for (directory, name) in entries {
                directories[directory, default: WatchedDirectory(directory: directory)].names.insert(name)
            }
        }
        let (entries, reachedTheEnd) = FileSystem.entriesOnTheWay(to: path)
        add(entries)
        guard reachedTheEnd, let last = entries.last else { return (directories, nil) }
        let end = joined(last.directory, last.name)
        var info = stat()
        guard stat(end, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return (directories, nil) }
        directories[end, default: WatchedDirectory(directory: end)].everyName = true
        for name in (try? FileManager.default.contentsOfDirectory(atPath: end)) ?? [] {
            let entry = joined(end, name)
            if lstat(entry, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                add(FileSystem.entriesOnTheWay(to: entry).entries)
            }
        }
        return (directories, end)
    }

    /// `name` in `directory`.
    static func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
