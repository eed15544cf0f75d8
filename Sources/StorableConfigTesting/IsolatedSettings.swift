import Foundation
import StorableConfig

/// One test's own settings: the in-memory store that configs created without a store use in it, and the problems
/// reported in it, instead of the process's default store (a file in the user's home) and error handler.
///
/// With Swift Testing, the `.isolatedSettings` trait gives each test one (``current`` inside the test); with XCTest,
/// or any code, ``run(_:)`` scopes a closure:
///
/// ```swift
/// import StorableConfigTesting
/// import Testing
///
/// @Test(.isolatedSettings) func aFirstLaunchIsRecorded() throws {
///     let settings = try #require(IsolatedSettings.current)
///     settings.config(AppConfig.self).userName = "seeded"          // seed
///     AppConfig().isFirstLaunch = false                            // the code under test, over the test's store
///     #expect(settings.config(AppConfig.self).isFirstLaunch == false)                    // what it wrote
///     #expect(settings.store.value(forKey: "com.example.app.AppConfig.userName") == .string("seeded"))
///     #expect(settings.reports.isEmpty)                            // what it reported
/// }
/// ```
///
/// Configs that the test's code creates without a store share the test's store, and read the test's overrides
/// and file sources (none unless given), in the test's task and every task it starts. A config keeps its store
/// for its life: one held in a `static let` is created once, by whichever test first reads it, and keeps that
/// test's store; give such a config an explicit store, or create configs in each test.
public final class IsolatedSettings: Sendable {
    /// The store of configs created without one in the scope: empty when the scope begins.
    public let store: InMemoryStore
    /// The overrides of config classes that do not choose their own: none unless given.
    public let overrides: ConfigOverrides
    /// The file sources of config classes that do not choose their own: none unless given.
    public let sources: ConfigSources
    private let reported = Locked<[StorableConfigError]>([])

    /// Creates a scope's settings: an empty store, no reports, and the overrides and sources given (none by
    /// default).
    ///
    /// ```swift
    /// let settings = IsolatedSettings(overrides: .arguments(["tool", "--app-config-user-name", "ci"]))
    /// ```
    public init(
        store: InMemoryStore = InMemoryStore(), overrides: ConfigOverrides = .none, sources: ConfigSources = .none
    ) {
        self.store = store
        self.overrides = overrides
        self.sources = sources
    }

    /// A config of `type` over the scope's store, to seed values before the code under test runs, or to read
    /// back what it wrote, by property rather than by key:
    ///
    /// ```swift
    /// settings.config(AppConfig.self).userName = "seeded"
    /// runTheCodeUnderTest()
    /// #expect(settings.config(AppConfig.self).isFirstLaunch == false)
    /// ```
    public func config<Config: StorableConfig>(_ type: Config.Type) -> Config {
        StorableConfig.withDefaults(defaults) { Config(store: store) }
    }

    /// The problems reported in the scope so far, in the order they were reported.
    public var reports: [StorableConfigError] { reported.withLock { $0 } }

    /// The reports whose description mentions `text` (a key, a file's path).
    public func reports(mentioning text: String) -> [StorableConfigError] {
        reports.filter { $0.description.contains(text) }
    }

    /// The defaults of the scope: this store, this collection of reports, these overrides and file sources.
    public var defaults: ConfigDefaults {
        ConfigDefaults(
            store: store, errorHandler: { [reported] error in reported.withLock { $0.append(error) } },
            overrides: overrides, sources: sources)
    }

    /// The settings of the scope that the current code runs in, or `nil` outside every one.
    @TaskLocal public static var current: IsolatedSettings?

    /// Runs `body` with `settings` (by default, new ones: an empty store, no overrides or sources), and returns what
    /// it returns.
    ///
    /// ```swift
    /// func testFirstLaunch() throws {   // XCTest
    ///     try IsolatedSettings.run { settings in
    ///         AppConfig().isFirstLaunch = false
    ///         XCTAssertEqual(settings.store.value(forKey: "com.example.app.AppConfig.isFirstLaunch"), .bool(false))
    ///     }
    /// }
    /// ```
    public static func run<Result>(
        _ settings: IsolatedSettings = IsolatedSettings(), _ body: (IsolatedSettings) throws -> Result
    ) rethrows -> Result {
        try $current.withValue(settings) {
            try StorableConfig.withDefaults(settings.defaults) { try body(settings) }
        }
    }

    /// Runs `body` with `settings` (by default, new ones), and returns what it returns.
    public static func run<Result>(
        _ settings: IsolatedSettings = IsolatedSettings(), isolation: isolated (any Actor)? = #isolation,
        _ body: (IsolatedSettings) async throws -> Result
    ) async rethrows -> Result {
        try await $current.withValue(
            settings,
            operation: {
                try await StorableConfig.withDefaults(settings.defaults, isolation: isolation) {
                    try await body(settings)
                }
            }, isolation: isolation)
    }
}
