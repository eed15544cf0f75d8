import Foundation
import StorableConfig
import Testing

@testable import StorableConfigCloud

@Suite("iCloud sync between simulated devices")
struct CloudSyncTests {
    init() { ReportedErrors.install() }

    @Test func aWriteOnOneDeviceReachesTheOtherAsAnOutsideChangeNamingTheDevice() throws {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        let heard = Locked<[ConfigChange]>([])
        let token = pad.config.observe { change in heard.withLock { $0.append(change) } }
        phone.config.userName = "nkysu1"
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.userName == "nkysu1")
        #expect(pad.config.$userName.origin == #"iCloud (device "iPhone")"#)
        #expect(heard.withLock { $0.map(\.name) } == ["userName"])
        #expect(heard.withLock { $0.first?.origin } == #"iCloud (device "iPhone")"#)
        #expect(phone.config.$userName.origin == "the store")
        // Kept in the iPad's own store, which stays the source of truth.
        #expect(pad.local.value(forKey: "cloud.test.SyncedSettings.userName") == .string("nkysu1"))
        _ = token
        // The stamp kept beside it still names the writer after a relaunch.
        pad.quit()
        pad.launch()
        #expect(pad.config.$userName.origin == #"iCloud (device "iPhone")"#)
        #expect(phone.config.$userName.origin == "the store")
    }

    @Test func writesToOneKeyOnTwoDevicesWhileOfflineEndOnTheLaterOnBoth() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        cloud.setOnline("iPhone", false)
        cloud.setOnline("iPad", false)
        pad.clock.set(2_000_000)
        pad.config.fontSize = 20
        phone.clock.set(3_000_000)
        phone.config.fontSize = 30
        cloud.setOnline("iPhone", true)
        cloud.setOnline("iPad", true)
        // The later write reaches the server first; the earlier one arrives after it and is the server's last.
        cloud.upload(from: "iPhone")
        cloud.upload(from: "iPad")
        #expect(cloud.serverData("cloud.test.SyncedSettings.fontSize").flatMap(entry)?.value == .int(20))
        cloud.settle(["iPhone", "iPad"])
        #expect(phone.config.fontSize == 30)
        #expect(pad.config.fontSize == 30)
        #expect(cloud.serverData("cloud.test.SyncedSettings.fontSize").flatMap(entry)?.value == .int(30))
    }

    @Test func writesInOneMillisecondOnTwoDevicesEndTheSameWayOnBoth() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud, at: 5_000_000).launch()
        let pad = Phone("iPad", on: cloud, at: 5_000_000).launch()
        phone.config.userName = "phone"
        pad.config.userName = "pad"
        cloud.settle(["iPhone", "iPad"])
        // Same milliseconds and counter: the device identifiers decide, by their bytes ("iPad" < "iPhone").
        #expect(phone.config.userName == "phone")
        #expect(pad.config.userName == "phone")
    }

    @Test func lateReorderedDoubledAndLostNoticesStillEndOnTheLastWrite() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        for size in [13, 14, 15] {
            phone.clock.advance(10)
            phone.config.fontSize = size
            cloud.upload(from: "iPhone", duplicate: true)
        }
        // Six notices, newest doubled, delivered newest first.
        cloud.deliver(to: "iPad", order: { $0.reversed() })
        #expect(pad.config.fontSize == 15)
        // The iPad's copy was left at the oldest value delivered last: it sent the later one back up.
        cloud.settle(["iPhone", "iPad"])
        #expect(cloud.serverData("cloud.test.SyncedSettings.fontSize").flatMap(entry)?.value == .int(15))
        phone.clock.advance(10)
        phone.config.fontSize = 16
        cloud.upload(from: "iPhone")
        cloud.deliver(to: "iPad", lose: [0])
        #expect(pad.config.fontSize == 15)
        // The app asks again when it becomes active.
        pad.sync.synchronize()
        #expect(pad.config.fontSize == 16)
        phone.clock.advance(10)
        phone.config.fontSize = 17
        cloud.upload(from: "iPhone")
        cloud.deliver(to: "iPad", silent: [0])
        #expect(pad.config.fontSize == 16)
        pad.sync.synchronize()
        #expect(pad.config.fontSize == 17)
    }

    @Test func aResetLeavesATombstoneThatADeviceBackFromOfflineDoesNotUndo() throws {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        phone.config.hobbies = ["chess"]
        phone.config.nickname = "nk"
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.hobbies == ["chess"])
        cloud.setOnline("iPad", false)
        phone.clock.advance(1000)
        phone.config.$hobbies.reset()
        phone.config.nickname = nil
        cloud.settle(["iPhone"])
        // The iPad, offline meanwhile, relaunches with the old values and comes back.
        pad.quit()
        pad.launch()
        cloud.setOnline("iPad", true)
        cloud.settle(["iPhone", "iPad"])
        pad.sync.synchronize()
        cloud.settle(["iPhone", "iPad"])
        for device in [phone, pad] {
            #expect(device.config.hobbies == [])
            #expect(device.config.$hobbies.isSet == false)
            #expect(device.config.nickname == nil)
        }
        let held = try #require(cloud.serverData("cloud.test.SyncedSettings.hobbies").flatMap(entry))
        #expect(held.value == nil)
    }

    @Test func aResetOnOneDeviceWhileAnotherWritesLaterKeepsTheLaterWrite() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        phone.config.userName = "first"
        cloud.settle(["iPhone", "iPad"])
        cloud.setOnline("iPad", false)
        phone.clock.advance(100)
        phone.config.$userName.reset()
        pad.clock.advance(200)
        pad.config.userName = "written after the reset"
        cloud.setOnline("iPad", true)
        cloud.settle(["iPhone", "iPad"])
        #expect(phone.config.userName == "written after the reset")
        #expect(pad.config.userName == "written after the reset")
    }

    @Test func aFreshInstallTakesTheCloudsValuesAndSendsNoDefault() throws {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        phone.config.userName = "nkysu1"
        cloud.settle(["iPhone"])
        let before = cloud.serverData("cloud.test.SyncedSettings.userName")
        let mac = Phone("Mac", on: cloud)
        _ = mac.device.synchronize()
        mac.launch()
        cloud.settle(["iPhone", "Mac"])
        #expect(mac.config.userName == "nkysu1")
        #expect(cloud.serverData("cloud.test.SyncedSettings.userName") == before)
        // No default went up: the keys never written are not in the cloud.
        #expect(cloud.serverData("cloud.test.SyncedSettings.fontSize") == nil)
        #expect(phone.config.userName == "nkysu1")
    }

    @Test func turningSyncOnKeepsTheCloudsValuesAndSendsTheOthers() throws {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        phone.config.userName = "from the cloud"
        cloud.settle(["iPhone"])
        // The iPad ran a version without sync, which stored values of its own.
        let pad = Phone("iPad", on: cloud, at: 9_000_000)
        do {
            let before = SyncedSettings(store: pad.local)
            before.userName = "local"
            before.fontSize = 20
        }
        // The update turns sync on before the cloud's values reached the iPad (no initial sync yet).
        pad.launch()
        cloud.upload(from: "iPad")
        _ = pad.device.synchronize()
        pad.sync.synchronize()
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.userName == "from the cloud")
        #expect(phone.config.userName == "from the cloud")
        #expect(pad.config.fontSize == 20)
        #expect(phone.config.fontSize == 20)
    }

    @Test func recordsInsertedChangedAndDeletedOnTwoDevicesMergePerRecord() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        phone.config.notes.upsert(Note(id: "shared", text: "v1"))
        phone.config.notes.upsert(Note(id: "doomed", text: "x"))
        cloud.settle(["iPhone", "iPad"])
        cloud.setOnline("iPhone", false)
        cloud.setOnline("iPad", false)
        phone.clock.advance(10)
        phone.config.notes.upsert(Note(id: "phone", text: "from the phone"))
        phone.config.notes.upsert(Note(id: "shared", text: "phone's edit"))
        pad.clock.advance(20)
        pad.config.notes.upsert(Note(id: "pad", text: "from the pad"))
        pad.config.notes.upsert(Note(id: "shared", text: "pad's later edit"))
        pad.config.notes.delete(id: "doomed")
        cloud.setOnline("iPhone", true)
        cloud.setOnline("iPad", true)
        cloud.settle(["iPhone", "iPad"])
        let expected = [
            Note(id: "pad", text: "from the pad"), Note(id: "phone", text: "from the phone"),
            Note(id: "shared", text: "pad's later edit"),
        ]
        #expect(phone.config.notes.all.sorted { $0.id < $1.id } == expected)
        #expect(pad.config.notes.all.sorted { $0.id < $1.id } == expected)
        #expect(phone.config.notes.origin == #"iCloud (device "iPad")"#)
    }

    @Test func recordsMovedOnOneDeviceAndInsertedOnAnotherEndInOneOrderOnBoth() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        for id in ["a", "b", "c"] { phone.config.chores.insert(Chore(id: id, order: 0), at: phone.config.chores.count) }
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.chores.all.map(\.id) == ["a", "b", "c"])
        cloud.setOnline("iPhone", false)
        cloud.setOnline("iPad", false)
        phone.clock.advance(10)
        phone.config.chores.move(id: "c", to: 0)
        pad.clock.advance(20)
        pad.config.chores.insert(Chore(id: "d", order: 0), at: 1)
        cloud.setOnline("iPhone", true)
        cloud.setOnline("iPad", true)
        cloud.settle(["iPhone", "iPad"])
        let order = phone.config.chores.all.map(\.id)
        #expect(Set(order) == ["a", "b", "c", "d"])
        #expect(pad.config.chores.all.map(\.id) == order)
    }

    @Test func aRecordDeletedLongAgoIsNotBroughtBackByADeviceOfflineSinceBefore() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        phone.config.notes.upsert(Note(id: "old", text: "x"))
        cloud.settle(["iPhone", "iPad"])
        cloud.setOnline("iPad", false)
        phone.clock.advance(10)
        phone.config.notes.delete(id: "old")
        // Forty days on, the phone writes again: the tombstone is dropped.
        phone.clock.advance(40 * 24 * 3600 * 1000)
        phone.config.notes.upsert(Note(id: "new", text: "y"))
        cloud.settle(["iPhone"])
        cloud.setOnline("iPad", true)
        pad.sync.synchronize()
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.notes.all == [Note(id: "new", text: "y")])
        #expect(phone.config.notes.all == [Note(id: "new", text: "y")])
    }

    @Test func aQuotaViolationIsReportedWithTheKeysNotStored() {
        let cloud = SimulatedCloud()
        cloud.quota = 600
        let phone = Phone("iPhone", on: cloud).launch()
        phone.config.userName = "fits"
        cloud.settle(["iPhone"])
        phone.config.hobbies = Array(repeating: "a hobby with a long name", count: 40)
        cloud.settle(["iPhone"])
        let reports = ReportedErrors.mentioning("cloud.test.SyncedSettings.hobbies")
        #expect(reports.contains { $0.description.contains("over its quota") })
        #expect(phone.config.hobbies.count == 40)
        #expect(
            !ReportedErrors.mentioning("cloud.test.SyncedSettings.userName").contains {
                $0.description.contains("over its quota")
            })
    }

    @Test func anAccountChangeTakesTheNewAccountsValuesAndSendsNothingOfTheOld() {
        let cloud = SimulatedCloud()
        let work = Phone("work iPad", on: cloud, account: "bob").launch()
        work.config.fontSize = 30
        cloud.settle(["work iPad"])
        let phone = Phone("iPhone", on: cloud).launch()
        phone.config.userName = "alice's"
        cloud.settle(["iPhone"])
        cloud.switchAccount(of: "iPhone", to: "bob")
        cloud.settle(["iPhone", "work iPad"])
        #expect(phone.config.fontSize == 30)
        #expect(phone.config.userName == "")
        #expect(cloud.serverData("cloud.test.SyncedSettings.userName", account: "bob") == nil)
        #expect(work.config.userName == "")
        #expect(
            ReportedErrors.mentioning("cloud.test.SyncedSettings.userName").contains {
                $0.description.contains("account changed")
            })
    }

    @Test func aClockThatJumpsBackStillOrdersTheDevicesLaterWritesLast() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud, at: 50_000_000).launch()
        let pad = Phone("iPad", on: cloud, at: 50_000_000).launch()
        phone.config.userName = "before the jump"
        cloud.settle(["iPhone", "iPad"])
        phone.clock.set(1_000)
        phone.config.userName = "after the jump"
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.userName == "after the jump")
        // The iPad, whose clock is behind the phone's stamps, saw them: its next write comes after them.
        pad.clock.set(2_000)
        pad.config.userName = "the iPad's"
        cloud.settle(["iPhone", "iPad"])
        #expect(phone.config.userName == "the iPad's")
        // A relaunch keeps the clock past the stamps it stored.
        phone.quit()
        phone.launch()
        phone.config.userName = "after the relaunch"
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.config.userName == "after the relaunch")
    }

    @Test func aClockAtTheEndOfTimeOrNotANumberStillLetsLaterWritesWin() {
        let cloud = SimulatedCloud()
        let broken = CloudSync(
            cloud: cloud.device("broken"), local: InMemoryStore(), device: "broken",
            now: { Date(timeIntervalSince1970: 1e300) })
        let lost = CloudSync(
            cloud: cloud.device("lost"), local: InMemoryStore(), device: "lost",
            now: { Date(timeIntervalSince1970: .nan) })
        let pad = Phone("iPad", on: cloud).launch()
        let far = SyncedSettings(store: broken.store)
        let nowhere = SyncedSettings(store: lost.store)
        broken.sync(far)
        lost.sync(nowhere)
        far.userName = "from the end of time"
        cloud.settle(["broken", "lost", "iPad"])
        #expect(pad.config.userName == "from the end of time")
        #expect(nowhere.userName == "from the end of time")
        // A wall clock past the year 10000 is not read: the broken device's stamp came from its counter. Each
        // device's next write comes after every stamp it saw.
        pad.config.userName = "the iPad's, later"
        cloud.settle(["broken", "lost", "iPad"])
        #expect(far.userName == "the iPad's, later")
        nowhere.userName = "the lost clock's, later still"
        cloud.settle(["broken", "lost", "iPad"])
        #expect(far.userName == "the lost clock's, later still")
        #expect(pad.config.userName == "the lost clock's, later still")
    }

    @Test func aSecretIsNeverSentAndIsReported() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud)
        phone.launch()
        phone.sync.sync(phone.config, only: [\.$token])
        phone.config.token = "s3cret"
        cloud.settle(["iPhone"])
        #expect(cloud.serverData("cloud.test.SyncedSettings.token") == nil)
        #expect(!phone.device.keys.contains { $0.contains("token") })
        #expect(
            ReportedErrors.mentioning("cloud.test.SyncedSettings.token").contains { $0.description.contains("secret") })
    }

    @Test func aCloudValueThatCannotBeReadIsReplacedAndOneOfALaterFormatIsLeftAlone() throws {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        phone.config.userName = "mine"
        phone.config.fontSize = 14
        cloud.settle(["iPhone"])
        let other = cloud.device("other")
        other.setData(Data("not json".utf8), forKey: "cloud.test.SyncedSettings.userName")
        let later = #"{"format":2,"key":"cloud.test.SyncedSettings.fontSize","anything":1}"#
        other.setData(Data(later.utf8), forKey: "cloud.test.SyncedSettings.fontSize")
        cloud.settle(["other", "iPhone"])
        #expect(phone.config.userName == "mine")
        #expect(phone.config.fontSize == 14)
        #expect(cloud.serverData("cloud.test.SyncedSettings.userName").flatMap(entry)?.value == .string("mine"))
        #expect(cloud.serverData("cloud.test.SyncedSettings.fontSize") == Data(later.utf8))
        #expect(
            ReportedErrors.mentioning("cloud.test.SyncedSettings.fontSize").contains {
                $0.description.contains("format 2")
            })
    }
}

/// The stamped value of a single key's cloud data.
func entry(_ data: Data) -> Stamped? {
    guard case .single(_, let stamped) = try? CloudEntry(decoding: data) else { return nil }
    return stamped
}
