import Foundation
import Testing

@testable import StorableConfig

/// The managed app configuration an MDM server pushes, in a `UserDefaults` suite of the test's own that posts
/// `didChangeNotification` as Apple's does (``NotifyingDefaults``): read above every other layer, live, and refused
/// where it does not fit.
@Suite(.serialized)
struct ManagedConfigurationTests {
    /// A fresh suite, removed afterwards; its forced keys are those `ForcingDefaults.forced` lists.
    private static func withDefaults(_ body: (ForcingDefaults) throws -> Void) throws {
        ReportedErrors.install()
        let suite = "StorableConfigTests-managed-\(UUID().uuidString)"
        let defaults = try #require(ForcingDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        try body(defaults)
    }

    private static func push(_ members: [String: Any], to defaults: UserDefaults) {
        defaults.set(members, forKey: ManagedDefaults.key)
    }

    private static func sources(_ defaults: UserDefaults, aboveStore: [ConfigSource] = []) -> ConfigSources {
        ConfigSources(managed: .managedAppConfiguration(defaults), aboveStore: aboveStore)
    }

    @Test func everySupportedTypeIsReadAsTheAdministratorGaveIt() throws {
        try Self.withDefaults { defaults in
            let since = Date(timeIntervalSince1970: 1_800_000_000)
            Self.push(
                [
                    "AppConfig.flag": true, "AppConfig.count": 42, "AppConfig.ratio": 0.25,
                    "AppConfig.serverURL": "https://mdm.example.com/api", "AppConfig.name": "Acme",
                    "AppConfig.since": since, "AppConfig.blob": Data([1, 2, 3]), "AppConfig.tags": ["a", "b"],
                    "AppConfig.sizes": [3, 5], "AppConfig.theme": "dark", "AppConfig.nickname": "boss",
                    "AppConfig.window": ["width": 3, "height": 4],
                ], to: defaults)
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.flag == true)
            #expect(config.count == 42)
            #expect(config.ratio == 0.25)
            #expect(config.serverURL == URL(string: "https://mdm.example.com/api"))
            #expect(config.name == "Acme")
            #expect(config.since == since)
            #expect(config.blob == Data([1, 2, 3]))
            #expect(config.tags == ["a", "b"])
            #expect(config.sizes == [3, 5])
            #expect(config.theme == .dark)
            #expect(config.nickname == "boss")
            #expect(config.window == ManagedWindow(width: 3, height: 4))
            #expect(config.$serverURL.isManaged && config.$serverURL.layer == .managed)
            #expect(config.$serverURL.origin == "managed app configuration key AppConfig.serverURL")
            #expect(!config.$limit.isManaged && config.$limit.layer == .default)
            let listed = config.allSettings.first { $0.name == "count" }
            #expect(listed?.isManaged == true, "AnySetting says so too")
        }
    }

    @Test func aSettingIsNamedByItsFullKeyToo() throws {
        try Self.withDefaults { defaults in
            Self.push(["managed.AppConfig.count": 7], to: defaults)
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.count == 7)
            #expect(config.$count.origin == "managed app configuration key managed.AppConfig.count")
        }
    }

    @Test func aDictionaryThatGivesSomeFieldsOfAStructTakesTheOthersFromTheLayersBelow() throws {
        try Self.withDefaults { defaults in
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            config.window = ManagedWindow(width: 5, height: 6)
            Self.push(["AppConfig.window": ["width": 800]], to: defaults)
            #expect(config.window == ManagedWindow(width: 800, height: 6) && config.$window.isManaged)
        }
    }

    @Test func aWrongTypeOrAnOutOfRangeValueIsReportedByKeyAndTheLayerBelowIsRead() throws {
        try Self.withDefaults { defaults in
            Self.push(
                ["AppConfig.count": "seven", "AppConfig.limit": 500, "AppConfig.token": 918_273, "AppConfig.ratio": 2],
                to: defaults)
            let environment = ConfigOverrides(environment: ["APP_CONFIG_COUNT": "3"], arguments: nil)
            let before = ReportedErrors.mentioning("managed app configuration key").count
            let config = ManagedAppConfig.make(
                store: InMemoryStore(), sources: Self.sources(defaults), overrides: environment)
            #expect(config.count == 3 && config.$count.layer == .environment)
            #expect(config.limit == 10 && config.$limit.layer == .default)
            #expect(config.token == "" && !config.$token.isManaged)
            #expect(config.ratio == 2, "an Int is a fine Double")
            let reports = ReportedErrors.mentioning("managed app configuration key").dropFirst(before)
            #expect(reports.contains { $0.description.contains("managed.AppConfig.count") })
            #expect(reports.contains { $0.description.contains("managed.AppConfig.limit") })
            #expect(reports.contains { $0.description.contains("managed.AppConfig.token") })
            #expect(!reports.contains { $0.description.contains("918273") }, "a secret's value is never shown")
            #expect(config.overrideProblems.count == 3)
        }
    }

    @Test func aManagedValueThatTurnsInvalidGivesBackTheLayerBelowNotTheLastValidOne() throws {
        try Self.withDefaults { defaults in
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            config.count = 5
            Self.push(["AppConfig.count": 9], to: defaults)
            #expect(config.count == 9)
            Self.push(["AppConfig.count": "nine"], to: defaults)
            #expect(config.count == 5 && config.$count.layer == .stored)
        }
    }

    @Test func removingTheWholeDictionaryGivesBackTheLowerLayersAndTellsObservers() throws {
        try Self.withDefaults { defaults in
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            config.count = 5
            let heard = Locked<[Int]>([])
            let token = config.$count.observe { value in heard.withLock { $0.append(value) } }
            Self.push(["AppConfig.count": 9, "AppConfig.name": "Acme"], to: defaults)
            #expect(config.count == 9 && config.name == "Acme")
            defaults.removeObject(forKey: ManagedDefaults.key)
            #expect(config.count == 5 && config.$count.layer == .stored)
            #expect(config.name == "" && config.$name.layer == .default)
            #expect(heard.withLock { $0 } == [9, 5])
            withExtendedLifetime(token) {}
        }
    }

    /// Corelibs `UserDefaults` posts no notification: `reloadSources()` reads the dictionary again.
    @Test func reloadSourcesReadsTheDictionaryAgainWhereNoNotificationIsPosted() throws {
        let suite = "StorableConfigTests-managed-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
        Self.push(["AppConfig.count": 6], to: defaults)
        StorableConfig.reloadSources()
        #expect(config.count == 6 && config.$count.isManaged)
    }

    /// When the thread that changed the dictionary reads the setting next, it reads the change, even while another
    /// thread reloads the sources: that thread's reading may install the change, or resolve the layers, first
    /// (before the fix, about 80 of these 400 reads gave the value from before the change, for a moment).
    @Test func aChangeIsReadOnTheThreadThatMadeItWhileAnotherThreadReloadsTheSources() throws {
        try Self.withDefaults { defaults in
            let stop = Locked(false)
            let stopped = DispatchSemaphore(value: 0)
            let reloading = Thread {
                while !stop.withLock({ $0 }) { StorableConfig.reloadSources() }
                stopped.signal()
            }
            reloading.start()
            defer {
                stop.withLock { $0 = true }
                stopped.wait()
            }
            var stale: [String] = []
            for round in 0..<200 {
                defaults.removeObject(forKey: ManagedDefaults.key)
                let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
                config.count = 5
                Self.push(["AppConfig.count": 9], to: defaults)
                if config.count != 9 { stale.append("round \(round): \(config.count) after 9 was given") }
                Self.push(["AppConfig.count": "nine"], to: defaults)
                if config.count != 5 { stale.append("round \(round): \(config.count) after 9 went invalid") }
            }
            #expect(stale.isEmpty, "\(stale.count) stale reads: \(stale.prefix(5))")
        }
    }

    @Test func aChangeReachesEveryConfigThatObserves() throws {
        try Self.withDefaults { defaults in
            let first = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            let second = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            let heard = Locked<[String]>([])
            let tokens = [
                first.$name.observe { value in heard.withLock { $0.append("first \(value)") } },
                second.$name.observe { value in heard.withLock { $0.append("second \(value)") } },
            ]
            Self.push(["AppConfig.name": "Acme"], to: defaults)
            Self.push(["AppConfig.name": "Acme", "AppConfig.count": 1], to: defaults)
            Self.push(["AppConfig.name": "Globex"], to: defaults)
            #expect(heard.withLock { $0.sorted() } == ["first Acme", "first Globex", "second Acme", "second Globex"])
            withExtendedLifetime(tokens) {}
        }
    }

    @Test func theAdministratorsValueWinsOverArgumentsEnvironmentAndFileSources() throws {
        try Self.withDefaults { defaults in
            let directory = TemporaryDirectory()
            try "4".write(to: directory.file("APP_CONFIG_COUNT"), atomically: true, encoding: .utf8)
            let overrides = ConfigOverrides(
                environment: ["APP_CONFIG_COUNT": "3"], arguments: ["program", "--app-config-count", "2"])
            Self.push(["AppConfig.count": 1], to: defaults)
            let config = ManagedAppConfig.make(
                store: InMemoryStore(),
                sources: Self.sources(defaults, aboveStore: [.directory(directory.url.path)]), overrides: overrides)
            #expect(config.count == 1 && config.$count.layer == .managed)
            #expect(config.$count.isOverridden)
            defaults.removeObject(forKey: ManagedDefaults.key)
            #expect(config.count == 2 && config.$count.layer == .argument)
        }
    }

    @Test func assigningAManagedSettingIsStoredReportedOnceAndNotRead() throws {
        try Self.withDefaults { defaults in
            Self.push(["AppConfig.name": "Acme"], to: defaults)
            let store = InMemoryStore()
            let config = ManagedAppConfig.make(store: store, sources: Self.sources(defaults))
            let before = ReportedErrors.mentioning("managed.AppConfig.name").count
            config.name = "Mine"
            config.name = "Mine again"
            #expect(config.name == "Acme")
            #expect(store.value(forKey: "managed.AppConfig.name") == .string("Mine again"))
            let reports = ReportedErrors.mentioning("managed.AppConfig.name").dropFirst(before)
            #expect(reports.count == 1)
            #expect(reports.first?.description.contains("managed app configuration key AppConfig.name") == true)
        }
    }

    @Test func aNameThatTwoLiveSettingsAnswerToIsAppliedToNeitherAndReported() throws {
        try Self.withDefaults { defaults in
            Self.push(["AppConfig.count": 4, "explicit.count": 6], to: defaults)
            let before = ReportedErrors.mentioning("names 2 settings").count
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.count == 4)
            var other: OtherAppConfig? = OtherAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.count == 0, "the config alive before is told")
            #expect(other?.count == 0 && other?.$count.isManaged == false)
            #expect(other?.limit == 6, "a name that only one setting answers to is applied")
            let reports = ReportedErrors.mentioning("names 2 settings").dropFirst(before).map(\.description)
            #expect(reports.contains { $0.contains("managed.AppConfig.count and other.AppConfig.count") })
            other = nil
            #expect(config.count == 4, "the name matches one setting again")
        }
    }

    @Test func aSettingsExplicitKeyThatIsAnothersConfigAndPropertyNameIsRefused() throws {
        try Self.withDefaults { defaults in
            Self.push(["AppConfig.name": "Acme"], to: defaults)
            let before = ReportedErrors.mentioning("names 2 settings").count
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            let keyed = KeyedConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.name == "" && keyed.label == "")
            let reports = ReportedErrors.mentioning("names 2 settings").dropFirst(before).map(\.description)
            #expect(reports.contains { $0.contains("AppConfig.name and managed.AppConfig.name") })
        }
    }

    @Test func aValueForcedByAProfileIsManagedWhereThePlatformForcesValues() throws {
        try Self.withDefaults { defaults in
            defaults.set(8, forKey: "managed.AppConfig.count")
            defaults.forced.withLock { $0 = ["managed.AppConfig.count"] }
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.count == 8 && config.$count.isManaged)
            #expect(config.$count.origin.contains("forced by a configuration profile"))
            Self.push(["AppConfig.count": 9], to: defaults)
            #expect(config.count == 8, "the forced value under the key comes before the config and property name")
            defaults.forced.withLock { $0 = [] }
            defaults.set(8, forKey: "unrelated")
            #expect(config.count == 9)
        }
    }

    @Test func checkOverridesNamesAMemberThatNamesNoSettingAsALikelyTypo() throws {
        try Self.withDefaults { defaults in
            Self.push(["AppConfig.cuont": 3, "AppConfig.count": 2, "managed.AppConfig.name": "Acme"], to: defaults)
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            let problems = try #require(throws: InvalidOverrides.self) {
                try StorableConfig.checkOverrides(of: [config])
            }
            #expect(
                problems.problems.map(\.description) == [
                    StorableConfigError.unknownSourceName(origin: "managed app configuration", name: "AppConfig.cuont")
                        .description
                ])
        }
    }

    @Test func aManagedConfigurationThatIsNotADictionaryIsReported() throws {
        try Self.withDefaults { defaults in
            let before = ReportedErrors.mentioning(ManagedDefaults.key).count
            defaults.set("not a dictionary", forKey: ManagedDefaults.key)
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: Self.sources(defaults))
            #expect(config.count == 0 && config.$count.layer == .default)
            #expect(ReportedErrors.mentioning(ManagedDefaults.key).count == before + 1)
        }
    }

    /// Configs created, read and released on several threads while the administrator's values change: each config
    /// ends with the last value pushed.
    @Test func configsOnSeveralThreadsFollowTheChanges() throws {
        try Self.withDefaults { defaults in
            let box = ManagedDefaults(defaults)
            let sources = Self.sources(defaults)
            let kept = Locked<[ManagedAppConfig]>([])
            let group = DispatchGroup()
            for thread in 0..<4 {
                group.enter()
                Thread.detachNewThread {
                    for round in 0..<25 {
                        let config = ManagedAppConfig.make(store: InMemoryStore(), sources: sources)
                        _ = config.count + config.name.count
                        if round % 5 == 0 { kept.withLock { $0.append(config) } }
                        if thread == 0 { Self.push(["AppConfig.count": round], to: box.defaults) }
                    }
                    group.leave()
                }
            }
            group.wait()
            Self.push(["AppConfig.count": 1000], to: defaults)
            let configs = kept.withLock { $0 }
            #expect(configs.count == 20)
            #expect(configs.allSatisfy { $0.count == 1000 && $0.$count.isManaged })
        }
    }
}

