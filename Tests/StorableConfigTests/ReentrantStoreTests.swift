import Foundation
import Testing

@testable import StorableConfig

/// A store that runs `afterChange` inside each write, after applying it, on the writing thread: as Apple's
/// `UserDefaults` posts `didChangeNotification`, and as key-value observers of it run.
final class CallbackStore: ConfigStore, @unchecked Sendable {
    let values = InMemoryStore()
    private let handler = Locked<(@Sendable (String) -> Void)?>(nil)

    func afterChange(_ body: (@Sendable (String) -> Void)?) {
        handler.withLock { $0 = body }
    }

    private func changed(_ key: String) {
        handler.withLock { $0 }?(key)
    }

    func value(forKey key: String) throws -> StoredValue? { values.value(forKey: key) }

    func setValue(_ value: StoredValue, forKey key: String) throws {
        values.setValue(value, forKey: key)
        changed(key)
    }

    func removeValue(forKey key: String) throws {
        values.removeValue(forKey: key)
        changed(key)
    }
}

/// A `UserDefaults` that posts `didChangeNotification` synchronously from `set` and `removeObject`, on the
/// calling thread, as Apple's Foundation does (swift-corelibs-foundation posts nothing).
class NotifyingDefaults: UserDefaults {
    override func set(_ value: Any?, forKey defaultName: String) {
        super.set(value, forKey: defaultName)
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }

    override func removeObject(forKey defaultName: String) {
        super.removeObject(forKey: defaultName)
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }

    /// Runs `body` with a suite of its own, removed with its file after.
    static func withSuite(_ body: (NotifyingDefaults) throws -> Void) throws {
        let suite = "StorableConfigTests-notifying-\(UUID().uuidString)"
        let defaults = try #require(NotifyingDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        try body(defaults)
    }

    /// Runs `handler` inside the first `didChangeNotification` this object posts, on the posting thread, until
    /// `body` returns.
    func onFirstChange(_ handler: @escaping @Sendable () -> Void, during body: () throws -> Void) rethrows {
        let notified = Locked(false)
        let token = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: self, queue: nil
        ) { _ in
            if !notified.withLock({ notified in
                defer { notified = true }; return notified
            }) {
                handler()
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try body()
    }
}

final class MirrorConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "reentrant" }
    @Setting var count = 0
    @Setting var mirror = 0
}

final class HandlerConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "reentrant" }
    @Setting var volume = 0
    @Setting var lastChange = ""
}

/// No lock of the library is held while it calls a store: code that a store runs inside a write may write,
/// read or reload settings, on the same thread or by waiting for another.
@Suite(.serialized)
struct ReentrantStoreTests {
    @Test func aHandlerInsideTheStoresWriteMayAssignASetting() throws {
        let store = CallbackStore()
        let config = HandlerConfig(store: store)
        let observer = HandlerConfig(store: store)
        store.afterChange { key in
            if key == config.$volume.key { config.lastChange = "volume" }
        }
        #expect(finishes { config.volume = 3 }, "a write from inside the store's write hung")
        store.afterChange(nil)
        #expect(config.volume == 3)
        #expect(config.lastChange == "volume")
        #expect(observer.volume == 3)
        #expect(observer.lastChange == "volume")
        #expect(try store.value(forKey: config.$lastChange.key) == .string("volume"))
    }

    @Test func aHandlerInsideTheStoresWriteMayAssignTheSameSettingAndEveryConfigAgrees() throws {
        let store = CallbackStore()
        let config = HandlerConfig(store: store)
        let observer = HandlerConfig(store: store)
        // A handler that clamps the value that was just written: the store ends with the clamped value.
        store.afterChange { key in
            if key == config.$volume.key, store.values.value(forKey: key) == .int(50) {
                config.volume = 10
            }
        }
        #expect(finishes { config.volume = 50 }, "a write from inside the store's write hung")
        store.afterChange(nil)
        #expect(try store.value(forKey: config.$volume.key) == .int(10))
        #expect(config.volume == 10)
        #expect(observer.volume == 10)
    }

