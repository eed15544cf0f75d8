import Foundation
import StorableConfig
import Testing

@testable import StorableConfigCloud

final class NotificationPreferencesConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "com.example.myapplication" }
    @Setting var remindersForWeekendMornings = false
}

@Suite("iCloud sync within the cloud's limits")
struct CloudLimitsTests {
    init() { ReportedErrors.install() }

    @Test func aKeyOfAtMost64BytesIsItsOwnCloudKey() {
        let key = "com.example.app.AppConfig.userName"
        #expect(CloudLimits.cloudKey(for: key) == key)
        let exactly64 = String(repeating: "k", count: 64)
        #expect(CloudLimits.cloudKey(for: exactly64) == exactly64)
    }

    @Test func aLongerKeyMapsToTheSameCloudKeyInEveryVersion() {
        let key = "com.example.myapplication.NotificationPreferencesConfig.remindersForWeekendMornings"
        #expect(key.utf8.count == 83)
        // Written down once (FNV-1a of the key, checked against a separate implementation): a change to the
        // mapping would strand every value stored under the old cloud key.
        #expect(CloudLimits.cloudKey(for: key) == "~59b517aa8939580f.nPreferencesConfig.remindersForWeekendMornings")
        #expect(CloudLimits.cloudKey(for: key).utf8.count <= 64)
        // Multi-byte characters are cut at a character boundary.
        let unicode = String(repeating: "é", count: 40) + "🇫🇷" + String(repeating: "ß", count: 30)
        let mapped = CloudLimits.cloudKey(for: unicode)
        #expect(mapped.utf8.count <= 64)
        #expect(mapped.hasSuffix(String(repeating: "ß", count: 23)))
        #expect(CloudLimits.cloudKey(for: unicode + "x") != mapped)
    }

    @Test func aSettingWithALongKeySyncsUnderItsMappedKeyAndTheCloudValueNamesTheFullKey() throws {
        let cloud = SimulatedCloud()
        let phoneDevice = cloud.device("iPhone")
        let padDevice = cloud.device("iPad")
        let phoneSync = CloudSync(cloud: phoneDevice, local: InMemoryStore(), device: "iPhone")
        let padSync = CloudSync(cloud: padDevice, local: InMemoryStore(), device: "iPad")
        let phone = NotificationPreferencesConfig(store: phoneSync.store)
        let pad = NotificationPreferencesConfig(store: padSync.store)
        phoneSync.sync(phone)
        padSync.sync(pad)
        phone.remindersForWeekendMornings = true
        cloud.settle(["iPhone", "iPad"])
        #expect(pad.remindersForWeekendMornings)
        let key = phone.$remindersForWeekendMornings.key
        let data = try #require(cloud.serverData(CloudLimits.cloudKey(for: key)))
        #expect(try CloudEntry(decoding: data).key == key)
        #expect(phoneDevice.keys.allSatisfy { $0.utf8.count <= 64 })
    }

    @Test func keysPastTheCloudsLimitOrSharingACloudKeyAreReportedWhenSynced() {
        let cloud = SimulatedCloud()
        let engine = SyncEngine(cloud: cloud.device("Mac"), local: InMemoryStore(), device: "Mac", now: Date.init)
        let long = "limits.test." + String(repeating: "x", count: 70)
        engine.attach(
            (0..<CloudLimits.keyCount).map { ("limits.test.k\($0)", false) } + [("limits.test.past", false)])
        #expect(engine.syncedKeys.count == CloudLimits.keyCount)
        #expect(
            ReportedErrors.mentioning("'limits.test.past'").contains { $0.description.contains("at most 1024 keys") })
        let other = SyncEngine(cloud: cloud.device("Mac2"), local: InMemoryStore(), device: "Mac2", now: Date.init)
        other.attach([(long, false), (CloudLimits.cloudKey(for: long), false)])
        #expect(other.syncedKeys == [long])
        #expect(
            ReportedErrors.mentioning(CloudLimits.cloudKey(for: long)).contains {
                $0.description.contains("is also that of")
            })
    }

    @Test func aValuePastTheCloudsSizeIsReportedAndKeptOnTheDevice() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let huge = Array(repeating: String(repeating: "h", count: 1000), count: 1100)
        phone.config.hobbies = huge
        cloud.settle(["iPhone"])
        #expect(phone.config.hobbies == huge)
        #expect(cloud.serverData("cloud.test.SyncedSettings.hobbies") == nil)
        #expect(
            ReportedErrors.mentioning("cloud.test.SyncedSettings.hobbies").contains {
                $0.description.contains("1048576 bytes the cloud holds")
            })
        // A smaller value goes up again.
        phone.config.hobbies = ["small"]
        cloud.settle(["iPhone"])
        #expect(
            cloud.serverData("cloud.test.SyncedSettings.hobbies").flatMap(entry)?.value == .array([.string("small")]))
    }

    /// Each merge after the write (a notice, `synchronize()`) tries to send the collection again, and the other keys'
    /// bytes change the numbers in the reason: a report per merge (17 here, before), for one write.
    @Test func aRecordCollectionPastTheCloudsSizeIsReportedOncePerWriteNotPerRetry() {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        let big = String(repeating: "n", count: 1000)
        let sizeReports = { (reports: ReportedErrors.Reports) in
            reports.mentioning("cloud.test.SyncedSettings.notes", "bytes the cloud holds").count
        }
        let oneWrite = ReportedErrors.collecting {
            phone.config.notes.upsert(contentsOf: (0..<1100).map { Note(id: "n\($0)", text: big) })
            for length in 0..<16 {
                pad.config.userName = String(repeating: "u", count: length)
                cloud.settle(["iPhone", "iPad"])
                phone.sync.synchronize()
            }
        }
        #expect(sizeReports(oneWrite) == 1)
        let anotherWrite = ReportedErrors.collecting {
            phone.config.notes.upsert(Note(id: "one more", text: "x"))
            cloud.settle(["iPhone", "iPad"])
            phone.sync.synchronize()
        }
        #expect(sizeReports(anotherWrite) == 1)
        #expect(cloud.serverData("cloud.test.SyncedSettings.notes") == nil)
    }
}
