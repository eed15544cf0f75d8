/// What configs created in one scope use when they are not given their own: the store of ``StorableConfig/init()``,
/// the error handler, the overrides and the file sources. A scope is a task, the child tasks and `Task {}` it starts
/// (not `Task.detached`, a thread or a dispatch queue), and the synchronous code they run: a test, so that parallel
/// tests never see each other's settings.
///
/// ```swift
/// let store = InMemoryStore()
/// StorableConfig.withDefaults(ConfigDefaults(store: store, errorHandler: { print("reported:", $0) })) {
///     let config = AppConfig()     // over `store`, not the process's default store
///     config.userName = "test"
/// }
/// ```
///
/// Inside the scope, ``StorableConfig/defaultStore``, ``StorableConfig/defaultOverrides`` and
/// ``StorableConfig/defaultSources`` read the scope's values, and ``StorableConfig/report(_:)`` reports to the
/// scope's handler; ``StorableConfig/errorHandler`` stays the process's, and assigning any of them there still
/// sets the process's. A config takes its store, overrides and sources when it is created and keeps them for its
/// life. A problem goes to the handler of the scope that the code reporting it runs in: one that the library meets
/// on a thread of its own (a file watcher, also a file source's; `UserDefaultsStore`'s coalesced save; an etcd
/// watch) goes to the process's handler, since those threads serve every store of a file or a database. The
/// `StorableConfigTesting` module builds its `.isolatedSettings` test trait on this.
public struct ConfigDefaults: Sendable {
    /// The store of configs created without one.
    public var store: any ConfigStore
    /// Receives every problem reported in the scope.
    public var errorHandler: @Sendable (StorableConfigError) -> Void
    /// The overrides of config classes that do not choose their own.
    public var overrides: ConfigOverrides
    /// The file sources of config classes that do not choose their own.
    public var sources: ConfigSources

    /// Creates the defaults of a scope: by default, no overrides and no file sources.
    public init(
        store: any ConfigStore, errorHandler: @escaping @Sendable (StorableConfigError) -> Void,
        overrides: ConfigOverrides = .none, sources: ConfigSources = .none
    ) {
        self.store = store
        self.errorHandler = errorHandler
        self.overrides = overrides
        self.sources = sources
    }

    /// The defaults of the scope that the current code runs in, or `nil` outside every scope.
    @TaskLocal static var current: ConfigDefaults?
}

extension StorableConfig {
    /// Runs `operation` with `defaults` as the defaults of every config it creates without a store, also in the
    /// child tasks and `Task {}` it starts: see ``ConfigDefaults``.
    public static func withDefaults<Result>(_ defaults: ConfigDefaults, operation: () throws -> Result) rethrows
        -> Result
    {
        try ConfigDefaults.$current.withValue(defaults, operation: operation)
    }

    /// Runs `operation` with `defaults` as the defaults of every config it creates without a store, also in the
    /// child tasks and `Task {}` it starts: see ``ConfigDefaults``.
    public static func withDefaults<Result>(
        _ defaults: ConfigDefaults, isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        try await ConfigDefaults.$current.withValue(defaults, operation: operation, isolation: isolation)
    }

    /// The defaults of the scope that the current code runs in (``withDefaults(_:operation:)``), or `nil` outside
    /// every scope.
    public static var scopedDefaults: ConfigDefaults? { ConfigDefaults.current }
}
