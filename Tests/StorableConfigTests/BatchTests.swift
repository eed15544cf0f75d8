import Foundation
import Testing

@testable import StorableConfig

/// A store that records every write call.
final class RecordingStore: ConfigStore {
    let inner = InMemoryStore()
    let writes = Locked<[[String: StoredValue?]]>([])

    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }

    func setValue(_ value: StoredValue, forKey key: String) {
        writes.withLock { $0.append([key: value]) }
        inner.setValue(value, forKey: key)
    }

    func removeValue(forKey key: String) {
        writes.withLock { $0.append([key: StoredValue?.none]) }
        inner.removeValue(forKey: key)
    }

    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) {
        var changes: [String: StoredValue?] = values
        for key in keysToRemove { changes[key] = .some(nil) }
        writes.withLock { $0.append(changes) }
        inner.setValues(values, removingValuesForKeys: keysToRemove)
    }
}

struct BatchTests {
    @Test func aBatchIsOneWriteWithTheLastValueOfEachKey() {
        let store = RecordingStore()
        let config = AppConfig(store: store)
        let other = AppConfig(store: store)
        config.batch {
            config.userName = "first"
            config.userName = "second"
            config.selectedHobbies = ["sleep"]
            config.isFirstLaunch = false
            #expect(config.userName == "second")
            #expect(other.userName == "")
            #expect(store.writes.withLock { $0.isEmpty })
        }
        #expect(
            store.writes.withLock { $0 } == [
                [
                    config.$userName.key: .string("second"), config.$selectedHobbies.key: .array([.string("sleep")]),
                    config.$isFirstLaunch.key: .bool(false),
                ]
            ])
        #expect(other.userName == "second")
        #expect(other.isFirstLaunch == false)
        #expect(config.userName == "second")
    }

    @Test func batchesNestAndResetsJoinThem() {
        let store = RecordingStore()
        let config = AppConfig(store: store)
        config.userName = "before"
        config.batch {
            config.batch { config.isFirstLaunch = false }
            config.$userName.reset()
            #expect(config.userName == "")
        }
        let writes = store.writes.withLock { $0 }
        #expect(writes.count == 2)
        #expect(writes.last == [config.$isFirstLaunch.key: .bool(false), config.$userName.key: StoredValue?.none])
        #expect(config.userName == "")
    }

    @Test func aBatchThatThrowsStillWritesWhatItAssigned() {
        struct Stop: Error {}
        let store = RecordingStore()
        let config = AppConfig(store: store)
        #expect(throws: Stop.self) {
            try config.batch {
                config.userName = "kept"
                throw Stop()
            }
        }
        #expect(store.value(forKey: config.$userName.key) == .string("kept"))
    }

    @Test func aBatchToAFileStoreIsOneRename() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = MatrixConfig(store: try JSONFileStore(url: url))
        config.int = 1
        let inodeBefore = try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? UInt64
        config.batch {
            config.int = 2
            config.string = "s"
            config.bool = true
        }
        let inodeAfter = try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? UInt64
        #expect(inodeBefore != inodeAfter)
        let object = try jsonObject(at: url)
        #expect(object[config.$int.key] as? Int == 2)
        #expect(object[config.$string.key] as? String == "s")
    }

    @Test func otherThreadsWritesDuringABatchAreNotHeldBack() async {
        let store = RecordingStore()
        let config = CounterConfig(store: store)
        let started = DispatchSemaphore(value: 0)
        let written = DispatchSemaphore(value: 0)
        let task = Task.detached {
            started.wait()
            config.b = 7
            written.signal()
        }
        config.batch {
            config.a = 1
            started.signal()
            written.wait()
            #expect(store.value(forKey: config.$b.key) == .int(7))
            #expect(store.value(forKey: config.$a.key) == nil)
        }
        await task.value
        #expect(store.value(forKey: config.$a.key) == .int(1))
    }
}

struct ExternalChangeTests {
    @Test func aWriteMakesOtherProcessesChangesVisibleToTheConfigs() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = AppConfig(store: try JSONFileStore(url: url))
        let twin = AppConfig(store: try JSONFileStore(url: url))
        config.isFirstLaunch = false
        // Another process changes a key and removes one.
        try Data(
            #"{"com.example.app.AppConfig.userName": "from elsewhere", "com.example.app.AppConfig.isFirstLaunch": false}"#
                .utf8
        ).write(to: url)
        #expect(config.userName == "")
        config.selectedHobbies = ["go"]
        #expect(config.userName == "from elsewhere")
        #expect(twin.userName == "from elsewhere")
        #expect(try jsonObject(at: url)["com.example.app.AppConfig.selectedHobbies"] as? [String] == ["go"])
    }
}
