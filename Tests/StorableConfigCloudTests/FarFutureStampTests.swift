import Foundation
import StorableConfig
import Testing

@testable import StorableConfigCloud

/// Stamps far ahead of every clock: past the last stamp (the start of the year 10000), a value is one that cannot
/// be read; before it, the later stamp wins as ever, reported when it is more than a day ahead; at the last
/// stamp, a write is refused rather than tied. Devices on both sides of the planted stamp's device "Z".
@Suite("iCloud sync with stamps far ahead of every clock")
struct FarFutureStampTests {
    static let userNameKey = "cloud.test.SyncedSettings.userName"
    static let fontSizeKey = "cloud.test.SyncedSettings.fontSize"
    static let day: Int64 = 24 * 3600 * 1000
    /// The issue's value: readable but for its stamp, at the end of `Int64` and `UInt32`.
    static let poison = PlantedValues.single(userNameKey, .string("poison"), at: PlantedValues.pastTheLimit[0])
    static let poisonStamp = "9223372036854775807.4294967295@Z"

    @Test(arguments: ["A", "b"])
    func aValueStampedPastTheLimitIsReportedOnceAndAWriteAfterItStands(device: String) {
        let cloud = SimulatedCloud()
        let other = device == "A" ? "b" : "A"
        let phone = Phone(device, on: cloud).launch()
        let pad = Phone(other, on: cloud).launch()
        let reports = ReportedErrors.collecting {
            cloud.plant(Self.poison)
            cloud.settle([device, other])
            phone.sync.synchronize()
            phone.sync.synchronize()
            #expect(phone.config.userName == "")
            phone.config.userName = "mine"
            #expect(phone.config.userName == "mine")
            cloud.settle([device, other])
            phone.sync.synchronize()
            pad.sync.synchronize()
            cloud.settle([device, other])
        }
        #expect(phone.config.userName == "mine")
        #expect(pad.config.userName == "mine")
        #expect(cloud.serverData(Self.userNameKey).flatMap(entry)?.value == .string("mine"))
        // Once on each device, naming the key and the stamp.
        #expect(reports.mentioning(Self.userNameKey, Self.poisonStamp).count == 2)
    }

    @Test(arguments: zip(["A", "b"], ["b", "A"]))
    func writesAfterAStampPastTheLimitGoByTheirClocksOnBothDevices(first: String, second: String) {
        let cloud = SimulatedCloud()
        let one = Phone(first, on: cloud).launch()
        let two = Phone(second, on: cloud).launch()
        cloud.plant(Self.poison)
        cloud.settle([first, second])
        two.config.fontSize = 30
        cloud.settle([first, second])
        #expect(one.config.fontSize == 30)
        one.clock.advance(60_000)
        one.config.fontSize = 40
        cloud.settle([first, second])
        one.sync.synchronize()
        two.sync.synchronize()
        cloud.settle([first, second])
        #expect(one.config.fontSize == 40)
        #expect(two.config.fontSize == 40)
    }

    /// As the version before this one left a device that took the issue's value and wrote after it: the value
    /// and the stamp beside it, and its own write stamped at the end too, in the local store and in the cloud.
    @Test(arguments: zip(["A", "b"], ["b", "A"]))
    func aDeviceThatKeptAStampPastTheLimitRecoversAtItsNextLaunch(first: String, second: String) throws {
        let cloud = SimulatedCloud()
        let phone = Phone(first, on: cloud)
        let own = CloudStamp(milliseconds: .max, counter: .max, device: first)
        for (key, value, stamp) in [
            (Self.userNameKey, StoredValue.string("poison"), PlantedValues.pastTheLimit[0]),
            (Self.fontSizeKey, .int(40), own),
        ] {
            phone.local.setValue(value, forKey: key)
            phone.local.setValue(
                .string("\(stamp) \(SyncEngine.KeyState.digest(value))"), forKey: SyncEngine.metaKey(key))
            cloud.plant(PlantedValues.single(key, value, at: stamp))
        }
        let pad = Phone(second, on: cloud, at: 1_060_000)
        let reports = ReportedErrors.collecting {
            phone.launch()
            pad.launch()
            cloud.settle([first, second])
            phone.config.userName = "mine"
            cloud.settle([first, second])
            pad.config.fontSize = 50
            cloud.settle([first, second])
            phone.sync.synchronize()
            pad.sync.synchronize()
            cloud.settle([first, second])
        }
        #expect(phone.config.userName == "mine")
        #expect(pad.config.userName == "mine")
        #expect(phone.config.fontSize == 50)
        #expect(pad.config.fontSize == 50)
        // The stamps kept now are this device's clock's, not the end's.
        for key in [Self.userNameKey, Self.fontSizeKey] {
            guard case .string(let kept)? = phone.local.value(forKey: SyncEngine.metaKey(key)) else {
                Issue.record("no stamp kept for \(key)")
                continue
            }
            #expect(try CloudStamp(text: String(kept.prefix { $0 != " " })).milliseconds < 2_000_000)
        }
        #expect(reports.mentioning(Self.userNameKey, Self.poisonStamp, "local store").count == 1)
        #expect(reports.mentioning(Self.fontSizeKey, own.description, "local store").count == 1)
    }

