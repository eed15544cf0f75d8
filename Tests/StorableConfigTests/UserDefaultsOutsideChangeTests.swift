import Foundation
import Testing

@testable import StorableConfig

/// Values written straight into `UserDefaults` (an `@AppStorage` view, code that was not migrated, an extension
/// writing the shared suite) reach the configs over it, through `didChangeNotification`, as Apple's Foundation
/// posts it (``NotifyingDefaults``); the store's own writes are not announced twice.
@Suite(.serialized)
struct UserDefaultsOutsideChangeTests {
    @Test func aValueWrittenStraightIntoUserDefaultsReachesTheConfigAndItsObservers() throws {
        try NotifyingDefaults.withSuite { defaults in
            let config = HandlerConfig(store: UserDefaultsStore(defaults))
            let heard = Locked<[Int]>([])
            let token = config.$volume.observe { value in heard.withLock { $0.append(value) } }
            defaults.set(7, forKey: config.$volume.key)
            #expect(config.volume == 7)
            defaults.removeObject(forKey: config.$volume.key)
            #expect(config.volume == 0)
            #expect(heard.withLock { $0 } == [7, 0])
            withExtendedLifetime(token) {}
        }
    }

    @Test func theStoresOwnWritesAreHeardOnceNotEchoedAsOutsideChanges() throws {
        try NotifyingDefaults.withSuite { defaults in
            let store = UserDefaultsStore(defaults)
            let config = HandlerConfig(store: store)
            let other = HandlerConfig(store: UserDefaultsStore(defaults))
            let heard = Locked<[Int]>([])
            let token = other.$volume.observe { value in heard.withLock { $0.append(value) } }
            for value in 1...5 { config.volume = value }
            config.$volume.reset()
            #expect(other.volume == 0)
            #expect(heard.withLock { $0 } == [1, 2, 3, 4, 5, 0])
            withExtendedLifetime(token) {}
        }
    }

    /// An app and its widget, each with its own `UserDefaults` object of one suite, as two processes hold them:
    /// a write by one reaches the other's config and observers when the other reads its known keys again,
    /// which on Apple platforms the Darwin notification posted after each write makes it do (here called
    /// directly: Linux has no such notification). The store's own notification, which reaches it too, is no
    /// news. Corelibs shares one process's values between the objects of a suite, as Apple's `UserDefaults`
    /// shares a suite's values between processes.
    @Test func storesOnOneSuiteSeeEachOthersWritesWhenTheyReadTheirKnownKeysAgain() throws {
        let suite = "StorableConfigTests-suite-\(UUID().uuidString)"
        defer {
            UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        let appStore = try #require(UserDefaultsStore(suiteName: suite, saving: .onEveryWrite))
        let widgetStore = UserDefaultsStore(try #require(UserDefaults(suiteName: suite)), saving: .onEveryWrite)
        #expect(appStore.defaults !== widgetStore.defaults)
        let app = HandlerConfig(store: appStore)
        let widget = HandlerConfig(store: widgetStore)
        let appHeard = Locked<[Int]>([])
        let widgetHeard = Locked<[Int]>([])
        let tokens = [
            app.$volume.observe { value in appHeard.withLock { $0.append(value) } },
            widget.$volume.observe { value in widgetHeard.withLock { $0.append(value) } },
        ]

        app.volume = 3
        #expect(widget.volume == 0, "nothing tells the widget on Linux until it reads again")
        widgetStore.announceOutsideChanges()
        #expect(widget.volume == 3)
        appStore.announceOutsideChanges()

        widget.volume = 4
        widgetStore.announceOutsideChanges()
        appStore.announceOutsideChanges()
        #expect(app.volume == 4)

        widget.$volume.reset()
        appStore.announceOutsideChanges()
        #expect(app.volume == 0)
        #expect(appHeard.withLock { $0 } == [3, 4, 0])
        #expect(widgetHeard.withLock { $0 } == [3, 4, 0])
        withExtendedLifetime(tokens) {}
    }

    /// A handler on another thread writing at the same time as the config: both values are seen, and the config
    /// ends on what `UserDefaults` holds.
    @Test func outsideWritesOnAnotherThreadMeetTheConfigsOwnAndAgree() throws {
        try NotifyingDefaults.withSuite { defaults in
            let config = HandlerConfig(store: UserDefaultsStore(defaults))
            let key = config.$lastChange.key
            // UserDefaults is safe to use from several threads.
            nonisolated(unsafe) let writer = defaults
            let outside = Thread {
                for round in 0..<200 { writer.set("outside \(round)", forKey: key) }
            }
            outside.start()
            for round in 0..<200 { config.volume = round }
            try #require(waitUntil { outside.isFinished }, "the outside writer hung")
            #expect(config.lastChange == defaults.string(forKey: key))
            #expect(config.volume == 199)
        }
    }
}
