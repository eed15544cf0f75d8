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
    /// it creates without a store, in its task and the tasks it starts, share one ``InMemoryStore``, and read no
    /// overrides and no file sources; what is reported is collected in ``IsolatedSettings/reports`` instead of
    /// going to the process's error handler. Tests that run in parallel never see each other's settings.
    public struct IsolatedSettingsTrait: TestTrait, SuiteTrait, TestScoping {
        /// `true`: on a suite, the trait applies to each of its tests and of its nested suites' tests.
        public var isRecursive: Bool { true }

        /// Runs the test inside ``IsolatedSettings/run(isolation:_:)``.
        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            try await IsolatedSettings.run { _ in try await function() }
        }
    }

    extension Trait where Self == IsolatedSettingsTrait {
        /// Each test gets settings of its own: an in-memory store, its own reports, no overrides or file sources.
        public static var isolatedSettings: Self { IsolatedSettingsTrait() }
    }
#endif
