#if canImport(Testing)
    import StorableConfig
    import Testing

    /// A Swift Testing trait that gives each test its own settings: see ``IsolatedSettings``.
    ///
    /// ```swift
    /// @Test(.isolatedSettings) func signingOutForgetsTheUser() { … }
    /// @Suite(.isolatedSettings) struct OnboardingTests { … }   // each test of the suite, and of its suites
    /// ```
    ///
    /// Each test (each case of a parameterized test) runs with an ``IsolatedSettings`` of its own: configs that
    /// it creates without a store, in its task and the child tasks and `Task {}` it starts, share one
    /// ``InMemoryStore``, and read the trait's overrides and file sources (none unless given); what is reported in
    /// the test's tasks is collected in ``IsolatedSettings/reports`` instead of going to the process's error
    /// handler (what the library meets on a thread of its own, such as a file watcher's, still goes there: see
    /// `ConfigDefaults`). Tests that run in parallel never see each other's settings.
    public struct IsolatedSettingsTrait: TestTrait, SuiteTrait, TestScoping {
        /// The overrides that each test's configs read, unless their class chooses its own.
        public var overrides: ConfigOverrides
        /// The file sources that each test's configs read, unless their class chooses its own.
        public var sources: ConfigSources

        /// `true`: on a suite, the trait applies to each of its tests and of its nested suites' tests.
        public var isRecursive: Bool { true }

        /// Runs the test inside ``IsolatedSettings/run(isolation:_:)``.
        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            try await IsolatedSettings.run(IsolatedSettings(overrides: overrides, sources: sources)) { _ in
                try await function()
            }
        }
    }

    extension Trait where Self == IsolatedSettingsTrait {
        /// Each test gets settings of its own: an in-memory store, its own reports, no overrides or file sources.
        public static var isolatedSettings: Self { IsolatedSettingsTrait(overrides: .none, sources: .none) }

        /// Each test gets settings of its own, whose configs read `overrides` and `sources` (a test's fixed
        /// values: `ConfigSources(aboveStore: [.jsonFile(path)])`) unless their class chooses its own.
        public static func isolatedSettings(overrides: ConfigOverrides = .none, sources: ConfigSources = .none) -> Self
        {
            IsolatedSettingsTrait(overrides: overrides, sources: sources)
        }
    }
#endif
