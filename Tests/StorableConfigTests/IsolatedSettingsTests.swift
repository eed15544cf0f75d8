import Foundation
import StorableConfig
import StorableConfigTesting
import Testing

/// `.isolatedSettings` and `IsolatedSettings.run`: each test's configs over a store of its own, with its own
/// reports, overrides and sources, however many tests run at once.
@Suite(.isolatedSettings) struct IsolatedSettingsTraitTests {
    /// The cases that have written, for each to wait a little for the other: run in parallel, they overlap.
    private static let written = Locked<Set<String>>([])

    @Test(arguments: ["first", "second"]) func parallelTestsWritingOneSettingEachReadTheirOwn(name: String)
        async throws
    {
        let settings = try #require(IsolatedSettings.current)
        let config = AppConfig()
        #expect(config.store === settings.store)
        #expect(config.userName == "")
        config.userName = name
        Self.written.withLock { _ = $0.insert(name) }
        // Wait (a bounded while) until the other case has written too, so that the two overlap when they run in
        // parallel; either way, each must read its own value.
        for _ in 0..<500 where Self.written.withLock({ $0.count }) < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(config.userName == name)
        #expect(AppConfig().userName == name)
        #expect(settings.store.value(forKey: config.$userName.key) == .string(name))
    }

    @Test func aConfigOfTheTestsSettingsSeedsAndReadsBackByProperty() throws {
        let settings = try #require(IsolatedSettings.current)
        settings.config(AppConfig.self).userName = "seeded"
        let underTest = AppConfig()
        #expect(underTest.userName == "seeded")
        underTest.selectedHobbies = ["go"]
        #expect(settings.config(AppConfig.self).selectedHobbies == ["go"])
        #expect(settings.config(AppConfig.self).store === settings.store)
    }

    @Test func problemsAreCollectedForTheTestAndNotReportedToTheProcess() throws {
        ReportedErrors.install()
        let settings = try #require(IsolatedSettings.current)
        let key = "isolated.ReportingConfig.label"
        settings.store.setValue(.int(5), forKey: key)
        let config = ReportingConfig()
        #expect(config.label == "")
        #expect(!settings.reports(mentioning: key).isEmpty, "\(settings.reports)")
        // The process's handler (which collects every report of the other tests) heard nothing of it.
        #expect(ReportedErrors.mentioning(key).isEmpty)
    }

    /// A handler installed inside a test that chains to the one it replaces chains to the process's, not to the
    /// test's collection, which would outlive the test.
    @Test func theErrorHandlerReadInATestIsTheProcesssAndReportsGoToTheTest() throws {
        let settings = try #require(IsolatedSettings.current)
        let error = StorableConfigError.readFailed(key: "isolated.chained.\(UUID())", reason: "on purpose")
        // What a test reads as the handler is the process's: calling it does not reach the test's collection.
        StorableConfig.errorHandler(error)
        #expect(settings.reports.isEmpty)
        // A report made in the test goes to the test.
        StorableConfig.report(error)
        #expect(settings.reports == [error])
    }

    @Test func aTaskStartedByTheTestUsesItsSettings() async throws {
        let settings = try #require(IsolatedSettings.current)
        let store = await Task { AppConfig().store }.value
        #expect(store === settings.store)
        // A detached task belongs to no test: it gets the process's default store.
        let detached = await Task.detached { AppConfig().store }.value
        #expect(detached !== settings.store)
    }
}

struct IsolatedSettingsTests {
    @Test func eachScopeOfRunHasItsOwnStoreAndLeavesNothingBehind() {
        let key = "com.example.app.AppConfig.userName"
        let first = IsolatedSettings.run { settings in
            AppConfig().userName = "first"
            return settings.store
        }
        let second = IsolatedSettings.run { settings in
            #expect(AppConfig().userName == "")
            AppConfig().userName = "second"
            return settings.store
        }
        #expect(first !== second)
        #expect(first.value(forKey: key) == .string("first"))
        #expect(second.value(forKey: key) == .string("second"))
        #expect(IsolatedSettings.current == nil)
    }

    @Test func twoScopesRunningAtOnceNeverSeeEachOthersValues() async {
        let barrier = Barrier(count: 2)
        await withTaskGroup(of: Void.self) { group in
            for name in ["left", "right"] {
                group.addTask {
                    await IsolatedSettings.run { settings in
                        let config = AppConfig()
                        config.userName = name
                        await barrier.arrive()  // both have written
                        #expect(config.userName == name)
                        #expect(AppConfig().userName == name)
                        #expect(settings.store.value(forKey: config.$userName.key) == .string(name))
                    }
                }
            }
        }
    }

