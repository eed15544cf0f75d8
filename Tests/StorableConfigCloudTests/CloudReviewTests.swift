import Foundation
import StorableConfig
import Testing

@testable import StorableConfigCloud

/// An in-memory store that runs a test's code once, at a chosen moment of the sync's own calls: after the next
/// `values(forKeys:)` returns, or before the next `setValues` lands. No lock of the sync is held there, so the
/// code stands for another thread that runs in that window.
final class HookedStore: ConfigStore, @unchecked Sendable {
    let inner = InMemoryStore()
    let afterRead = Locked<(@Sendable () -> Void)?>(nil)
    let beforeWrite = Locked<(@Sendable () -> Void)?>(nil)

    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }

    func values(forKeys keys: [String]) -> [String: StoredValue] {
        let values = inner.values(forKeys: keys)
        afterRead.withLock { hook in
            defer { hook = nil }; return hook
        }?()
        return values
    }

    func setValue(_ value: StoredValue, forKey key: String) { setValues([key: value], removingValuesForKeys: []) }

    func removeValue(forKey key: String) { setValues([:], removingValuesForKeys: [key]) }

    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) {
        beforeWrite.withLock { hook in
            defer { hook = nil }; return hook
        }?()
        inner.setValues(values, removingValuesForKeys: keysToRemove)
    }

    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try inner.updateValues(forKeys: keys, transform)
    }
}

/// Cases found in a second review of the sync; each failed while the fault it names was there.
@Suite("iCloud sync: races and edge cases found in review")
struct CloudReviewTests {
    init() { ReportedErrors.install() }

    static let notesKey = "cloud.test.SyncedSettings.notes"