extension ManagedConfigurationTests {
    /// Configs of another class that answer to the same name come and go on several threads: while one lives the
    /// name is applied to none, and once all are gone the config that stayed reads the administrator's value.
    @Test func aNameFollowsConfigsThatComeAndGoOnSeveralThreads() throws {
        try Self.withDefaults { defaults in
            Self.push(["AppConfig.count": 4], to: defaults)
            let sources = Self.sources(defaults)
            let config = ManagedAppConfig.make(store: InMemoryStore(), sources: sources)
            let wrong = Locked(0)
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<25 {
                    let other = OtherAppConfig.make(store: InMemoryStore(), sources: sources)
                    if other.count != 0 || other.$count.isManaged { wrong.withLock { $0 += 1 } }
                }
            }
            #expect(wrong.withLock { $0 } == 0, "a name two live settings answer to was applied")
            #expect(config.count == 4 && config.$count.isManaged)
        }
    }
}

/// A `UserDefaults` whose `objectIsForced(forKey:)` says yes for the keys in ``forced``, as macOS does for the keys a
/// configuration profile forces.
final class ForcingDefaults: NotifyingDefaults {
    let forced = Locked<Set<String>>([])

    override func objectIsForced(forKey key: String) -> Bool {
        forced.withLock { $0.contains(key) }
    }
}

