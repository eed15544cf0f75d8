import Foundation

extension StorableConfig {
    private static let defaultSourcesStorage = Locked(ConfigSources.none)

    /// The file sources of every config class that does not choose its own with ``sources``: none unless set.
    /// Set it at start-up, before the first config is created:
    ///
    /// ```swift
    /// StorableConfig.defaultSources = ConfigSources(belowStore: [.directory("/etc/app/config")])
    /// ```
    public static var defaultSources: ConfigSources {
        get { ConfigDefaults.current?.sources ?? defaultSourcesStorage.withLock { $0 } }
        set { defaultSourcesStorage.withLock { $0 = newValue } }
    }

    /// Reads every file source in use again now, and updates the settings whose values changed, as a watcher
    /// does when the files change. For a program that reloads on a signal of its own choosing:
    ///
    /// ```swift
    /// let hangUp = DispatchSource.makeSignalSource(signal: SIGHUP)
    /// hangUp.setEventHandler { StorableConfig.reloadSources() }
    /// ```
    ///
    /// The library installs no signal handler itself.
    public static func reloadSources() {
        SourceRegistry.shared.refreshAll()
    }

    /// Reads the layers of every setting (launch arguments, environment variables, file sources), before the
    /// stored values are loaded; subscribes to the file sources, which then tell the config of their changes.
    func applyLayers() {
        guard let layers = ConfigLayers.declared(by: type(of: self), names: schema.names) else { return }
        self.layers = layers
        var snapshot = SourceRegistry.Snapshot(contents: [:], generation: 0)
        if !layers.sources.isEmpty {
            for setting in settings { setting.prepareForLayers(hasLayerBelow: !layers.sources.belowStore.isEmpty) }
            snapshot = SourceRegistry.shared.subscribe(self, to: layers.sources.all)
        }
        _ = resolveLayers(layers, snapshot, isFirstLoad: true)
    }

    /// Takes a change that a source made while the initializer ran, once the settings are loaded.
    func finishApplyingLayers() {
        guard let layers, !layers.sources.isEmpty else { return }
        let missed = layers.state.withLock { state -> Bool in
            state.isReady = true
            return state.missedAChange
        }
        if missed { sourcesChanged(loadingAll: false) }
    }

    /// Stops hearing from the file sources: from `deinit`.
    func endSources() {
        guard let layers, !layers.sources.isEmpty else { return }
        SourceRegistry.shared.unsubscribe(context: ObjectIdentifier(context), from: layers.sources.all)
    }

    /// A file source this config reads changed: resolves the layers again and reads the store again for the
    /// settings whose layers changed (every setting, `loadingAll`), which tells their observers when their
    /// values change.
    func sourcesChanged(loadingAll: Bool) {
        guard let layers else { return }
        let isReady = layers.state.withLock { state -> Bool in
            if !state.isReady { state.missedAChange = true }
            return state.isReady
        }
        // Until the initializer has loaded the settings, a change is noted and taken afterwards.
        guard isReady else { return }
        let snapshot = SourceRegistry.shared.snapshot(of: layers.sources.all)
        let changed = resolveLayers(layers, snapshot, isFirstLoad: false)
        guard loadingAll || !changed.isEmpty else { return }
        loadSettings(version: context.hub.currentVersion(), onlyKeys: loadingAll ? nil : changed)
    }