    @Test func aHandlerThatWaitsForAnotherThreadsWriteDoesNotDeadlock() {
        let store = CallbackStore()
        let config = HandlerConfig(store: store)
        store.afterChange { key in
            guard key == config.$volume.key else { return }
            // As a handler that hops to the main queue would: it waits while another thread writes.
            let written = DispatchSemaphore(value: 0)
            Thread {
                config.lastChange = "from another thread"
                written.signal()
            }.start()
            written.wait()
        }
        #expect(finishes { config.volume = 4 }, "waiting for another thread's write hung")
        store.afterChange(nil)
        #expect(config.lastChange == "from another thread")
        #expect(config.volume == 4)
    }

    @Test func aHandlerInsideTheStoresWriteMayReload() throws {
        let store = CallbackStore()
        let config = HandlerConfig(store: store)
        store.afterChange { _ in try? config.reload() }
        #expect(finishes { config.volume = 8 }, "a reload from inside the store's write hung")
        store.afterChange(nil)
        #expect(config.volume == 8)
    }

    @Test func aDidChangeNotificationHandlerMayAssignASettingOfAUserDefaultsStore() throws {
        try NotifyingDefaults.withSuite { defaults in
            let config = HandlerConfig(store: UserDefaultsStore(defaults))
            defaults.onFirstChange({ config.lastChange = "noticed" }) {
                #expect(finishes { config.volume = 5 }, "a didChangeNotification handler's write hung")
            }
            #expect(config.volume == 5)
            #expect(config.lastChange == "noticed")
            #expect(defaults.string(forKey: config.$lastChange.key) == "noticed")
        }
    }

    /// Apple's `UserDefaults` posts `didChangeNotification` inside `set`: a handler that copies one setting into
    /// another reads the value being written, not the one before it.
    @Test func aDidChangeNotificationHandlerReadsTheValueBeingWritten() throws {
        try NotifyingDefaults.withSuite { defaults in
            let config = MirrorConfig(store: UserDefaultsStore(defaults))
            let token = NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: defaults, queue: nil
            ) { _ in
                if config.mirror != config.count { config.mirror = config.count }
            }
            defer { NotificationCenter.default.removeObserver(token) }
            #expect(finishes { config.count = 5 }, "a didChangeNotification handler's write hung")
            #expect(config.mirror == 5)
            #expect(defaults.integer(forKey: config.$mirror.key) == 5)
        }
    }

    /// Inside the store call, the value being written is what every thread reads; the setting's observers hear
    /// of it only after the call returns, once.
    @Test func theValueBeingWrittenIsReadEverywhereDuringTheStoreCallAndObserversHearOfItAfter() throws {
        let store = CallbackStore()
        let config = HandlerConfig(store: store)
        let heard = Locked<[Int]>([])
        let observation = config.$volume.observe { value in heard.withLock { $0.append(value) } }
        let inside = Locked<(sameThread: Int, otherThread: Int, heard: [Int])?>(nil)
        store.afterChange { key in
            guard key == config.$volume.key else { return }
            let read = Locked(0)
            let done = DispatchSemaphore(value: 0)
            Thread {
                read.withLock { $0 = config.volume }
                done.signal()
            }.start()
            done.wait()
            inside.withLock { $0 = (config.volume, read.withLock { $0 }, heard.withLock { $0 }) }
        }
        #expect(finishes { config.volume = 7 }, "the write hung")
        store.afterChange(nil)
        let during = try #require(inside.withLock { $0 })
        #expect(during.sameThread == 7)
        #expect(during.otherThread == 7)
        #expect(during.heard.isEmpty)
        #expect(heard.withLock { $0 } == [7])
        observation.cancel()
    }

    /// Writers of one key that overlap inside the store: whichever the store applied last, every config reads it.
    @Test func overlappingWritesOfOneKeyConvergeOnTheStoresValue() async throws {
        let store = CallbackStore()
        let configs = (0..<4).map { _ in HandlerConfig(store: store) }
        // Widens the window between the store applying a write and the hub numbering it.
        store.afterChange { _ in if Int.random(in: 0..<4) == 0 { usleep(50) } }
        await withTaskGroup(of: Void.self) { group in
            for (index, config) in configs.enumerated() {
                group.addTask {
                    for round in 0..<300 { config.volume = index * 1000 + round }
                }
            }
        }
        store.afterChange(nil)
        let stored = try #require(store.values.value(forKey: configs[0].$volume.key))
        for config in configs {
            #expect(StoredValue.int(Int64(config.volume)) == stored)
        }
    }
}
