#if canImport(Glibc) || canImport(Musl)
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #else
        import Musl
    #endif

    extension FileWatcher {
        /// Writers replace a file by renaming over it (IN_MOVED_TO) or write it in place (IN_CLOSE_WRITE); it can
        /// also be removed or moved away. A watched directory moved away (IN_MOVE_SELF) or removed (IN_IGNORED
        /// follows) no longer holds what the path leads to. Creation alone is a change only for what is whole
        /// when created (see ``isWholeWhenCreated(_:)``).
        private static let eventMask =
            UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
            | UInt32(IN_CREATE) | UInt32(IN_MOVE_SELF)

        /// The directories watched, by watch descriptor.
        private typealias Watches = [Int32: WatchedDirectory]

        /// Watches with inotify until stopped (returns `true`), or until inotify cannot be had or a directory
        /// cannot be watched (returns `false`: the caller polls instead).
        static func watchWithInotify(
            path: String, stop: Int32, ready: () -> Void, onChange: () -> Void
        ) -> Bool {
            let descriptor = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
            guard descriptor >= 0 else { return false }
            // Closing the descriptor ends every watch on it.
            defer { close(descriptor) }
            guard var watches = watch(path, with: descriptor, [:]) else { return false }
            ready()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let (stopped, readable) = waitForStop(stop, orReadable: descriptor, milliseconds: -1)
                if stopped { return true }
                guard readable else { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                guard changed(in: buffer, count: count, watches: &watches) else { continue }
                // Watch anew before calling `onChange`, so that what it reads was either there before the new
                // watches (and is read) or is reported by them: a link on the way may lead elsewhere now.
                guard let renewed = watch(path, with: descriptor, watches) else { return false }
                watches = renewed
                onChange()
            }
        }

        /// Whether the events in `buffer` change what the path leads to; forgets the watches the kernel ended.
        private static func changed(in buffer: [UInt8], count: Int, watches: inout Watches) -> Bool {
            // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[len]; }
            var offset = 0
            var changed = false
            while offset + 16 <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes {
                    (
                        $0.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { changed = true }  // events were lost: read again
                guard let watched = watches[watch] else { continue }  // one this watcher stopped
                if mask & (UInt32(IN_IGNORED) | UInt32(IN_MOVE_SELF)) != 0 {
                    // The directory was removed, moved or unmounted: look for the way again.
                    if mask & UInt32(IN_IGNORED) != 0 { watches[watch] = nil }
                    changed = true
                    continue
                }
                let name = String(decoding: nameBytes, as: UTF8.self)
                guard watched.matters(name) else { continue }
                if mask & eventMask == UInt32(IN_CREATE), !isWholeWhenCreated(joined(watched.directory, name)) {
                    continue
                }
                changed = true
            }
            return changed
        }

        /// Whether what was just created at `path` is whole already: anything but a new regular file, whose
        /// content follows (IN_CLOSE_WRITE reports it); a hard link to an existing file is whole too.
        private static func isWholeWhenCreated(_ path: String) -> Bool {
            var info = stat()
            guard lstat(path, &info) == 0 else { return true }  // gone again: IN_DELETE follows, harmless
            return info.st_mode & S_IFMT != S_IFREG || info.st_nlink > 1
        }

        /// Watches every directory in ``directoriesToWatch(for:)``, and stops watching those of `current` that
        /// are no longer needed.
        /// - Returns: The watches, or `nil` if a directory cannot be watched (the caller then closes the
        ///   descriptor, which ends every watch).
        private static func watch(_ path: String, with descriptor: Int32, _ current: Watches) -> Watches? {
            var added = Set(current.keys)
            // A directory removed between the walk and its watch: walk again (a few times, for a busy tree).
            attempts: for _ in 0..<8 {
                var watches: Watches = [:]
                for (directory, wanted) in directoriesToWatch(for: path).directories {
                    let watch = inotify_add_watch(descriptor, directory, eventMask)
                    guard watch >= 0 else {
                        if errno == ENOENT || errno == ENOTDIR { continue attempts }
                        return nil
                    }
                    added.insert(watch)
                    // Two paths to one directory (a bind mount) share a watch descriptor.
                    var merged = watches[watch] ?? wanted
                    merged.names.formUnion(wanted.names)
                    merged.everyName = merged.everyName || wanted.everyName
                    watches[watch] = merged
                }
                for watch in added where watches[watch] == nil {
                    inotify_rm_watch(descriptor, watch)
                }
                return watches
            }
            return nil
        }
    }
#endif
