#if canImport(Glibc) || canImport(Musl)
    import Foundation

    extension FileWatcher {
        /// The process's one inotify instance, shared by every watcher: the kernel allows a user 128 instances
        /// by default (`fs.inotify.max_user_instances`), counted over all the user's processes, so one per watcher
        /// runs out. One thread reads its events, finds the watchers concerned by watch descriptor, watches anew
        /// the directories of those whose path may lead elsewhere now, and calls their `onChange`, one at a time.
        ///
        /// One lock guards the registrations; it is held while watches are added and removed (so that a watch
        /// descriptor two watchers share is never removed while the other adds it), never while a watcher's
        /// `onChange` or `onLoss` runs.
        final class Inotify: Sendable {
            /// Why the kernel's watching cannot be had.
            struct Failure: Error {
                let reason: String
            }

            /// Writers replace a file by renaming over it (IN_MOVED_TO) or write it in place (IN_CLOSE_WRITE); it
            /// can also be removed or moved away. A watched directory moved away (IN_MOVE_SELF) or removed
            /// (IN_IGNORED follows) no longer holds what the path leads to. Creation alone is a change only for
            /// what is whole when created (see ``isWholeWhenCreated(_:)``).
            private static let eventMask =
                UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
                | UInt32(IN_CREATE) | UInt32(IN_MOVE_SELF)

            /// One watcher.
            private struct Registration {
                let path: String
                let filter: NameFilter
                let onChange: @Sendable () -> Void
                let onLoss: @Sendable (String) -> Void
                /// The directories it watches, by watch descriptor.
                var watches: [Int32: WatchedDirectory] = [:]
            }

            private struct State {
                var registrations: [Int: Registration] = [:]
                /// The registrations that use each watch descriptor.
                var users: [Int32: Set<Int>] = [:]
                var nextRegistration = 0
                /// The registration whose `onChange` runs now, and who waits for it to return.
                var calling: Int?
                var waiting: [DispatchSemaphore] = []
                var reader: pthread_t?
            }

            private let descriptor: Int32
            private let state = Locked(State())

            private static let instance = Locked<Inotify?>(nil)

            private init(descriptor: Int32) {
                self.descriptor = descriptor
            }

            /// The process's instance, made (with its thread) at the first call that can make it.
            private static func shared() -> Result<Inotify, Failure> {
                if let existing = instance.withLock({ $0 }) { return .success(existing) }
                let descriptor = inotify_init1(Int32(IN_CLOEXEC))
                guard descriptor >= 0 else {
                    let code = errno
                    var reason =
                        "the kernel's file watching (inotify) cannot be had (\(String(cString: strerror(code))))"
                    if code == EMFILE {
                        reason +=
                            ": this user's processes hold all the inotify instances the system allows "
                            + "(fs.inotify.max_user_instances)"
                    }
                    return .failure(Failure(reason: reason))
                }
                let made = Inotify(descriptor: descriptor)
                let (chosen, isNew) = instance.withLock { instance -> (Inotify, Bool) in
                    if let existing = instance { return (existing, false) }
                    instance = made
                    return (made, true)
                }
                if isNew {
                    Thread.detachNewThread { made.readEvents() }
                } else {
                    close(descriptor)
                }
                return .success(chosen)
            }

            /// Starts watching `path`; when this returns, a change made after it is seen.
            /// - Returns: The registration, by which ``remove(_:waiting:)`` stops it; or why the kernel's watching
            ///   cannot be had.
            static func add(
                path: String, filter: NameFilter, onChange: @escaping @Sendable () -> Void,
                onLoss: @escaping @Sendable (String) -> Void
            ) -> Result<Int, Failure> {
                shared().flatMap { inotify in
                    let registration = inotify.state.withLock { state -> Int in
                        defer { state.nextRegistration += 1 }
                        state.registrations[state.nextRegistration] = Registration(
                            path: path, filter: filter, onChange: onChange, onLoss: onLoss)
                        return state.nextRegistration
                    }
                    guard let reason = inotify.watchAnew(registration) else { return .success(registration) }
                    inotify.state.withLock { _ = inotify.unregister(registration, in: &$0) }
                    return .failure(Failure(reason: reason))
                }
            }

            /// Stops the registration: `onChange` is not called for it once this returns, unless it runs now on
            /// another thread and not `waiting` (from the reading thread, it cannot be running: it returns at once).
            static func remove(_ registration: Int, waiting: Bool) {
                guard let inotify = instance.withLock({ $0 }) else { return }
                let semaphore = waiting ? DispatchSemaphore(value: 0) : nil
                let mustWait = inotify.state.withLock { state -> Bool in
                    _ = inotify.unregister(registration, in: &state)
                    guard let semaphore, state.calling == registration, let reader = state.reader,
                        pthread_equal(reader, pthread_self()) == 0
                    else { return false }
                    state.waiting.append(semaphore)
                    return true
                }
                if mustWait { semaphore?.wait() }
            }

            /// Removes `registration` and ends the watches no one else uses. Called with the lock held.
            private func unregister(_ registration: Int, in state: inout State) -> Registration? {
                guard let removed = state.registrations.removeValue(forKey: registration) else { return nil }
                release(Array(removed.watches.keys), of: registration, in: &state)
                return removed
            }

            /// Stops using `watches` for `registration`, and asks the kernel to end those no one uses any more.
            private func release(_ watches: [Int32], of registration: Int, in state: inout State) {
                for watch in watches {
                    state.users[watch]?.remove(registration)
                    if state.users[watch]?.isEmpty == true {
                        state.users[watch] = nil
                        inotify_rm_watch(descriptor, watch)
                    }
                }
            }

            /// Watches every directory in ``directoriesToWatch(for:filter:)`` for `registration`, and stops
            /// watching those it no longer needs.
            /// - Returns: `nil`, or why a directory cannot be watched (the registration's watches are unchanged).
            private func watchAnew(_ registration: Int) -> String? {
                guard
                    let (path, filter) = state.withLock({ $0.registrations[registration].map { ($0.path, $0.filter) } })
                else { return nil }
                // A directory removed between the walk and its watch: walk again (a few times, for a busy tree).
                for _ in 0..<8 {
                    let directories = directoriesToWatch(for: path, filter: filter)
                    enum Outcome {
                        case done
                        case again
                        case failed(String)
                    }
                    let outcome = state.withLock { state -> Outcome in
                        guard var current = state.registrations[registration] else { return .done }
                        var watches: [Int32: WatchedDirectory] = [:]
                        for (directory, wanted) in directories {
                            let watch = inotify_add_watch(descriptor, directory, Self.eventMask)
                            guard watch >= 0 else {
                                let code = errno
                                // Those added now that no one uses are ended again.
                                let fresh = watches.keys.filter { state.users[$0] == nil }
                                for watch in fresh { inotify_rm_watch(descriptor, watch) }
                                if code == ENOENT || code == ENOTDIR { return .again }
                                var reason = "\(directory) cannot be watched (\(String(cString: strerror(code))))"
                                if code == ENOSPC {
                                    reason +=
                                        ": this user's processes hold all the inotify watches the system "
                                        + "allows (fs.inotify.max_user_watches)"
                                }
                                return .failed(reason)
                            }
                            // Two paths to one directory (a bind mount) share a watch descriptor.
                            var merged = watches[watch] ?? wanted
                            merged.names.formUnion(wanted.names)
                            merged.everyName = merged.everyName || wanted.everyName
                            watches[watch] = merged
                        }
                        for watch in watches.keys { state.users[watch, default: []].insert(registration) }
                        let unused = current.watches.keys.filter { watches[$0] == nil }
                        current.watches = watches
                        state.registrations[registration] = current
                        release(unused, of: registration, in: &state)
                        return .done
                    }
                    switch outcome {
                    case .done: return nil
                    case .again: continue
                    case .failed(let reason): return reason
                    }
                }
                return "\(path) changes faster than it can be watched"
            }

            /// The reading thread: reads events, and for each watcher concerned watches anew and calls `onChange`.
            private func readEvents() {
                state.withLock { $0.reader = pthread_self() }
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    // A blocking descriptor: the read waits for events (the instance is never closed).
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    guard count > 0 else { continue }
                    for registration in changed(in: buffer, count: count).sorted() {
                        // Watch anew before calling `onChange`, so that what it reads was either there before the
                        // new watches (and is read) or is reported by them: a link on the way may lead elsewhere.
                        if let reason = watchAnew(registration) {
                            state.withLock { unregister(registration, in: &$0) }?.onLoss(reason)
                            continue
                        }
                        call(registration)
                    }
                }
            }

            /// Calls the registration's `onChange`, unless it was removed.
            private func call(_ registration: Int) {
                let onChange = state.withLock { state -> (@Sendable () -> Void)? in
                    guard let onChange = state.registrations[registration]?.onChange else { return nil }
                    state.calling = registration
                    return onChange
                }
                guard let onChange else { return }
                onChange()
                let waiting = state.withLock { state -> [DispatchSemaphore] in
                    state.calling = nil
                    defer { state.waiting = [] }
                    return state.waiting
                }
                for semaphore in waiting { semaphore.signal() }
            }

            /// The registrations that the events in `buffer` concern; forgets the watches the kernel ended.
            private func changed(in buffer: [UInt8], count: Int) -> Set<Int> {
                // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[len]; }
                var events: [(watch: Int32, mask: UInt32, name: String)] = []
                var offset = 0
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
                    events.append((watch, mask, String(decoding: nameBytes, as: UTF8.self)))
                }
                // What the events need, copied out of the lock: each watch's users and their directories.
                var changed: Set<Int> = []
                var concerned: [Int32: [(registration: Int, watched: WatchedDirectory, filter: NameFilter)]] = [:]
                state.withLock { state in
                    for event in events {
                        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            // Events were lost: every watcher reads again.
                            changed.formUnion(state.registrations.keys)
                            continue
                        }
                        if event.mask & UInt32(IN_IGNORED) != 0 {
                            // The kernel ended the watch (its directory was removed or unmounted): look for the
                            // way again.
                            for registration in state.users.removeValue(forKey: event.watch) ?? [] {
                                state.registrations[registration]?.watches[event.watch] = nil
                                changed.insert(registration)
                            }
                            continue
                        }
                        guard concerned[event.watch] == nil else { continue }
                        concerned[event.watch] = (state.users[event.watch] ?? []).compactMap { registration in
                            guard let current = state.registrations[registration],
                                let watched = current.watches[event.watch]
                            else { return nil }
                            return (registration, watched, current.filter)
                        }
                    }
                }
                // The names that matter, asked once per batch for each watcher that has a filter.
                var filtered: [Int: Set<String>?] = [:]
                for event in events where event.mask & (UInt32(IN_Q_OVERFLOW) | UInt32(IN_IGNORED)) == 0 {
                    for (registration, watched, filter) in concerned[event.watch] ?? [] {
                        guard !changed.contains(registration) else { continue }
                        if event.mask & UInt32(IN_MOVE_SELF) != 0 {
                            // The directory was moved away: look for the way again.
                            changed.insert(registration)
                            continue
                        }
                        if filtered[registration] == nil { filtered[registration] = .some(filter.names?()) }
                        guard watched.matters(event.name, filtered: filtered[registration] ?? nil) else { continue }
                        if event.mask & Self.eventMask == UInt32(IN_CREATE),
                            !Self.isWholeWhenCreated(FileSystem.joined(watched.directory, event.name))
                        {
                            continue
                        }
                        changed.insert(registration)
                    }
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
        }
    }
#endif