    @Test func aScopesOverridesSourcesAndHandlerAreItsOwn() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("fixed.json")
        let text =
            #"{"com.example.app.AppConfig.nickname": "from a file", "com.example.app.AppConfig.selectedHobbies": 7}"#
        try Data(text.utf8).write(to: file)
        let store = InMemoryStore()
        let overrides = ConfigOverrides.arguments(["program", "--app-config-user-name", "from-the-scope"])
        let reported = Locked<[StorableConfigError]>([])
        let defaults = ConfigDefaults(
            store: store, errorHandler: { error in reported.withLock { $0.append(error) } }, overrides: overrides,
            sources: ConfigSources(belowStore: [.jsonFile(file.path)]))
        StorableConfig.withDefaults(defaults) {
            #expect(StorableConfig.scopedDefaults?.store === store)
            let config = AppConfig()
            #expect(config.store === store)
            #expect(config.userName == "from-the-scope")
            #expect(config.$userName.layer == .argument)
            #expect(config.nickname == "from a file")
            #expect(config.$nickname.layer == .file)
            #expect(config.selectedHobbies == [])
        }
        // The file's value of the wrong type was reported to the scope's handler.
        #expect(reported.withLock { $0 }.contains { $0.description.contains("AppConfig.selectedHobbies") })
        // Outside the scope, the process's overrides and sources (none in this test process).
        let outside = AppConfig(store: store)
        #expect(outside.userName == "")
        #expect(outside.nickname == nil)
    }

    @Test func settingsWithOverridesGiveThemToTheConfigsOfTheScope() {
        let settings = IsolatedSettings(overrides: .arguments(["tool", "--app-config-user-name", "ci"]))
        IsolatedSettings.run(settings) { settings in
            #expect(AppConfig().userName == "ci")
            #expect(settings.config(AppConfig.self).$userName.layer == .argument)
        }
        #expect(AppConfig(store: settings.store).userName == "")
    }

    /// Scopes' life cycles at once: on eight threads and eight tasks, each round opens a scope, creates configs
    /// (one observed), writes and reads them, and lets them go; none sees another scope's values or reports.
    @Test func scopesOnManyThreadsAndTasksNeverMix() async {
        let rounds = 40
        @Sendable func round(_ name: String) -> [String] {
            IsolatedSettings.run { settings in
                var problems: [String] = []
                let heard = Locked<[String]>([])
                var config: AppConfig? = AppConfig()
                let token = config!.$userName.observe { value in heard.withLock { $0.append(value) } }
                config!.userName = name
                let other = AppConfig()
                if other.userName != name { problems.append("\(name) read \(other.userName)") }
                if heard.withLock({ $0 }) != [name] { problems.append("\(name) heard \(heard.withLock { $0 })") }
                if settings.store.value(forKey: other.$userName.key) != .string(name) {
                    problems.append(
                        "\(name): the store holds \(String(describing: settings.store.value(forKey: other.$userName.key)))"
                    )
                }
                if !settings.reports.isEmpty { problems.append("\(name) reported \(settings.reports)") }
                token.cancel()
                config = nil
                return problems
            }
        }
        let fromThreads = Locked<[String]>([])
        let threadsDone = DispatchGroup()
        for thread in 0..<8 {
            threadsDone.enter()
            Thread.detachNewThread {
                for index in 0..<rounds {
                    let problems = round("thread-\(thread)-\(index)")
                    fromThreads.withLock { $0 += problems }
                }
                threadsDone.leave()
            }
        }
        let fromTasks = await withTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask { (0..<rounds).flatMap { round("task-\(task)-\($0)") } }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        await withCheckedContinuation { continuation in
            threadsDone.notify(queue: .global()) { continuation.resume() }
        }
        #expect(fromTasks == [])
        #expect(fromThreads.withLock { $0 } == [])
    }

    /// A config in a `static let` is created once, by whichever test reads it first, and keeps that test's store.
    @Test func aConfigHeldInAStaticLetKeepsTheStoreOfTheScopeThatCreatedIt() {
        let creator = IsolatedSettings.run { settings in
            _ = SharedConfig.app
            return settings.store
        }
        IsolatedSettings.run { settings in
            #expect(SharedConfig.app.store === creator)
            SharedConfig.app.userName = "from a later test"
            #expect(settings.store.value(forKey: SharedConfig.app.$userName.key) == nil)
        }
        #expect(creator.value(forKey: SharedConfig.app.$userName.key) == .string("from a later test"))
    }

    /// Without the trait, code under a test runner gets an in-memory store: nothing is written into the home
    /// directory, which outlives the run.
    @Test func underATestRunnerTheDefaultStoreIsInMemoryAndTheHomeStaysEmpty() async {
        #if !canImport(Darwin)
            await #expect(processExitsWith: .success) {
                let home = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "StorableConfigTests-empty-home-\(getpid())")
                ExitTestChild.attempt(2, "making \(home.path)") {
                    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
                }
                defer { try? FileManager.default.removeItem(at: home) }
                setenv("HOME", home.path, 1)
                unsetenv("XDG_CONFIG_HOME")
                unsetenv("STORABLE_CONFIG_DEFAULT_STORE")
                let config = PlainConfig()
                config.count = 5
                guard config.store is InMemoryStore, config.count == 5,
                    (try? FileManager.default.contentsOfDirectory(atPath: home.path)) == []
                else { exit(1) }
                exit(0)
            }
        #endif
    }
}

/// A config of this suite's own, so that what it reports names no key that other tests use.
private final class ReportingConfig: StorableConfig {
    override class var namespace: String { "isolated" }
    @Setting var label = ""
}

/// Configs held for the whole process, as an app's `static let shared` is.
private enum SharedConfig {
    static let app = AppConfig()
}

/// Lets `count` tasks go on once all of them have arrived.
private actor Barrier {
    private let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        self.count = count
    }

    func arrive() async {
        arrived += 1
        if arrived == count {
            for continuation in waiting { continuation.resume() }
            waiting = []
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}
