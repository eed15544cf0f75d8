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
        /// The config's context, by which it unsubscribes from its `deinit` without loading the weak reference.
        let context: ObjectIdentifier
    }

    private struct Entry {
        var contents: SourceContents
        var subscribers: [Subscriber] = []
        var watcher: FileWatcher?
        /// The descriptions of the problems reported for these contents: each is reported once.
        var reported: Set<String> = []
        /// Readings are numbered as they start, so that a slow reading never replaces a later one.
        var readingsStarted: UInt64 = 0
        var readingInstalled: UInt64 = 0
    }

    private struct State {
        var entries: [ConfigSource: Entry] = [:]
        /// Counts every change of any source's contents: a config resolves its layers from contents of one
        /// generation, and a setting never takes layers older than those it holds.
        var generation: UInt64 = 1
    }

    private let state = Locked(State())

    /// What a config reads from its sources: their contents, and the generation they are of.
    struct Snapshot {
        let contents: [ConfigSource: SourceContents]
        let generation: UInt64
    }

    /// Subscribes `config` to `sources`, reading and watching those that no config read yet, and returns their
    /// contents. Their problems are reported (once per contents).
    func subscribe(_ config: StorableConfig, to sources: [ConfigSource]) -> Snapshot {
        let missing = state.withLock { state in sources.filter { state.entries[$0] == nil } }
        var made: [ConfigSource: Entry] = [:]
        for source in Set(missing) {
            made[source] = Entry(contents: SourceContents.read(source))
        }
        var unused: [FileWatcher] = []
        var watchersNeeded: [ConfigSource] = []
        let snapshot = state.withLock { state -> Snapshot in
            for source in Set(sources) {
                if state.entries[source] == nil, let entry = made[source] {
                    state.entries[source] = entry
                    watchersNeeded.append(source)
                }
                state.entries[source]?.subscribers.append(
                    Subscriber(config: config, context: ObjectIdentifier(config.context)))
            }
            return Snapshot(
                contents: state.entries.filter { sources.contains($0.key) }.mapValues(\.contents),
                generation: state.generation)
        }
        for source in watchersNeeded {
            let watcher = try? FileWatcher(path: source.path) { [weak self] in self?.refresh(source) }
            let kept = state.withLock { state -> Bool in
                guard state.entries[source] != nil, state.entries[source]?.watcher == nil else { return false }
                state.entries[source]?.watcher = watcher
                return true
            }
            if !kept, let watcher { unused.append(watcher) }
        }
        for watcher in unused { watcher.stop() }
        // A change between the first reading and the watcher's start is not missed.
        for source in watchersNeeded { _ = refresh(source, tellingSubscribers: true) }
        for source in Set(sources) {
            for problem in snapshot.contents[source]?.problems ?? [] { reportOnce(problem, for: source) }
        }
        return snapshot
    }

    /// Stops telling the config whose context is `context`; a source no config reads any more is no longer
    /// watched. Called from the config's `deinit`: loads no weak reference (see `StoreHub.detach`).
    func unsubscribe(context: ObjectIdentifier) {
        let unwatched = state.withLock { state -> [FileWatcher] in
            var unwatched: [FileWatcher] = []
            for (source, entry) in state.entries {
                guard entry.subscribers.contains(where: { $0.context == context }) else { continue }
                var entry = entry
                entry.subscribers.removeAll { $0.context == context }
                if entry.subscribers.isEmpty {
                    if let watcher = entry.watcher { unwatched.append(watcher) }
                    state.entries[source] = nil
                } else {
                    state.entries[source] = entry
                }
            }
            return unwatched
        }
        for watcher in unwatched { watcher.stop() }
    }

    /// The current contents of `sources`.
    func snapshot(of sources: [ConfigSource]) -> Snapshot {
        state.withLock { state in
            Snapshot(
                contents: state.entries.filter { sources.contains($0.key) }.mapValues(\.contents),
                generation: state.generation)
        }
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

    /// Reads `source` again; if what it holds changed, reports its problems and tells the configs that read it.
    func refresh(_ source: ConfigSource) {
        _ = refresh(source, tellingSubscribers: true)
    }

    /// Reads `source` again and reports its problems if it changed; returns the configs that read it, after
    /// telling them if it changed and `tellingSubscribers`.
    private func refresh(_ source: ConfigSource, tellingSubscribers: Bool) -> [StorableConfig] {
        guard
            let ticket = state.withLock({ state -> UInt64? in
                guard state.entries[source] != nil else { return nil }
                state.entries[source]!.readingsStarted += 1
                return state.entries[source]!.readingsStarted
            })
        else { return [] }
        let contents = SourceContents.read(source)
        let (changed, subscribers) = state.withLock { state -> (Bool, [StorableConfig]) in
            guard var entry = state.entries[source] else { return (false, []) }
            guard ticket > entry.readingInstalled else { return (false, entry.subscribers.compactMap(\.config)) }
            entry.readingInstalled = ticket
            let changed =
                entry.contents.fingerprint != contents.fingerprint || entry.contents.exists != contents.exists
                || entry.contents.problems.map(\.description) != contents.problems.map(\.description)
            if changed {
                entry.contents = contents
                entry.reported = []
                state.generation += 1
            }
            state.entries[source] = entry
            return (changed, entry.subscribers.compactMap(\.config))
        }
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
        let first = state.withLock { state -> Bool in
            guard state.entries[source] != nil else { return true }
            return state.entries[source]!.reported.insert(description).inserted
        }
        if first { StorableConfig.report(problem) }
    }
}
