import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Calls `onChange` soon after the file at a path is replaced, written or removed, on a thread of its own.
///
/// On Linux it asks the kernel (inotify on the file's directory, since writers replace the file by renaming
/// over it), so a change is seen within milliseconds. Where the path leads through symbolic links, it also
/// watches the directory of each link and of the file at the end (see ``FileSystem/entriesOnTheWay(to:)``),
/// and follows the links anew after each change. Elsewhere, and where inotify cannot be had, it compares the
/// identity stamp of the file the path leads to every `pollingInterval`.
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

    /// Starts watching.
    /// - Throws: `FileSystem.Failure` if the directory cannot be watched.
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
        #if canImport(Glibc)
            if !forcePolling, let (inotify, watches) = Self.inotifyWatches(of: path) {
                Thread.detachNewThread {
                    shared.thread = pthread_self()
                    started.signal()
                    let stopped = Self.watchWithInotify(
                        inotify, path: path, watches: watches, stop: shared.stopRead, onChange: onChange)
                    close(inotify)
                    if !stopped {
                        // A directory on the way went away: go on by comparing the file's stamp.
                        Self.watchByPolling(
                            path: path, interval: pollingInterval, stop: shared.stopRead, onChange: onChange)
                    }
                    shared.finished.signal()
                }
                started.wait()
                return
            }
        #endif
        Thread.detachNewThread {
            shared.thread = pthread_self()
            started.signal()
            Self.watchByPolling(path: path, interval: pollingInterval, stop: shared.stopRead, onChange: onChange)
            shared.finished.signal()
        }
        started.wait()
    }

    /// Stops watching. Called from any other thread, it waits until `onChange` can no longer be called; called
    /// from `onChange` itself, the watching ends when `onChange` returns.
    func stop() {
        var byte: UInt8 = 1
        _ = write(shared.stopWrite, &byte, 1)
        if let thread = shared.thread, pthread_equal(thread, pthread_self()) != 0 { return }
        shared.finished.wait()
    }

    /// Waits up to `milliseconds` for the stop signal; returns true if it came.
    private static func waitForStop(_ stop: Int32, orReadable other: Int32?, milliseconds: Int32) -> (
        stop: Bool, readable: Bool
    ) {
        var descriptors = [pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
        if let other { descriptors.append(pollfd(fd: other, events: Int16(POLLIN), revents: 0)) }
        let result = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        guard result > 0 else { return (false, false) }
        return (descriptors[0].revents != 0, descriptors.count > 1 && descriptors[1].revents != 0)
    }

    private static func watchByPolling(
        path: String, interval: Double, stop: Int32, onChange: @Sendable () -> Void
    ) {
        func stamp() -> FileSystem.Stamp? {
            if case .file(let stamp, _)? = try? FileSystem.kind(ofPath: path) { return stamp }
            return nil
        }
        var last = stamp()
        while !waitForStop(stop, orReadable: nil, milliseconds: Int32(interval * 1000)).stop {
            let current = stamp()
            if current != last {
                last = current
                onChange()
            }
        }
    }

    #if canImport(Glibc)
        /// Writers replace the file by renaming over it (IN_MOVED_TO) or write it in place (IN_CLOSE_WRITE); it
        /// can also be deleted or moved away. Creation alone is not a change, the content comes after, except for
        /// a symbolic link, which is whole when it is created.
        private static let eventMask =
            UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM) | UInt32(IN_CREATE)

        /// A new inotify descriptor watching the way to `path`, or `nil` if inotify cannot be had.
        private static func inotifyWatches(of path: String) -> (descriptor: Int32, watches: Watches)? {
            let descriptor = inotify_init1(Int32(IN_CLOEXEC))
            guard descriptor >= 0 else { return nil }
            guard let watches = watch(path, with: descriptor, [:]) else {
                close(descriptor)
                return nil
            }
            return (descriptor, watches)
        }

        /// The directories watched, by watch descriptor, with the names in each that matter.
        typealias Watches = [Int32: (directory: String, names: Set<String>)]

        /// Watches the directory of every entry on the way to `path`, and stops watching those of `current` that
        /// are no longer on the way.
        /// - Returns: The watches, or `nil` if a directory on the way is missing or cannot be watched (the
        ///   caller then closes the descriptor, which ends every watch).
        private static func watch(_ path: String, with descriptor: Int32, _ current: Watches) -> Watches? {
            let (entries, reachedTheEnd) = FileSystem.entriesOnTheWay(to: path)
            guard reachedTheEnd else { return nil }
            var watches: Watches = [:]
            for (directory, name) in entries {
                let watch = inotify_add_watch(descriptor, directory, eventMask)
                guard watch >= 0 else { return nil }
                watches[watch, default: (directory, [])].names.insert(name)
            }
            for watch in current.keys where watches[watch] == nil {
                inotify_rm_watch(descriptor, watch)
            }
            return watches
        }

        /// Watches until stopped (returns `true`) or until a directory on the way cannot be watched (returns
        /// `false`).
        private static func watchWithInotify(
            _ descriptor: Int32, path: String, watches initial: Watches, stop: Int32, onChange: @Sendable () -> Void
        ) -> Bool {
            var watches = initial
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let (stopped, readable) = waitForStop(stop, orReadable: descriptor, milliseconds: -1)
                if stopped { return true }
                guard readable else { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[len]; }
                var offset = 0
                var touched = false
                var watchGone = false
                while offset + 16 <= count {
                    let (watch, mask, length) = buffer.withUnsafeBytes {
                        (
                            $0.load(fromByteOffset: offset, as: Int32.self),
                            $0.load(fromByteOffset: offset + 4, as: UInt32.self),
                            Int($0.load(fromByteOffset: offset + 12, as: UInt32.self))
                        )
                    }
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    offset += 16 + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { touched = true }  // events were lost: read again
                    guard let watched = watches[watch] else { continue }  // one this watcher stopped
                    if mask & UInt32(IN_IGNORED) != 0 {
                        watches[watch] = nil
                        watchGone = true
                    }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    guard watched.names.contains(name) else { continue }
                    if mask & UInt32(IN_CREATE) != 0, mask & ~UInt32(IN_CREATE) & eventMask == 0 {
                        var info = stat()
                        let entry = watched.directory == "/" ? "/" + name : watched.directory + "/" + name
                        guard lstat(entry, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { continue }
                    }
                    touched = true
                }
                if touched { onChange() }
                if touched || watchGone {
                    // A link on the way may lead elsewhere now.
                    guard let renewed = watch(path, with: descriptor, watches) else { return false }
                    watches = renewed
                }
            }
        }
    #endif
}