    /// Gives every setting its layers from `snapshot`; returns the keys of the settings whose layers changed.
    private func resolveLayers(
        _ configLayers: ConfigLayers, _ snapshot: SourceRegistry.Snapshot, isFirstLoad: Bool
    ) -> Set<String> {
        let type = type(of: self)
        let hasSources = !configLayers.sources.isEmpty
        // The file sources by their identity as a layer (their place in the order and what they are).
        var sourceOfLayer: [String: ConfigSource] = [:]
        var changed: Set<String> = []
        // The launch arguments' and environment variables' problems (found once, at creation), and the files'.
        var argumentProblems: [StorableConfigError] = []
        var problems: [StorableConfigError] = []
        for (index, (name, setting)) in zip(schema.names, settings).enumerated() {
            let key = schema.keys[index]
            let variable = configLayers.variableNames[index]
            var namingProblems: [StorableConfigError] = []
            /// The value that `layer`, at `position` in the order, gives the setting, if any.
            func candidate(_ layer: ConfigLayers.Layer, position: Int) -> OverrideCandidate? {
                let source: ConfigSource
                switch layer {
                case .arguments(let arguments):
                    let option = ConfigOverrides.argumentName(configName: type.configName, name: name)
                    switch OverrideNames.text(for: option, in: arguments, isBool: setting.isBool) {
                    case .some(.some(let text)):
                        return OverrideCandidate(
                            source: .argument, origin: "launch argument \(option)", value: .text(text))
                    case .some(.none):
                        namingProblems.append(
                            .invalidOverride(
                                origin: "launch argument \(option)", key: key, value: "",
                                reason: "it needs a value: \(option) <value> or \(option)=<value>"))
                        return nil
                    case .none:
                        return nil
                    }
                case .environment(let environment):
                    return environment[variable].map {
                        OverrideCandidate(
                            source: .environment, origin: "environment variable \(variable)", value: .text($0))
                    }
                case .source(let file):
                    source = file
                }
                guard let contents = snapshot.contents[source] else { return nil }
                let entry: SourceContents.Entry?
                switch source.format {
                case .dotEnv: entry = contents.entries[variable]
                case .directory: entry = contents.entries[key] ?? contents.entries[variable]
                case .json: entry = contents.entries[key] ?? contents.documentEntries[configLayers.documentNames[index]]
                case .managedAppConfiguration, .provider:
                    entry = managedEntry(
                        in: contents, of: source, names: [key, "\(type.configName).\(name)"],
                        ambiguous: snapshot.ambiguous[source] ?? [:], problems: &problems)
                }
                guard let entry else { return nil }
                if let version = entry.schemaVersion, version != type.schemaVersion {
                    SourceRegistry.shared.reportOnce(
                        .sourceUnusable(
                            where: source.description,
                            reason: "it holds \(type.configName)'s values in schema version \(version), and this "
                                + "program reads version \(type.schemaVersion) (import the document to migrate "
                                + "it); its values for \(type.configName) are not read"), for: source)
                    return nil
                }
                let identity = "\(position) \(source.description)"
                sourceOfLayer[identity] = source
                return OverrideCandidate(
                    source: source.format == .managedAppConfiguration
                        ? .managed : source.format == .provider ? .provider : .file, origin: entry.origin,
                    value: entry.value, layer: identity, isSecret: source.isSecret)
            }
            let found = configLayers.ordered.enumerated().map { candidate($1, position: $0) }
            let above = found[..<configLayers.storePosition].compactMap { $0 }
            let below = found[configLayers.storePosition...].compactMap { $0 }
            if isFirstLoad {
                // Launch arguments and environment variables never change: reported once, at creation.
                for problem in namingProblems { StorableConfig.report(problem) }
                argumentProblems += namingProblems
            }
            // A setting that no layer names, in a config without file sources, is left as it is (it may hold no
            // layer state at all).
            if !hasSources, above.isEmpty { continue }
            // Without file sources, only at creation (their layers never change), and for the settings they name.
            if !hasSources { setting.prepareForLayers(hasLayerBelow: false) }
            let outcome = setting.takeLayers(
                above: above, below: hasSources ? below : nil, isFirstLoad: isFirstLoad, generation: snapshot.generation
            )
            if outcome.changed { changed.insert(key) }
            for (layer, problem) in outcome.problems {
                if let source = sourceOfLayer[layer] {
                    SourceRegistry.shared.reportOnce(problem, for: source)
                    problems.append(problem)
                } else if isFirstLoad {
                    StorableConfig.report(problem)
                    argumentProblems.append(problem)
                }
            }
            if let hidden = outcome.hidden, let source = sourceOfLayer[hidden.layer] {
                let by = setting.overrideOrigin.map { "the \($0)" } ?? "the stored value"
                SourceRegistry.shared.reportOnce(
                    .sourceValueHidden(key: key, origin: hidden.origin, hiddenBy: by), for: source)
            }
        }
        // The launch arguments' and environment variables' problems stay; the files' are replaced.
        configLayers.state.withLock { state in
            if isFirstLoad { state.argumentProblems = argumentProblems }
            state.sourceProblems = problems
        }
        return changed
    }

    /// The managed app configuration's (or a provider's) entry for a setting named `names` (its key, then
    /// `<configName>.<property>`):
    /// the first name it gives, unless that name matches another live setting too, when it is applied to neither
    /// and reported, naming the keys.
    private func managedEntry(
        in contents: SourceContents, of source: ConfigSource, names: [String], ambiguous: [String: [String]],
        problems: inout [StorableConfigError]
    ) -> SourceContents.Entry? {
        for name in names {
            guard let entry = contents.entries[name] else { continue }
            guard let keys = ambiguous[name] else { return entry }
            let problem = StorableConfigError.sourceUnusable(
                where: source.description,
                reason: "its key \(name) names \(keys.count) settings, \(keys.joined(separator: " and ")); it is "
                    + "applied to none of them")
            SourceRegistry.shared.reportOnce(problem, for: source)
            if !problems.contains(where: { $0.description == problem.description }) { problems.append(problem) }
        }
        return nil
    }

    /// The names in `configs`' file sources that name none of their settings, each most likely a typo, and the
    /// problems of those sources. A name counts as known only where it is read: a `.env` file by variable names, a
    /// directory by variable names and keys, a JSON file by keys and, in a document, by config and property name.
    static func unknownSourceNames(of configs: [StorableConfig]) -> [StorableConfigError] {
        var variables: Set<String> = []
        var keys: Set<String> = []
        var documentNames: Set<String> = []
        var managedNames: Set<String> = []
        var sources: Set<ConfigSource> = []
        for config in configs {
            let type = type(of: config)
            let overrides = config.layers?.overrides ?? type.overrides
            for (index, name) in config.schema.names.enumerated() {
                keys.insert(config.schema.keys[index])
                variables.insert(overrides.variableName(configName: type.configName, name: name))
                documentNames.insert("\(type.namespace).\(type.configName).\(name)")
                managedNames.insert("\(type.configName).\(name)")
            }
            sources.formUnion(config.layers?.sources.all ?? [])
        }
        let snapshot = SourceRegistry.shared.snapshot(of: Array(sources))
        var problems: [StorableConfigError] = []
        for source in sources.sorted(by: { $0.path < $1.path }) {
            guard let contents = snapshot.contents[source] else { continue }
            problems += contents.problems
            let known: Set<String> =
                switch source.format {
                case .dotEnv: variables
                case .directory: variables.union(keys)
                case .json: keys
                case .managedAppConfiguration, .provider: keys.union(managedNames)
                }
            var unknown = contents.listedNames.filter { !known.contains($0) }
            unknown += contents.documentEntries.keys.filter { !documentNames.contains($0) }
            problems += unknown.sorted().map { .unknownSourceName(origin: source.description, name: $0) }
        }
        return problems
    }
}
