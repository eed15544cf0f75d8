/// What a config reads besides its store, fixed when the config is created, in the order of precedence: the managed
/// app configuration, launch arguments and environment variables (``ConfigOverrides``), the file sources above the
/// store, then (below the store) the file sources below it, and last the declared default.
///
/// A setting takes the first layer that gives it a valid value; the layers are resolved when the config is created
/// and when a file source changes (`StorableConfig.resolveLayers`), never on a read.
final class ConfigLayers: Sendable {
    /// A read-only layer that may give a setting its value.
    enum Layer: Sendable {
        case arguments([String])
        case environment([String: String])
        case source(ConfigSource)
    }

    let overrides: ConfigOverrides
    let sources: ConfigSources
    /// Every layer, highest first: the managed app configuration, launch arguments, environment variables, the file
    /// sources above the store, then those below it, from ``storePosition`` on.
    let ordered: [Layer]
    /// Where the store is in ``ordered``: the layers from there on give a value only when nothing is stored.
    let storePosition: Int
    /// Each setting's environment variable name, by position, for the file sources that name settings so.
    let variableNames: [String]
    /// Each setting's name in a settings document, `<namespace>.<configName>.<property name>`, by position.
    let documentNames: [String]
    let state = Locked(State())

    struct State {
        /// Whether the initializer has loaded the settings, so that a source's change may be taken.
        var isReady = false
        /// Whether a source changed before the initializer had loaded the settings.
        var missedAChange = false
        /// The launch arguments' and environment variables' problems, found once, at creation.
        var argumentProblems: [StorableConfigError] = []
        /// The file sources' problems, replaced at each change.
        var sourceProblems: [StorableConfigError] = []
    }

    /// The layers that `type` declares for the settings named `names`, or `nil` when it declares none (then no
    /// object is made: most configs have no layers).
    static func declared(by type: StorableConfig.Type, names: [String]) -> ConfigLayers? {
        let overrides = type.overrides
        let sources = type.sources
        guard !sources.isEmpty || overrides.environment != nil || overrides.arguments != nil else { return nil }
        return ConfigLayers(type: type, overrides: overrides, sources: sources, names: names)
    }

    private init(type: StorableConfig.Type, overrides: ConfigOverrides, sources: ConfigSources, names: [String]) {
        self.overrides = overrides
        self.sources = sources
        var ordered = sources.managed.map { [Layer.source($0)] } ?? []
        if let arguments = overrides.arguments { ordered.append(.arguments(arguments)) }
        if let environment = overrides.environment { ordered.append(.environment(environment)) }
        ordered += sources.aboveStore.map(Layer.source)
        storePosition = ordered.count
        self.ordered = ordered + sources.belowStore.map(Layer.source)
        let configName = type.configName
        variableNames = names.map { overrides.variableName(configName: configName, name: $0) }
        documentNames = names.map { "\(type.namespace).\(configName).\($0)" }
    }

    /// The problems found in the launch arguments, the environment and the file sources.
    var problems: [StorableConfigError] { state.withLock { $0.argumentProblems + $0.sourceProblems } }
}
