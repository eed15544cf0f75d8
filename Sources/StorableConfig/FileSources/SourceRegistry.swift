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
        /// For the managed app configuration, the names its settings answer to, each with the setting's key.
        var claims: [String: String] = [:]
    }

    private struct Entry {
        var contents: SourceContents
        /// By the config's context, by which it unsubscribes from its `deinit` without loading the weak reference.
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
        /// Stops the source's watcher (a ``FileWatcher``, or a ``DefaultsWatcher`` for the managed app
        /// configuration) without waiting for it.
        var stopWatching: (@Sendable () -> Void)?
        /// For a directory, the names its configs' settings can take (their keys and environment variables):
        /// only these files are read, and only events for them (and the kubelet's) read it again. Grows as
        /// configs of other classes subscribe.
        var names: Set<String> = []
        /// The names `contents` were read with (`names` may have grown since, its reading not installed yet);
        /// `nil` until the source is first read.
        var readWith: Set<String>?
        /// The descriptions of the problems reported for these contents: each is reported once.
        var reported: Set<String> = []
        /// For the managed app configuration, the keys of the settings that each name matches, with how many
        /// subscribers claim each: a name with two keys or more is applied to none.
        var claimed: [String: [String: Int]] = [:]
        /// The ticket of the reading installed (see `State.tickets`).
        var installedTicket: UInt64 = 0
        /// The ticket of the reading that installed `contents` as they are: a later reading of the same bytes
        /// leaves it.
        var contentsTicket: UInt64 = 0
        /// The `contentsTicket` of the latest contents whose configs a watcher has finished telling: a watcher that
        /// finds the contents unchanged, but not yet told, tells them itself, so that when a change's notification
        /// returns the configs read it even if another thread's reading installed it (`UserDefaults` posts on the
        /// thread that set the value, and that thread reads the setting next).
        var toldTicket: UInt64 = 0

        /// The names that the contents give and that match two settings or more, with their keys.
        var ambiguous: [String: [String]] {
            claimed.filter { $0.value.count > 1 && contents.entries[$0.key] != nil }.mapValues { $0.keys.sorted() }
        }
    }

    private struct State {
        var entries: [ConfigSource: Entry] = [:]
        /// Counts every change of any source's contents: a config resolves its layers from contents of one
        /// generation, and a setting never takes layers older than those it holds.
        var generation: UInt64 = 1
        /// Counts the readings begun: a reading begun before the one installed is not installed.
        var tickets: UInt64 = 0

        /// Adds (or takes away) a subscriber's `claims` to those of `source`. When a name the source gives comes to
        /// match two settings or more, or stops to, counts the generation up and returns the configs that read the
        /// source, to be told.
        mutating func claim(_ claims: [String: String], on source: ConfigSource, adding: Bool) -> [StorableConfig] {
            var changed = false
            for (name, key) in claims {
                var keys = entries[source]?.claimed[name] ?? [:]
                let wasAmbiguous = keys.count > 1
                keys[key, default: 0] += adding ? 1 : -1
                if keys[key] == 0 { keys[key] = nil }
                entries[source]?.claimed[name] = keys.isEmpty ? nil : keys
                if wasAmbiguous != (keys.count > 1), entries[source]?.contents.entries[name] != nil { changed = true }
            }
            guard changed, let entry = entries[source] else { return [] }
            generation += 1
            return entry.subscribers.values.compactMap(\.config)
        }
    }

    private let state = Locked(State())
    /// Held while a source is read and its reading installed, never while a problem is reported or a config
    /// told: one reading at a time.
    private let readings = Lock()

    /// What a config reads from its sources: their contents, and the generation they are of.
    struct Snapshot {
        let contents: [ConfigSource: SourceContents]
        let generation: UInt64
        /// For the managed app configuration, the names it gives that match two settings or more, with their keys.
        var ambiguous: [ConfigSource: [String: [String]]] = [:]
    }

    /// Subscribes `config` to `sources`, watching those that no config read yet, reads those it needs (a source no
    /// config read yet, and a directory whose files it names were not read), and returns their contents. Their
    /// problems are reported (once per contents).
    func subscribe(_ config: StorableConfig, to sources: [ConfigSource]) -> Snapshot {
        let sources = Array(Set(sources))
        let names = Set(config.schema.keys).union(config.layers?.variableNames ?? [])
        let claims = sources.contains(where: \.namesByClaims) ? Self.claims(of: config) : [:]
        // Subscribed to every source at once, before any is read: a source this config reads is never dropped.
        let (new, told) = state.withLock { state -> ([ConfigSource], [StorableConfig]) in
            var new: [ConfigSource] = []
            var told: [StorableConfig] = []
            for source in sources {
                if state.entries[source] == nil {
                    state.entries[source] = Entry(contents: SourceContents())
                    new.append(source)
                }
                if source.readsByName { state.entries[source]!.names.formUnion(names) }
                let claims = source.namesByClaims ? claims : [:]
                // A name that matched one setting matches two now: the configs that read it are told.
                told += state.claim(claims, on: source, adding: true)
                let subscriber = Subscriber(config: config, claims: claims)
                state.entries[source]!.subscribers[ObjectIdentifier(config.context)] = subscriber
            }
            return (new, told)
        }
        // Watched before it is read, so that no change after the reading is missed. A source this config watched is
        // read whatever another config read meanwhile: a config subscribing at the same time may have read it
        // before the watcher started, and a change made in between would be missed by both.
        for source in new { watch(source) }
        let unread = state.withLock { state in
            sources.filter { source in
                guard !new.contains(source), let readWith = state.entries[source]?.readWith else { return true }
                return source.readsByName && !names.isSubset(of: readWith)
            }
        }
        // Read before the config's settings take their values; the config, in its initializer, is not told.
        for source in unread { refresh(source, sparing: config) }
        let problems = state.withLock { state in
            sources.map { ($0, state.entries[$0]?.contents.problems ?? []) }
        }
        for (source, list) in problems {
            for problem in list { reportOnce(problem, for: source) }
        }
        for other in told where other !== config { other.sourcesChanged(loadingAll: false) }
        return snapshot(of: sources)
    }

    /// Starts the watcher of `source`, which a subscriber just added; a source that cannot be watched is reported.
    private func watch(_ source: ConfigSource) {
        let stop: @Sendable () -> Void
        let names: (@Sendable () -> Set<String>)? =
            source.format == .directory
            ? { @Sendable [weak self] in self?.state.withLock { $0.entries[source]?.names } ?? [] } : nil
        do {
            if source.format == .managedAppConfiguration {
                let watcher = DefaultsWatcher(source.managedDefaults) { [weak self] in self?.refresh(source) }
                stop = { watcher.stop() }
            } else if source.format == .provider {
                guard let provider = source.provider else { return }  // Reported by its reading.
                stop = provider.provider.startWatching { [weak self] in self?.refresh(source) }
            } else {
                let watcher = try FileWatcher(path: source.path, names: names) { [weak self] in self?.refresh(source) }
                stop = { watcher.stop(waiting: false) }
            }
        } catch {
            reportOnce(
                .sourceUnusable(
                    where: source.description,
                    reason: "it cannot be watched (\(error)): changes are read only at reloadSources()"),
                for: source)
            return
        }
        // The entry is there: the config that made it, still in its initializer, reads it.
        state.withLock { $0.entries[source]?.stopWatching = stop }
    }

    /// Stops telling the config whose context is `context`; a source no config reads any more is no longer
    /// watched. Called from the config's `deinit`: loads no weak reference (see `StoreHub.detach`), and costs the
    /// same however many configs are alive.
    ///
    /// A watcher no longer needed is told to stop and not waited for: its thread ends on its own, and a change
    /// it reports meanwhile finds no entry for its source (or the entry of a config that subscribed since, which
    /// reads the source again and finds what it holds).
    func unsubscribe(context: ObjectIdentifier, from sources: [ConfigSource]) {
        let (unwatched, told) = state.withLock { state -> ([@Sendable () -> Void], [StorableConfig]) in
            var unwatched: [@Sendable () -> Void] = []
            var told: [StorableConfig] = []
            for source in Set(sources) {
                guard let gone = state.entries[source]?.subscribers.removeValue(forKey: context) else { continue }
                // A name that matched two settings matches one now: the configs that read it are told.
                told += state.claim(gone.claims, on: source, adding: false)
                guard state.entries[source]?.subscribers.isEmpty == true else { continue }
                if let stop = state.entries[source]?.stopWatching { unwatched.append(stop) }
                state.entries[source] = nil
            }
            return (unwatched, told)
        }
        for stop in unwatched { stop() }
        for config in told { config.sourcesChanged(loadingAll: false) }
    }

    /// The current contents of `sources`.
    func snapshot(of sources: [ConfigSource]) -> Snapshot {
        state.withLock { state in
            let chosen = state.entries.filter { sources.contains($0.key) }
            return Snapshot(
                contents: chosen.mapValues(\.contents), generation: state.generation,
                ambiguous: chosen.filter(\.key.namesByClaims).mapValues(\.ambiguous))
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

    /// Reads `source` again and reports its problems if it changed; returns the configs that read it, after
    /// telling them (but `sparing`) if it changed and `tellingSubscribers`. Also when another thread's reading
    /// installed the change and has not finished telling them: when a watcher's call returns, its configs read
    /// what it saw.
    ///
    /// Readings are made one at a time, each installed before the next starts, so that a reading of older bytes
    /// never replaces one of newer bytes (the lock guards files being read, never a config or a report: a config
    /// told may run an observer that reloads the sources).
    @discardableResult
    private func refresh(
        _ source: ConfigSource, sparing: StorableConfig? = nil, tellingSubscribers: Bool = true
    ) -> [StorableConfig] {
        // The managed app configuration and a provider are read without that lock: `UserDefaults` may post the
        // notification that calls this from inside a call that a reading waits for, and a provider is the user's
        // code. The ticket keeps an older reading out.
        let installed =
            source.namesByClaims ? readAndInstall(source) : readings.withLock { readAndInstall(source) }
        guard let (contents, subscribers, untold) = installed else { return [] }
        // Reported outside the lock (the error handler is the user's code), so each only while the contents are
        // still those read: a newer reading of fixed files makes the rest of them old news. A reading of contents
        // not yet told reports too (once per contents): the problems are there when this returns, as the values.
        guard let untold else { return subscribers }
        for problem in contents.problems { reportOnce(problem, for: source, ofReading: untold) }
        guard tellingSubscribers else { return subscribers }
        for config in subscribers where config !== sparing { config.sourcesChanged(loadingAll: false) }
        state.withLock { state in
            if let told = state.entries[source]?.toldTicket, told < untold {
                state.entries[source]?.toldTicket = untold
            }
        }
        return subscribers
    }

    /// Reads `source` and installs the reading unless a later one was installed meanwhile; returns the contents
    /// installed, the configs that read them, and the `contentsTicket` of those contents if no
    /// watcher has finished telling their configs (`nil`: told, or no config reads the source any more).
    private func readAndInstall(_ source: ConfigSource) -> (SourceContents, [StorableConfig], UInt64?)? {
        guard
            let (last, names, ticket) = state.withLock({ state in
                state.entries[source].map { entry in
                    state.tickets += 1
                    return (entry.contents, entry.names, state.tickets)
                }
            })
        else { return nil }
        let contents = SourceContents.read(source, names: source.readsByName ? names : nil, keepingFrom: last)
        return state.withLock { state -> (SourceContents, [StorableConfig], UInt64?) in
            guard var entry = state.entries[source] else { return (contents, [], nil) }
            func installed(_ entry: Entry) -> (SourceContents, [StorableConfig], UInt64?) {
                let untold = entry.toldTicket < entry.contentsTicket ? entry.contentsTicket : nil
                return (entry.contents, entry.subscribers.values.compactMap(\.config), untold)
            }
            // A later reading was installed: its contents are the newest, told here too if still untold.
            guard entry.installedTicket < ticket else { return installed(entry) }
            entry.installedTicket = ticket
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
                // A problem gone from these contents may be reported again when it comes back (a provider that
                // fails, answers, and fails again the same way).
                entry.reported.subtract(
                    Set(old.problems.map(\.description)).subtracting(contents.problems.map(\.description)))
                state.generation += 1
                entry.contentsTicket = ticket
            }
            state.entries[source] = entry
            return installed(entry)
        }
    }

    /// Reports `problem` unless it was reported for the source's current contents, or, for a problem of the
    /// reading with the ticket `reading`, unless a newer reading has changed the contents since.
    func reportOnce(_ problem: StorableConfigError, for source: ConfigSource, ofReading reading: UInt64? = nil) {
        let description = problem.description
        let first = state.withLock { state -> Bool in
            if let reading, let entry = state.entries[source], entry.contentsTicket != reading { return false }
            return state.entries[source]?.reported.insert(description).inserted ?? true
        }
        if first { StorableConfig.report(problem) }
    }

    /// The names that `config`'s settings answer to in the managed app configuration, each with its key: the key
    /// itself, and `<configName>.<property name>`.
    private static func claims(of config: StorableConfig) -> [String: String] {
        let configName = type(of: config).configName
        var claims: [String: String] = [:]
        for (name, key) in zip(config.schema.names, config.schema.keys) {
            claims[key] = key
            claims["\(configName).\(name)"] = key
        }
        return claims
    }
}
