import Foundation

/// The file sources that configs of this process read: each read once and watched while a config uses it, so
/// that many configs of one class cost one reading and one watcher.
///
/// One lock guards every source's contents, its subscribers and the generation. It is never held while a file is
/// read, a watcher started or stopped, a problem reported, or a config told: those run after it is released.
final class SourceRegistry: Sendable {
    static let shared = SourceRegistry()

    /// A config that reads a source, held weakly: a source never keeps a config alive.
    private struct Subscriber {
        weak var config: StorableConfig?
    }

    private struct Entry {
        var contents: SourceContents
        /// By the config's context, by which it unsubscribes from its `deinit` without loading the weak reference.
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
        var watcher: FileWatcher?
        /// For a directory, the names its configs' settings can take (their keys and environment variables):
        /// only these files are read, and only events for them (and the kubelet's) read it again. Grows as
        /// configs of other classes subscribe.
        var names: Set<String> = []
        /// The names `contents` were read with (`names` may have grown since, its reading not installed yet).
        var readWith: Set<String> = []
        /// The descriptions of the problems reported for these contents: each is reported once.
        var reported: Set<String> = []
    }

    private struct State {
        var entries: [ConfigSource: Entry] = [:]
        /// Counts every change of any source's contents: a config resolves its layers from contents of one
        /// generation, and a setting never takes layers older than those it holds.
        var generation: UInt64 = 1

        func snapshot(of sources: [ConfigSource]) -> Snapshot {
            Snapshot(
                contents: entries.filter { sources.contains($0.key) }.mapValues(\.contents), generation: generation)
        }
    }

    private let state = Locked(State())
    /// Held while a source is read and its reading installed: one reading at a time.
    private let readings = NSLock()

    /// What a config reads from its sources: their contents, and the generation they are of.
    struct Snapshot {
        let contents: [ConfigSource: SourceContents]
        let generation: UInt64
    }

    /// Subscribes `config` to `sources`, reading and watching those that no config read yet (and again those
    /// whose files it names were not read yet), and returns their contents. Their problems are reported (once per
    /// contents).
    func subscribe(_ config: StorableConfig, to sources: [ConfigSource]) -> Snapshot {
        let sources = Array(Set(sources))
        let names = Set(config.schema.keys).union(config.layers?.variableNames ?? [])
        var made: [ConfigSource: Entry] = [:]
        var watchersNeeded: [ConfigSource] = []
        var snapshot: Snapshot?
        while snapshot == nil {
            // A directory that configs of another class read: the files this one names are read too, before its
            // settings take their values.
            let widened = state.withLock { state -> [ConfigSource] in
                sources.filter { source in
                    guard source.format == .directory, let entry = state.entries[source],
                        !names.isSubset(of: entry.readWith)
                    else { return false }
                    state.entries[source]?.names.formUnion(names)
                    return true
                }
            }
            for source in widened { refresh(source) }
            let missing = state.withLock { state in sources.filter { state.entries[$0] == nil && made[$0] == nil } }
            for source in missing {
                let wanted = source.format == .directory ? names : nil
                made[source] = Entry(
                    contents: SourceContents.read(source, names: wanted), names: wanted ?? [], readWith: wanted ?? [])
            }
            snapshot = state.withLock { state -> Snapshot? in
                // A source whose last config went away since it was looked up is read again, and one that another
                // config read meanwhile without this one's names is read with them: subscribe to all or to none.
                let ready = sources.allSatisfy { source in
                    guard let entry = state.entries[source] else { return made[source] != nil }
                    return source.format != .directory || names.isSubset(of: entry.readWith)
                }
                guard ready else { return nil }
                for source in sources {
                    if state.entries[source] == nil, let entry = made[source] {
                        state.entries[source] = entry
                        watchersNeeded.append(source)
                    }
                    state.entries[source]?.subscribers[ObjectIdentifier(config.context)] = Subscriber(config: config)
                }
                return state.snapshot(of: sources)
            }
            if snapshot == nil {
                // Those not installed are read again, with the names they lacked.
                made = made.filter { source, _ in state.withLock { $0.entries[source] == nil } }
            }
        }
        for source in watchersNeeded {
            let watcher: FileWatcher
            let names: (@Sendable () -> Set<String>)? =
                source.format == .directory
                ? { @Sendable [weak self] in self?.state.withLock { $0.entries[source]?.names } ?? [] } : nil
            do {
                watcher = try FileWatcher(path: source.path, names: names) { [weak self] in
                    self?.refresh(source)
                }
            } catch {
                reportOnce(
                    .sourceUnusable(
                        where: source.description,
                        reason: "it cannot be watched (\(error)): changes are read only at reloadSources()"),
                    for: source)
                continue
            }
            let kept = state.withLock { state -> Bool in
                guard state.entries[source] != nil, state.entries[source]?.watcher == nil else { return false }
                state.entries[source]?.watcher = watcher
                return true
            }
            if !kept { watcher.stop(waiting: false) }
        }
        // A change between the first reading and the watcher's start is not missed.
        for source in watchersNeeded { refresh(source) }
        let problems = state.withLock { state in
            sources.map { ($0, state.entries[$0]?.contents.problems ?? []) }
        }
        for (source, list) in problems {
            for problem in list { reportOnce(problem, for: source) }
        }
        return snapshot!
    }

