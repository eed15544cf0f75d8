#if canImport(Darwin)
    import Darwin
    import Dispatch

    extension FileWatcher {
        /// A pipe that the kernel's event handlers write to, to wake the watcher's thread. Handlers hold it, so
        /// it is closed only after the last of them has run, whenever its source is cancelled.
        private final class WakePipe: Sendable {
            let readEnd: Int32
            let writeEnd: Int32

            init?() {
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { return nil }
                for end in ends {
                    _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(end, F_SETFL, O_NONBLOCK)
                }
                readEnd = ends[0]
                writeEnd = ends[1]
            }

            deinit {
                close(readEnd)
                close(writeEnd)
            }

            /// Wakes the thread; a full pipe has woken it already.
            func wake() {
                var byte: UInt8 = 1
                _ = write(writeEnd, &byte, 1)
            }

            func drain() {
                var bytes = [UInt8](repeating: 0, count: 64)
                while bytes.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
            }
        }

        /// Watches with vnode sources on every directory in ``directoriesToWatch(for:filter:)`` and on the end of the
        /// path, until stopped (returns `true`), or returns `false` at once if the pipe cannot be had. An event
        /// opens the sources anew (a rename may have changed the way) and compares snapshots at once; polling
        /// every `interval` stays, because a directory's source does not report a file in it written in place.
        static func watchWithDispatchSources(
            path: String, interval: Double, filter: NameFilter, stop: Int32, ready: () -> Void,
            onChange: () -> Void
        ) -> Bool {
            guard let wakePipe = WakePipe() else { return false }
            let queue = DispatchQueue(label: "StorableConfig.FileWatcher")
            var sources = openSources(for: path, filter: filter, queue: queue, pipe: wakePipe)
            var last = Snapshot(of: path, filter: filter)
            ready()
            while true {
                let (stopped, woken) = waitForStop(
                    stop, orReadable: wakePipe.readEnd, milliseconds: Int32(interval * 1000))
                if stopped { break }
                if woken {
                    wakePipe.drain()
                    for source in sources { source.cancel() }
                    sources = openSources(for: path, filter: filter, queue: queue, pipe: wakePipe)
                }
                let current = Snapshot(of: path, filter: filter)
                if current != last {
                    last = current
                    onChange()
                }
            }
            for source in sources { source.cancel() }
            return true
        }

        /// A started source for each directory to watch and for the end of the path (a file written in place
        /// reports `.write` or `.extend` on itself only). What cannot be opened is left to polling.
        private static func openSources(
            for path: String, filter: NameFilter, queue: DispatchQueue, pipe: WakePipe
        ) -> [any DispatchSourceFileSystemObject] {
            var paths = Array(directoriesToWatch(for: path, filter: filter).keys)
            paths.append(path)
            var sources: [any DispatchSourceFileSystemObject] = []
            for watched in paths {
                let descriptor = open(watched, O_EVTONLY)
                guard descriptor >= 0 else { continue }
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .delete, .rename, .link, .extend, .attrib],
                    queue: queue)
                source.setEventHandler { pipe.wake() }
                source.setCancelHandler { close(descriptor) }
                source.resume()
                sources.append(source)
            }
            return sources
        }
    }
#endif
