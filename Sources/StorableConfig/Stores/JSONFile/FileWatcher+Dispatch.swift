#if canImport(Darwin)
    import Darwin
    import Dispatch

    extension FileWatcher {
        /// A started source for each directory in ``directoriesToWatch(for:filter:)`` and for the end of the path (a
        /// file written in place reports `.write` or `.extend` on itself only), each signalling `wake` at every
        /// event. What cannot be opened is left to polling.
        static func openSources(
            for path: String, filter: NameFilter, queue: DispatchQueue, wake: DispatchSemaphore
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
                source.setEventHandler { wake.signal() }
                source.setCancelHandler { close(descriptor) }
                source.resume()
                sources.append(source)
            }
            return sources
        }
    }
#endif
