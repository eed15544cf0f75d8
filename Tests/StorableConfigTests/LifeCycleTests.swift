import Foundation
import StorableConfig
import Testing

/// A config whose initializer suspends before `super.init`: its property initializers and the base class's
/// initializer may run on different threads.
final class SuspendingTitleConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "lifecycle" }
    @Setting var title = "untitled"
    @Setting var level = 1

    init(suspendingOver store: any ConfigStore) async {
        await Task.yield()
        super.init(store: store)
    }

    required init(store: any ConfigStore) {
        super.init(store: store)
    }
}

/// The second class, with settings of other types at the same positions.
final class SuspendingFlagConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "lifecycle" }
    @Setting var level = 0.5
    @Setting var title = false

    init(suspendingOver store: any ConfigStore) async {
        await Task.yield()
        super.init(store: store)
    }

    required init(store: any ConfigStore) {
        super.init(store: store)
    }
}

@Suite(.serialized)
struct LifeCycleTests {
    /// Configs created, observed, handed to other threads and released there, on several threads and in tasks
    /// at once, over one store (the child process `storable-config-stress lifecycle`). Two threads that made and
    /// dropped configs on one store deadlocked within a fraction of a second; a hang is killed and fails here.
    @Test(arguments: StoreKind.allCases)
    func configsCreatedObservedAndReleasedOnManyThreadsNeitherHangNorCrash(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let suite = "StorableConfigTests-lifecycle-\(UUID().uuidString)"
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let location =
            switch kind {
            case .memory: "memory"
            case .jsonFile: directory.file("lifecycle.json").path
            case .userDefaults: "suite:\(suite)"
            }
        let rounds = isRunningUnderThreadSanitizer ? 300 : (kind == .jsonFile ? 600 : 3000)
        let result = try runProduct(
            "storable-config-stress",
            ["lifecycle", location, "--threads", "4", "--tasks", "8", "--rounds", "\(rounds)"],
            environment: ["XDG_CONFIG_HOME": directory.url.path], timeout: 240)
        #expect(!result.timedOut, "the life-cycle driver hung over \(kind) (killed after 240 s)")
        #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
        #expect(result.output.contains("no problem"))
    }

    /// A subclass initializer that awaits before `super.init` used to take the settings that the thread it
    /// resumed on had registered: some instances never bound theirs, others bound another class's.
    @Test func configsWhoseInitializersSuspendBindTheirOwnSettings() async throws {
        ReportedErrors.install()
        let store = InMemoryStore()
        let seed = SuspendingTitleConfig(store: store)
        seed.title = "stored title"
        seed.level = 7
        let other = SuspendingFlagConfig(store: store)
        other.level = 2.5
        other.title = true
        var wrongBindings = 0
        // The mix-up needed a thread whose list held exactly another config's settings: rare, so many rounds.
        for _ in 0..<10 {
            wrongBindings += await withTaskGroup(of: Int.self) { group -> Int in
                for index in 0..<800 {
                    group.addTask {
                        if index % 2 == 0 {
                            let config = await SuspendingTitleConfig(suspendingOver: store)
                            let right =
                                config.$title.key == "lifecycle.SuspendingTitleConfig.title"
                                && config.$level.key == "lifecycle.SuspendingTitleConfig.level"
                                && config.title == "stored title" && config.level == 7
                            return right ? 0 : 1
                        } else {
                            let config = await SuspendingFlagConfig(suspendingOver: store)
                            let right =
                                config.$title.key == "lifecycle.SuspendingFlagConfig.title"
                                && config.$level.key == "lifecycle.SuspendingFlagConfig.level"
                                && config.title && config.level == 2.5
                            return right ? 0 : 1
                        }
                    }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(wrongBindings == 0)
        #expect(ReportedErrors.mentioning("lifecycle.Suspending").isEmpty)
    }

    /// The same class, created first by a suspending initializer and then by the plain one on the same task:
    /// each has settings of its own, bound to its own instance.
    @Test func laterInstancesFindTheirSettingsWhicheverInitializerMadeThem() async throws {
        let store = InMemoryStore()
        let first = await SuspendingTitleConfig(suspendingOver: store)
        let second = SuspendingTitleConfig(store: store)
        let third = await SuspendingTitleConfig(suspendingOver: store)
        first.title = "shared"
        #expect(second.title == "shared")
        #expect(third.title == "shared")
        #expect(second.$title !== first.$title)
        #expect(third.$title !== second.$title)
    }
}
