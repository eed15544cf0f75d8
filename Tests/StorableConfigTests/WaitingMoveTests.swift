import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#endif

/// A setting renamed with `previousKeys`, as the next version of a program declares it.
final class RenamedSettingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "waitingmove" }
    @Setting(previousKeys: ["waitingmove.oldName"]) var newName = "default"
    @Setting var other = 0
}

/// A move from an earlier key that the store cannot write (an etcd cluster with no member answering, a read-only
/// disk): the setting reads the earlier key's value, not its default, until the move is written, which happens
/// at the store's next successful write, reload or reported change.
struct WaitingMoveTests {
    static let oldKey = "waitingmove.oldName"
    static let newKey = "waitingmove.RenamedSettingConfig.newName"

    /// A store that refuses writes, holding the earlier key's value, as an older version left it.
    static func refusingStoreWithOldValue() -> RefusingStore {
        let store = RefusingStore()
        store.inner.setValue(.string("kept"), forKey: oldKey)
        store.refusing.withLock { $0 = true }
        return store
    }

    @Test func aMoveTheStoreCannotWriteReadsTheEarlierValueAndIsWrittenAtTheNextSuccessfulWrite() throws {
        ReportedErrors.install()
        let store = Self.refusingStoreWithOldValue()
        let config = RenamedSettingConfig(store: store)
        #expect(config.newName == "kept")
        #expect(config.$newName.isSet)
        #expect(store.inner.value(forKey: Self.oldKey) == .string("kept"))
        #expect(store.inner.value(forKey: Self.newKey) == nil)
        #expect(ReportedErrors.mentioning(Self.newKey).contains { "\($0)".contains("refused") })
        // Another config created meanwhile reads it too, and an assignment that fails goes back to it.
        let later = RenamedSettingConfig(store: store)
        #expect(later.newName == "kept")
        let seen = Locked<[String]>([])
        let token = later.$newName.observe { value in seen.withLock { $0.append(value) } }
        config.newName = "refused"
        #expect(config.newName == "kept")
        #expect(later.newName == "kept")

        // The store takes writes again: the next write that succeeds moves the value.
        store.refusing.withLock { $0 = false }
        config.other = 1
        #expect(store.inner.value(forKey: Self.newKey) == .string("kept"))
        #expect(store.inner.value(forKey: Self.oldKey) == nil)
        #expect(config.newName == "kept")
        #expect(later.newName == "kept")
        #expect(RenamedSettingConfig(store: store).newName == "kept")
        // Nobody was ever told of the default.
        #expect(seen.withLock { $0 }.allSatisfy { $0 == "kept" })
        token.cancel()
    }

    @Test func aWaitingMoveIsWrittenAtAReloadOrAChangeTheStoreReports() throws {
        for trigger in ["reload", "reported change"] {
            let store = Self.refusingStoreWithOldValue()
            let config = RenamedSettingConfig(store: store)
            #expect(config.newName == "kept", "\(trigger)")
            store.refusing.withLock { $0 = false }
            if trigger == "reload" {
                try config.reload()
            } else {
                store.storageDidChange(forKeys: ["waitingmove.unrelated"])
            }
            #expect(store.inner.value(forKey: Self.newKey) == .string("kept"), "\(trigger)")
            #expect(store.inner.value(forKey: Self.oldKey) == nil, "\(trigger)")
            #expect(config.newName == "kept", "\(trigger)")
        }
    }

    /// A value assigned to the current key after the move failed is newer than the earlier key's: the move, when
    /// written, keeps it and only empties the earlier key, so the next start does not bring the old value back.
    @Test func aValueAssignedWhileTheMoveWaitsIsKeptAndTheEarlierKeyEmptied() throws {
        let store = Self.refusingStoreWithOldValue()
        let config = RenamedSettingConfig(store: store)
        store.refusing.withLock { $0 = false }
        config.newName = "assigned"
        #expect(config.newName == "assigned")
        #expect(store.inner.value(forKey: Self.newKey) == .string("assigned"))
        #expect(store.inner.value(forKey: Self.oldKey) == nil)
        #expect(RenamedSettingConfig(store: store).newName == "assigned")
    }

    /// A JSON file on a file system mounted read-only: the move cannot be written, the setting reads the earlier
    /// key's value, and the first write after the file system is writable again moves it.
    @Test(.enabled(if: getuid() == 0, "remounting a tmpfs read-only needs root; run the tests as root to include it"))
    func aJSONFileOnAReadOnlyFileSystemReadsTheEarlierValue() throws {
        ReportedErrors.install()
        try FaultInjectionTests.withTmpfs { disk in
            let url = disk.appendingPathComponent("settings.json")
            try Data(#"{"waitingmove.oldName": "kept"}"#.utf8).write(to: url)
            try FaultInjectionTests.remount(disk, readOnly: true)
            let config = RenamedSettingConfig(store: try JSONFileStore(url: url))
            #expect(config.newName == "kept")
            try FaultInjectionTests.remount(disk, readOnly: false)
            config.other = 1
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            #expect(object[Self.newKey] as? String == "kept")
            #expect(object[Self.oldKey] == nil)
            #expect(config.newName == "kept")
        }
    }
}