    /// A value held before sync was turned on goes up with a stamp at time zero, but no stamp is written beside it
    /// locally; so a later change outside the sync (a widget) is not seen at the next launch and loses to the
    /// cloud's copy of the old value (both "before sync": the cloud's wins).
    @Test func reviewOutsideChangeToAValueFromBeforeSyncIsKept() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud)
        let key = "cloud.test.SyncedSettings.userName"
        phone.local.setValue(.string("before sync"), forKey: key)
        phone.launch()
        cloud.settle(["iPhone"])
        phone.quit()
        phone.local.setValue(.string("from the widget"), forKey: key)
        phone.clock.advance(60_000)
        phone.launch()
        cloud.settle(["iPhone"])
        #expect(phone.config.userName == "from the widget")
        #expect(cloud.serverData(key).flatMap(entry)?.value == .string("from the widget"))
    }

    /// `write` reads a record collection's old value apart from its write: a record that a merge brings in
    /// between is neither tombstoned nor kept locally, while the sync's state (and the cloud) keep it.
    @Test func reviewResetRacingARecordFromTheCloudLeavesBothDevicesAgreeing() throws {
        let cloud = SimulatedCloud()
        let store = HookedStore()
        let sync = CloudSync(
            cloud: cloud.device("iPhone"), local: store, device: "iPhone", now: TestClock(1_000_000).now)
        let phone = SyncedSettings(store: sync.store)
        sync.sync(phone, except: [\.$token])
        let pad = Phone("iPad", on: cloud, at: 2_000_000).launch()
        phone.notes.upsert(Note(id: "a", text: "a"))
        cloud.settle(["iPhone", "iPad"])
        pad.config.notes.upsert(Note(id: "c", text: "from the pad"))
        cloud.upload(from: "iPad")
        // The pad's record arrives while the phone's reset is between its read and its write.
        store.afterRead.withLock { $0 = { cloud.deliver(to: "iPhone") } }
        phone.notes.reset()
        cloud.settle(["iPhone", "iPad"])
        let phoneHolds = store.inner.value(forKey: Self.notesKey)?.members?.keys.sorted() ?? []
        let padHolds = pad.local.value(forKey: Self.notesKey)?.members?.keys.sorted() ?? []
        #expect(phoneHolds == padHolds)
        // At the next launch the phone reads the record as removed outside the sync and deletes it everywhere.
        let relaunched = CloudSync(
            cloud: cloud.device("iPhone"), local: store, device: "iPhone", now: TestClock(3_000_000).now)
        relaunched.sync(SyncedSettings(store: relaunched.store), except: [\.$token])
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.notes.record(id: "c")?.text == "from the pad")
    }

    /// `recordsAfterLocalWrite` stamps anew every record whose state differs from the store's: a record edit
    /// from another device that a merge has taken in but not yet written is stamped back to the old text by an
    /// unrelated local edit, and the other device's later edit is lost everywhere.
    @Test func reviewLocalRecordEditRacingAMergeKeepsTheOtherDevicesLaterEdit() throws {
        let cloud = SimulatedCloud()
        let store = HookedStore()
        let clock = TestClock(1_000_000)
        let sync = CloudSync(cloud: cloud.device("iPhone"), local: store, device: "iPhone", now: clock.now)
        let phone = SyncedSettings(store: sync.store)
        sync.sync(phone, except: [\.$token])
        let pad = Phone("iPad", on: cloud, at: 2_000_000).launch()
        phone.notes.upsert(Note(id: "r", text: "first"))
        cloud.settle(["iPhone", "iPad"])
        pad.config.notes.upsert(Note(id: "r", text: "pad's later edit"))
        cloud.upload(from: "iPad")
        // The user adds another note on the phone while the merge of the pad's edit is about to write it.
        store.beforeWrite.withLock { $0 = { phone.notes.upsert(Note(id: "q", text: "phone's note")) } }
        cloud.deliver(to: "iPhone")
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.notes.record(id: "r")?.text == "pad's later edit")
        #expect(phone.notes.record(id: "r")?.text == "pad's later edit")
        #expect(pad.config.notes.record(id: "q")?.text == "phone's note")
    }
    /// The stamp kept in the local store is `<stamp> <digest>`, read back by splitting at the first space; a
    /// device identifier with a space (`device:` is public: a device's name, say) cuts the stamp short and the
    /// digest never matches, so every launch restamps every synced value as changed outside the sync, and the
    /// device's old values beat the newer ones other devices wrote while it was closed.
    @Test func reviewADeviceIdentifierWithASpaceDoesNotRestampItsValuesAtEachLaunch() {
        let cloud = SimulatedCloud()
        let phone = Phone("Alice iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        phone.config.fontSize = 14
        cloud.settle(["Alice iPhone", "iPad"])
        phone.quit()
        pad.clock.advance(60_000)
        pad.config.fontSize = 20
        cloud.settle(["Alice iPhone", "iPad"])
        phone.clock.advance(120_000)
        phone.launch()
        cloud.settle(["Alice iPhone", "iPad"])
        #expect(phone.config.fontSize == 20)
        #expect(pad.config.fontSize == 20)
    }
    /// At launch the clock is moved past the stamps kept beside the values, but not past `seen`; once a record's
    /// tombstone is dropped (30 days), `seen` can hold this device's latest stamp alone. After a wall clock that
    /// jumps back (a battery runs out: Docs/CloudSync.md, "Clocks"), a new record takes a stamp that `seen`
    /// already covers, and the merge takes it for a record deleted here: it is gone at once, on every device.
    @Test func reviewARecordAddedAfterTheClockJumpsBackPastADroppedTombstoneIsKept() {
        let day: Int64 = 24 * 3600 * 1000
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud, at: 100 * day).launch()
        phone.config.notes.upsert(Note(id: "x", text: "x"))
        phone.clock.advance(10)
        phone.config.notes.delete(id: "x")
        cloud.settle(["iPhone"])
        phone.quit()
        // A month later the tombstone is dropped at launch.
        phone.clock.advance(31 * day)
        phone.launch()
        cloud.settle(["iPhone"])
        phone.quit()
        // The clock is set back two months.
        phone.clock.set(70 * day)
        phone.launch()
        phone.config.notes.upsert(Note(id: "y", text: "written after the clock went back"))
        cloud.settle(["iPhone"])
        #expect(phone.config.notes.record(id: "y")?.text == "written after the clock went back")
    }
    /// Two values from before sync: "the cloud's wins" is not an order of the two values but of the two sides, so
    /// each device takes the other's when their uploads cross, and neither sends again (Docs/CloudSync.md: "they
    /// end on whichever reached the service last").
    @Test func reviewTwoValuesFromBeforeSyncWhoseUploadsCrossEndTheSameOnBoth() {
        let cloud = SimulatedCloud()
        let key = "cloud.test.SyncedSettings.userName"
        let phone = Phone("iPhone", on: cloud)
        let pad = Phone("iPad", on: cloud)
        phone.local.setValue(.string("phone's"), forKey: key)
        pad.local.setValue(.string("pad's"), forKey: key)
        phone.launch()
        pad.launch()
        cloud.settle(["iPhone", "iPad"])
        #expect(phone.config.userName == pad.config.userName)
        #expect(cloud.serverData(key).flatMap(entry)?.value == .string(pad.config.userName))
    }
    /// A cloud value is JSON text, where a date is ISO 8601 text and data base64 text. The other device stores
    /// them as that text (as a JSON file does) and reads the same values through the setting; the writer keeps
    /// its own date and data (it rewrote them as strings when its copy came back: same stamp, same JSON text).
    /// Docs/CloudSync.md says what a program that reads the raw UserDefaults value sees.
    @Test func aDateAndDataReadTheSameOnEveryDeviceAndTheWriterKeepsTheirKind() {
        let cloud = SimulatedCloud()
        let phone = SyncPair(on: cloud, device: "iPhone")
        let pad = SyncPair(on: cloud, device: "iPad")
        let date = Date(timeIntervalSince1970: 1_795_000_000.25)
        phone.config.lastOpened = date
        phone.config.avatar = Data([1, 2, 3])
        cloud.settle(["iPhone", "iPad"])
        phone.sync.synchronize()
        #expect(pad.config.lastOpened == date)
        #expect(pad.config.avatar == Data([1, 2, 3]))
        #expect(pad.local.value(forKey: "cloud.test.DatedSettings.lastOpened") == .string("2026-11-18T11:06:40.25Z"))
        #expect(phone.local.value(forKey: "cloud.test.DatedSettings.lastOpened") == .date(date))
        #expect(phone.local.value(forKey: "cloud.test.DatedSettings.avatar") == .data(Data([1, 2, 3])))
    }
}

final class DatedSettings: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "cloud.test" }
    @Setting var lastOpened = Date(timeIntervalSince1970: 0)
    @Setting var avatar = Data()
}

/// A device with a config of a date and data, synced.
struct SyncPair {
    let local = InMemoryStore()
    let sync: CloudSync
    let config: DatedSettings

    init(on cloud: SimulatedCloud, device: String) {
        sync = CloudSync(cloud: cloud.device(device), local: local, device: device, now: TestClock(1_000_000).now)
        config = DatedSettings(store: sync.store)
        sync.sync(config)
    }
}