struct ManagedWindow: Codable, Equatable, Sendable {
    var width: Int
    var height: Int
}

/// The base of this suite's configs: each instance takes the sources and overrides handed to ``make(store:sources:overrides:)``.
class ManagedTestConfig: StorableConfig, @unchecked Sendable {
    override class var sources: ConfigSources { next.withLock { $0.sources } }
    override class var overrides: ConfigOverrides { next.withLock { $0.overrides } }

    private static let next = Locked((sources: ConfigSources.none, overrides: ConfigOverrides.none))
    /// Held from setting ``next`` until the instance has taken it.
    private static let creation = NSLock()

    static func make(store: any ConfigStore, sources: ConfigSources, overrides: ConfigOverrides = .none) -> Self {
        creation.lock()
        defer { creation.unlock() }
        next.withLock { $0 = (sources, overrides) }
        return Self(store: store)
    }
}

final class ManagedAppConfig: ManagedTestConfig, @unchecked Sendable {
    override class var namespace: String { "managed" }
    override class var configName: String { "AppConfig" }
    @Setting var flag = false
    @Setting var count = 0
    @Setting var ratio = 0.5
    @Setting var serverURL = URL(string: "https://example.com")!
    @Setting var name = ""
    @Setting var since = Date(timeIntervalSince1970: 0)
    @Setting var blob = Data()
    @Setting var tags: [String] = []
    @Setting var sizes: [Int] = []
    @Setting var theme = Theme.light
    @Setting var nickname: String? = nil
    @Setting var window = ManagedWindow(width: 1, height: 1)
    @Setting(in: 1...100) var limit = 10
    @Setting(secret: true) var token = ""
}

/// A config of the same name in another namespace, whose `limit` is named `explicit.count`.
final class OtherAppConfig: ManagedTestConfig, @unchecked Sendable {
    override class var namespace: String { "other" }
    override class var configName: String { "AppConfig" }
    @Setting var count = 0
    @Setting(key: "explicit.count") var limit = 0
}

/// A config whose setting's explicit key is another config's `<configName>.<property>`.
final class KeyedConfig: ManagedTestConfig, @unchecked Sendable {
    override class var namespace: String { "keyed" }
    @Setting(key: "AppConfig.name") var label = ""
}