    @Test(arguments: [day + 60_000, 366 * day])
    func aStampADayOrAYearAheadStillWinsAsBefore(ahead: Int64) {
        let cloud = SimulatedCloud()
        let phone = Phone("A", on: cloud).launch()
        let pad = Phone("b", on: cloud, at: 1_000_000 + ahead).launch()
        cloud.setOnline("A", false)
        cloud.setOnline("b", false)
        pad.config.userName = "the pad's, stamped ahead"
        phone.clock.advance(60_000)
        phone.config.userName = "the phone's, a minute later"
        cloud.setOnline("A", true)
        cloud.setOnline("b", true)
        cloud.settle(["A", "b"])
        #expect(phone.config.userName == "the pad's, stamped ahead")
        #expect(pad.config.userName == "the pad's, stamped ahead")
        // Having seen it, the phone's next write is later.
        phone.config.userName = "the phone's, after seeing it"
        cloud.settle(["A", "b"])
        #expect(phone.config.userName == "the phone's, after seeing it")
        #expect(pad.config.userName == "the phone's, after seeing it")
    }

    @Test func aStampMoreThanADayAheadIsReportedOnceAndOneLessIsNot() {
        let cloud = SimulatedCloud()
        let phone = Phone("A", on: cloud).launch()
        let ahead = Phone("b", on: cloud, at: 1_000_000 + Self.day + 60_000).launch()
        let near = Phone("c", on: cloud, at: 1_000_000 + Self.day - 60_000).launch()
        let reports = ReportedErrors.collecting {
            ahead.config.fontSize = 20
            near.config.userName = "an hour short of a day ahead"
            for _ in 0..<2 {
                cloud.settle(["A", "b", "c"])
                phone.sync.synchronize()
            }
        }
        #expect(phone.config.fontSize == 20)
        #expect(reports.mentioning(Self.fontSizeKey, "\(1_000_000 + Self.day + 60_000).0@b", "ahead").count == 1)
        #expect(reports.mentioning(Self.userNameKey, "ahead").isEmpty)
    }

    @Test func aWriteAfterTheLastStampIsRefusedAndReportedRatherThanTied() {
        let cloud = SimulatedCloud()
        let phone = Phone("A", on: cloud).launch()
        cloud.plant(PlantedValues.single(Self.userNameKey, .string("from the end"), at: PlantedValues.lastStamp))
        cloud.settle(["A"])
        #expect(phone.config.userName == "from the end")
        let reports = ReportedErrors.collecting {
            phone.config.userName = "mine"
            phone.config.token = "not synced, so written"
            cloud.settle(["A"])
        }
        #expect(phone.local.value(forKey: Self.userNameKey) == .string("from the end"))
        #expect(cloud.serverData(Self.userNameKey).flatMap(entry)?.value == .string("from the end"))
        #expect(phone.local.value(forKey: "cloud.test.SyncedSettings.token") == .string("not synced, so written"))
        #expect(
            reports.errors.contains {
                guard case .writeFailed(Self.userNameKey, let reason) = $0 else { return false }
                return reason.contains("253402300800000.4294967295")
            })
    }
}
