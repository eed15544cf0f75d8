import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(.serialized)
struct UserDefaultsStoreTests {
    /// A suite shared with the child processes of the exit tests below, which cannot capture values: named
    /// after the test process, so that two test runs on one machine do not share it.
    static func exitSuite(testProcess: pid_t) -> String {
        "StorableConfigTests.UserDefaultsExit-\(testProcess)"
    }

    static var exitSuite: String { exitSuite(testProcess: getpid()) }

    @Test(arguments: [true, false])
    func aRegisteredDefaultOrALaunchArgumentIsNotAStoredValue(standard: Bool) throws {
        let suite = "RegisteredDefaults-\(UUID().uuidString)"
        let defaults = standard ? UserDefaults.standard : try #require(UserDefaults(suiteName: suite))
        let store = standard ? UserDefaultsStore(.standard) : try #require(UserDefaultsStore(suiteName: suite))
        let key = "registered-\(UUID().uuidString)"
        defer {
            store.defaults.removeObject(forKey: key)
            if !standard { store.defaults.removePersistentDomain(forName: suite) }
        }
        defaults.register(defaults: [key: "registered"])
        #expect(store.defaults.object(forKey: key) as? String == "registered")
        #expect(store.value(forKey: key) == nil)
        try store.setValue(.string("stored"), forKey: key)
        #expect(store.value(forKey: key) == .string("stored"))
        #expect(store.values(forKeys: [key]) == [key: .string("stored")])
    }

    final class ExitConfig: StorableConfig {
        override class var namespace: String { "exit" }
        @Setting var launches = 0
        @Setting var homepage = URL(string: "https://example.com/start")!
        @Setting var ratio: Float = 0
        @Setting var big: UInt64 = 0
        @Setting var small: Int64 = 0
        @Setting var lastLaunch = Date(timeIntervalSince1970: 0)
    }

    static let lastLaunch = Date(timeIntervalSinceReferenceDate: 817_000_000.123_456_7)