    /// Stops telling the config whose context is `context`; a source no config reads any more is no longer
    /// watched. Called from the config's `deinit`: loads no weak reference (see `StoreHub.detach`), and costs the
    /// same however many configs are alive.
    ///
    /// A watcher no longer needed is told to stop and not waited for: its thread ends on its own, and a change
    /// it reports meanwhile finds no entry for its source (or the entry of a config that subscribed since, which
    /// reads the source again and finds what it holds).
    func unsubscribe(context: ObjectIdentifier, from sources: [ConfigSource]) {
        let unwatched = state.withLock { state -> [FileWatcher] in
            var unwatched: [FileWatcher] = []
            for source in Set(sources) {
                guard state.entries[source]?.subscribers.removeValue(forKey: context) != nil,
                    state.entries[source]?.subscribers.isEmpty == true
                else { continue }
                if let watcher = state.entries[source]?.watcher { unwatched.append(watcher) }
                state.entries[source] = nil
            }
            return unwatched
        }
        for watcher in unwatched { watcher.stop(waiting: false) }
    }

    /// The current contents of `sources`.
    func snapshot(of sources: [ConfigSource]) -> Snapshot {
        state.withLock { $0.snapshot(of: sources) }
    }

    /// Reads every source in use again now, and has every config that reads one resolve its layers and read its
    /// settings again on this thread, so that when this returns they hold what the files hold (a watcher that
    /// saw the same change may still be telling them: the outcome is the same).
    func refreshAll() {
        var configs: [ObjectIdentifier: StorableConfig] = [:]
        for source in state.withLock({ Array($0.entries.keys) }) {
            for config in refresh(source, tellingSubscribers: false) {
                configs[ObjectIdentifier(config)] = config
            }
        }
        for config in configs.values { config.sourcesChanged(loadingAll: true) }
    }

    /// Reads `source` again and reports its problems if it changed; returns the configs that read it, after
    /// telling them if it changed and `tellingSubscribers`.
    ///
    /// Readings are made one at a time, each installed before the next starts, so that a reading of older bytes
    /// never replaces one of newer bytes (the lock guards files being read, never a config or a report).
    @discardableResult
    private func refresh(_ source: ConfigSource, tellingSubscribers: Bool = true) -> [StorableConfig] {
        readings.lock()
        guard let (last, names) = state.withLock({ state in state.entries[source].map { ($0.contents, $0.names) } })
        else {
            readings.unlock()
            return []
        }
        let contents = SourceContents.read(
            source, names: source.format == .directory ? names : nil, keepingFrom: last)
        let (changed, subscribers) = state.withLock { state -> (Bool, [StorableConfig]) in
            guard var entry = state.entries[source] else { return (false, []) }
            let old = entry.contents
            let changed =
                old.fingerprint != contents.fingerprint || old.exists != contents.exists
                || old.problems.map(\.description) != contents.problems.map(\.description)
            // Installed even when nothing changed: the listing of names may differ, and the check of names reads it.
            entry.contents = contents
            entry.readWith = names
            if changed {
                // A problem is reported once per content of its file: those that name a file that changed (or
                // any, when the source appeared or went away) may be reported again.
                if old.exists != contents.exists {
                    entry.reported = []
                } else {
                    let paths = Set(old.fingerprint.keys).union(contents.fingerprint.keys).filter {
                        old.fingerprint[$0] != contents.fingerprint[$0]
                    }
                    entry.reported = entry.reported.filter { reported in !paths.contains { reported.contains($0) } }
                }
                state.generation += 1
            }
            state.entries[source] = entry
            return (changed, entry.subscribers.values.compactMap(\.config))
        }
        readings.unlock()
        guard changed else { return subscribers }
        for problem in contents.problems { reportOnce(problem, for: source) }
        if tellingSubscribers {
            for config in subscribers { config.sourcesChanged(loadingAll: false) }
        }
        return subscribers
    }

    /// Reports `problem` unless it was reported for the source's current contents.
    func reportOnce(_ problem: StorableConfigError, for source: ConfigSource) {
        let description = problem.description
        let first = state.withLock { $0.entries[source]?.reported.insert(description).inserted ?? true }
        if first { StorableConfig.report(problem) }
    }
}
