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
/// over it), so a change is seen within milliseconds. Elsewhere, and where inotify cannot be had, it compares
/// the file's identity stamp every `pollingInterval`.
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
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let started = DispatchSemaphore(value: 0)
        #if canImport(Glibc)
            if !forcePolling, let inotify = Self.inotifyDescriptor(directory: directory) {
                Thread.detachNewThread {
                    shared.thread = pthread_self()
                    started.signal()
                    let stopped = Self.watchWithInotify(inotify, name: name, stop: shared.stopRead, onChange: onChange)
                    close(inotify)
                    if !stopped {
                        // The directory went away: go on by comparing the file's stamp.
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
        private static func inotifyDescriptor(directory: String) -> Int32? {
            let descriptor = inotify_init1(Int32(IN_CLOEXEC))
            guard descriptor >= 0 else { return nil }
            // Writers replace the file by renaming over it (IN_MOVED_TO) or write it in place (IN_CLOSE_WRITE);
            // it can also be deleted or moved away. Creation alone is not a change: the content comes after.
            let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
            guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
                close(descriptor)
                return nil
            }
            return descriptor
        }

        /// Watches until stopped (returns `true`) or until the directory's watch is gone (returns `false`).
        private static func watchWithInotify(
            _ descriptor: Int32, name: String, stop: Int32, onChange: @Sendable () -> Void
        ) -> Bool {
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
                    let (mask, length) = buffer.withUnsafeBytes {
                        (
                            $0.load(fromByteOffset: offset + 4, as: UInt32.self),
                            Int($0.load(fromByteOffset: offset + 12, as: UInt32.self))
                        )
                    }
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { touched = true }  // events were lost: read again
                    if mask & UInt32(IN_IGNORED) != 0 { watchGone = true }
                    if String(decoding: nameBytes, as: UTF8.self) == name { touched = true }
                    offset += 16 + length
                }
                if touched { onChange() }
                if watchGone { return false }
            }
        }
    #endif
}