    @Test func aValueSetSurvivesANormalProcessExit() async throws {
        let fileURL = UserDefaultsStore.propertyListURL(domain: Self.exitSuite)
        UserDefaults(suiteName: Self.exitSuite)?.removePersistentDomain(forName: Self.exitSuite)
        try? FileManager.default.removeItem(at: fileURL)
        defer {
            UserDefaults(suiteName: Self.exitSuite)?.removePersistentDomain(forName: Self.exitSuite)
            try? FileManager.default.removeItem(at: fileURL)
        }

        await #expect(processExitsWith: .success) {
            let suite = UserDefaultsStoreTests.exitSuite(testProcess: getppid())
            let config = ExitConfig(store: UserDefaultsStore(UserDefaults(suiteName: suite)!))
            config.launches += 1
            config.homepage = URL(string: "https://example.com/a?b=c")!
            config.ratio = 0.1
            config.big = .max
            config.small = .min
            config.lastLaunch = UserDefaultsStoreTests.lastLaunch
            exit(0)
        }
        // A second process sees what the first one wrote.
        await #expect(processExitsWith: .success) {
            let suite = UserDefaultsStoreTests.exitSuite(testProcess: getppid())
            let config = ExitConfig(store: UserDefaultsStore(UserDefaults(suiteName: suite)!))
            guard config.launches == 1, config.homepage == URL(string: "https://example.com/a?b=c")!,
                config.ratio == 0.1, config.big == .max, config.small == .min,
                config.lastLaunch == UserDefaultsStoreTests.lastLaunch
            else { exit(1) }
            exit(0)
        }
        #if !canImport(Darwin)
            #expect(FileManager.default.fileExists(atPath: fileURL.path))
        #endif
    }

    /// A config class that an app and its widget would both compile, from a framework they share.
    final class SharedGroupConfig: StorableConfig {
        @Setting var note = ""
    }

    static func groupSuite(testProcess: pid_t) -> String {
        "StorableConfigTests.AppGroup-\(testProcess)"
    }

    @Test func anAppAndItsExtensionShareKeysOnceTheySetOneNamespace() async throws {
        let suite = Self.groupSuite(testProcess: getpid())
        defer {
            UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        // The "app": its own default namespace (here the executable's name) is not the shared one.
        await #expect(processExitsWith: .success) {
            guard StorableConfig.defaultNamespace != "com.example.shared" else { exit(1) }
            StorableConfig.defaultNamespace = "com.example.shared"
            let suite = UserDefaultsStoreTests.groupSuite(testProcess: getppid())
            let app = SharedGroupConfig(store: UserDefaultsStore(suiteName: suite, saving: .onEveryWrite)!)
            app.note = "from the app"
            guard app.$note.key == "com.example.shared.SharedGroupConfig.note" else { exit(2) }
            exit(0)
        }
        // The "widget", another process: the same line gives it the same keys in the same suite.
        await #expect(processExitsWith: .success) {
            StorableConfig.defaultNamespace = "com.example.shared"
            let suite = UserDefaultsStoreTests.groupSuite(testProcess: getppid())
            let widget = SharedGroupConfig(store: UserDefaultsStore(suiteName: suite, saving: .onEveryWrite)!)
            guard widget.note == "from the app" else { exit(1) }
            // Two configs over two UserDefaults objects of the suite, as two processes hold them, see each
            // other's writes once the reader reloads.
            let defaults = UserDefaults(suiteName: suite)!
            let other = SharedGroupConfig(store: UserDefaultsStore(defaults, saving: .onEveryWrite))
            widget.note = "from the widget"
            try? other.reload()
            guard other.note == "from the widget" else { exit(2) }
            exit(0)
        }
        let shared = UserDefaults(suiteName: suite)?.string(forKey: "com.example.shared.SharedGroupConfig.note")
        #expect(shared == "from the widget")
    }

    #if !canImport(Darwin)
        @Test func savingOnEveryWriteHasTheFileOnDiskBeforeTheAssignmentReturns() throws {
            let suite = "StorableConfigTests-every-\(UUID().uuidString)"
            let url = UserDefaultsStore.propertyListURL(domain: suite)
            defer {
                UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
                try? FileManager.default.removeItem(at: url)
            }
            let config = AppConfig(store: try #require(UserDefaultsStore(suiteName: suite, saving: .onEveryWrite)))
            config.userName = "on disk"
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(text.contains("on disk"))
        }

        @Test func coalescedSavingReachesTheDiskSoonWithoutAnExit() async throws {
            let suite = "StorableConfigTests-soon-\(UUID().uuidString)"
            let url = UserDefaultsStore.propertyListURL(domain: suite)
            defer {
                UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
                try? FileManager.default.removeItem(at: url)
            }
            let config = AppConfig(store: try #require(UserDefaultsStore(suiteName: suite)))
            config.userName = "soon on disk"
            #expect(
                await waitUntil { (try? String(contentsOf: url, encoding: .utf8))?.contains("soon on disk") == true })
        }
    #endif

    @Test func otherCodeReadingTheKeySeesPlainPropertyListValues() throws {
        let fixture = StoreFixture(.userDefaults)
        let store = try #require(fixture.open() as? UserDefaultsStore)
        let config = MatrixConfig(store: store)
        config.string = "plain"
        config.strings = ["a", "b"]
        config.bool = true
        config.int = 5
        config.url = URL(string: "https://example.com/x")!
        config.counts = ["k": 1]
        let defaults = store.defaults
        #expect(defaults.string(forKey: config.$string.key) == "plain")
        #expect(defaults.stringArray(forKey: config.$strings.key) == ["a", "b"])
        #expect(defaults.bool(forKey: config.$bool.key) == true)
        #expect(defaults.integer(forKey: config.$int.key) == 5)
        #expect(defaults.string(forKey: config.$url.key) == "https://example.com/x")
        #expect(defaults.dictionary(forKey: config.$counts.key)?["k"] as? Int == 1)
    }

    @Test func urlsAndUnsignedValuesAboveInt64MaxReadBackAndOtherCodeReadsThemAsDocumented() throws {
        let fixture = StoreFixture(.userDefaults)
        let store = try #require(fixture.open() as? UserDefaultsStore)
        let homepage = try #require(URL(string: "https://example.com/a/b?c=d&e=%20#frag"))
        let config = ExitConfig(store: store)
        config.homepage = homepage
        config.big = UInt64(Int64.max) + 1
        // The library's round trip: a config created afterwards reads them from UserDefaults.
        let again = ExitConfig(store: store)
        #expect(again.homepage == homepage)
        #expect(again.big == UInt64(Int64.max) + 1)
        config.big = .max
        #expect(ExitConfig(store: store).big == .max)
        // Code outside the library, as Docs/SupportedTypes.md tells it to read them.
        let defaults = store.defaults
        #expect(defaults.string(forKey: config.$homepage.key).flatMap(URL.init(string:)) == homepage)
        #expect(defaults.object(forKey: config.$big.key) as? UInt64 == .max)
        #if !canImport(Darwin)
            // `url(forKey:)` takes a stored string for a file path, so it is not the way to read one.
            #expect(defaults.url(forKey: config.$homepage.key) != homepage)
        #endif
    }

    @Test func aSuiteThatUserDefaultsRefusesIsReportedNamingIt() {
        ReportedErrors.install()
        #expect(UserDefaultsStore(suiteName: UserDefaults.globalDomain) == nil)
        let reported = ReportedErrors.mentioning("'\(UserDefaults.globalDomain)'").filter {
            if case .suiteUnavailable(UserDefaults.globalDomain, _) = $0 { return true }
            return false
        }
        #expect(!reported.isEmpty)
        #expect(reported.first?.description.contains("cannot be opened") == true)
    }

    final class SizeLimitConfig: StorableConfig {
        override class var namespace: String { "sizelimit" }
        @Setting var blob = ""
        @Setting var other = ""
    }

    @Test func aValueOverThePlatformSizeLimitIsReportedNamingTheKeyAndNotHandedToUserDefaults() throws {
        ReportedErrors.install()
        let suite = "StorableConfigTests-size-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        // tvOS's limit, made small: the check is the same code on every platform.
        let store = UserDefaultsStore(defaults, saving: .coalesced, valueSizeLimit: 1024)
        let config = SizeLimitConfig(store: store)
        let small = String(repeating: "s", count: 1000)
        config.blob = small
        #expect(defaults.string(forKey: config.$blob.key) == small)
        config.blob = String(repeating: "b", count: 2000)
        #expect(defaults.string(forKey: config.$blob.key) == small)
        let reported = ReportedErrors.mentioning(config.$blob.key)
        #expect(reported.contains { if case .writeFailed = $0 { return true } else { return false } })
        // Reported once, as the store says it: not wrapped in a second "Writing … failed".
        #expect(reported.last?.description.contains("1024 bytes") == true)
        #expect(reported.last?.description.components(separatedBy: "Writing").count == 2)
        // A batch with one value too large hands none of its values over.
        #expect(throws: StorableConfigError.self) {
            try store.setValues(
                ["sizelimit.a": .string("fits"), "sizelimit.b": .array([.data(Data(count: 2000))])],
                removingValuesForKeys: [])
        }
        #expect(defaults.object(forKey: "sizelimit.a") == nil)
        #expect(defaults.object(forKey: "sizelimit.b") == nil)
        #if !canImport(Darwin)
            #expect(UserDefaultsStore.platformValueSizeLimit == nil)
        #endif
    }

    @Test func anExplicitNoValueIsTheDocumentedMarker() throws {
        let fixture = StoreFixture(.userDefaults)
        let store = try #require(fixture.open() as? UserDefaultsStore)
        let config = MatrixConfig(store: store)
        config.greeting = nil
        #expect(store.defaults.string(forKey: config.$greeting.key) == UserDefaultsStore.nullMarker)
        #expect(MatrixConfig(store: store).greeting == nil)
    }

    @Test func valuesWrittenByOtherCodeAreRead() throws {
        let fixture = StoreFixture(.userDefaults)
        let store = try #require(fixture.open() as? UserDefaultsStore)
        store.defaults.set("nkysu1", forKey: "com.example.app.TwitterConfig.userName")
        store.defaults.set(["x", "y"], forKey: "com.example.app.AppConfig.selectedHobbies")
        store.defaults.set(false, forKey: "com.example.app.AppConfig.isFirstLaunch")
        #expect(TwitterConfig(store: store).userName == "nkysu1")
        #expect(AppConfig(store: store).selectedHobbies == ["x", "y"])
        #expect(AppConfig(store: store).isFirstLaunch == false)
    }

    #if !canImport(Darwin)
        @Test func aCorruptPropertyListIsCopiedAsideBeforeUserDefaultsCanOverwriteIt() throws {
            ReportedErrors.install()
            let suite = "StorableConfigTests-corrupt-\(UUID().uuidString)"
            let url = UserDefaultsStore.propertyListURL(domain: suite)
            let garbage = Data("<?xml version=\"1.0\"?><plist><dict><key>half".utf8)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try garbage.write(to: url)
            defer {
                UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
                try? FileManager.default.removeItem(at: url)
            }
            let store = try #require(UserDefaultsStore(suiteName: suite))
            let report = try #require(ReportedErrors.mentioning(url.path).first)
            guard case .corruptFileQuarantined(_, let copy, _) = report else {
                Issue.record("unexpected report \(report)")
                return
            }
            defer { try? FileManager.default.removeItem(atPath: copy) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == garbage)
            try store.setValue(.int(1), forKey: "k")
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == garbage)
        }
    #endif
}
