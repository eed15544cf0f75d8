import Foundation
import Testing

@testable import StorableConfigCloud

/// The seeds of the `cloud-entry` fuzz target (Fuzz/Corpus) and every input that ever failed it
/// (Fuzz/Regressions), each through the same check as the target (Tests/StorableConfigCloudTests/Fuzzing). See
/// Docs/Fuzzing.md.
struct CloudFuzzRegressionTests {
    /// The repository's Fuzz folder, found from this file's place in the source tree.
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// The inputs of `target`, as paths under Fuzz/: its seeds, then the inputs that once failed it.
    static func inputs(of target: String) -> [String] {
        ["Corpus", "Regressions"].flatMap { folder in
            let names =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: fuzzFolder.appendingPathComponent("\(folder)/\(target)").path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(folder)/\(target)/\($0)" }
        }
    }

    @Test func theTargetHasSeeds() {
        #expect(Self.inputs(of: "cloud-entry").contains { $0.hasPrefix("Corpus/") })
    }

    @Test(arguments: inputs(of: "cloud-entry"))
    func cloudEntry(input: String) throws {
        let data = try Data(contentsOf: Self.fuzzFolder.appendingPathComponent(input))
        let failure = CloudEntryFuzzCheck.failure(for: data)
        #expect(failure == nil, "\(input): \(failure ?? "")")
    }

    /// The seeds of one cloud value are real ones: what the engine's encoder prints, byte for byte (those
    /// taken from the demo's cloud directory, and those written by hand).
    @Test(arguments: inputs(of: "cloud-entry").filter { $0.hasPrefix("Corpus/") && $0.hasSuffix(".json") })
    func aSeedOfOneValueIsWhatTheEncoderPrints(input: String) throws {
        let data = try Data(contentsOf: Self.fuzzFolder.appendingPathComponent(input))
        let entry = try CloudEntry(decoding: data)
        #expect(String(decoding: entry.encoded(), as: UTF8.self) == String(decoding: data, as: UTF8.self))
    }

    /// Two devices with one identifier (CloudSync keeps it in the local store, which a backup restores onto a new
    /// device) whose clocks both witnessed a stamp ahead of their wall clocks write one key: both take the next
    /// counter, so the stamps are equal. The values' JSON text breaks the tie, the same way on every device (each
    /// kept its own before, and they disagreed for good).
    @Test func twoValuesWithOneStampMergeTheSameWayOnEveryDevice() {
        let stamp = CloudStamp(milliseconds: 1_795_810_575_575, counter: 1, device: "iPad")
        let mine = Stamped(stamp: stamp, value: .string("ann"))
        let theirs = Stamped(stamp: stamp, value: .string("bob"))
        #expect(CloudMerge.single(local: mine, cloud: theirs) == CloudMerge.single(local: theirs, cloud: mine))
        let records = { (value: String) in RecordStamps(entries: ["a": Stamped(stamp: stamp, value: .string(value))]) }
        #expect(
            CloudMerge.records(local: records("ann"), cloud: records("bob"), now: 0)
                == CloudMerge.records(local: records("bob"), cloud: records("ann"), now: 0))
    }

    /// Two devices held record `a` before sync was turned on; one turned it on and deleted `a`. While the
    /// tombstone lasts, the other's `a` (stamped "before sync") does not come back when it turns sync on. After
    /// the tombstone's 30 days, nothing in the cloud says `a` was there: the other's is then a value the cloud
    /// lacks, and goes up (Docs/CloudSync.md says so).
    @Test func aRecordFromBeforeSyncDeletedElsewhereStaysDeletedWhileItsTombstoneLasts() {
        let deletedAt = CloudStamp(milliseconds: 1_000, counter: 0, device: "B")
        let cloud = RecordStamps(entries: ["a": Stamped(stamp: deletedAt, value: nil)], seen: ["B": deletedAt])
        let local = RecordStamps(entries: ["a": Stamped(stamp: .beforeSync(device: "A"), value: .int(1))])
        #expect(CloudMerge.records(local: local, cloud: cloud, now: 2_000).values["a"] == nil)
    }

    /// A device offline for over 30 days inserted record `x` before another device deleted record `y`; once `y`'s
    /// tombstone is dropped, the device that comes back keeps `x`: the cloud has seen nothing of its writer since
    /// (it was lost with the earlier rule, which dropped every record stamped before the newest dropped tombstone).
    @Test func aRecordInsertedOfflineSurvivesTheDroppingOfAnotherRecordsTombstone() {
        let inserted = CloudStamp(milliseconds: 1_000, counter: 0, device: "A")
        let deleted = CloudStamp(milliseconds: 2_000, counter: 0, device: "B")
        var cloud = RecordStamps(entries: ["y": Stamped(stamp: deleted, value: nil)], seen: ["B": deleted])
        cloud.pruneTombstones(now: 2_000 + RecordStamps.tombstoneLifetime + 1)
        #expect(cloud.entries.isEmpty)
        let local = RecordStamps(entries: ["x": Stamped(stamp: inserted, value: .int(1))], seen: ["A": inserted])
        #expect(CloudMerge.records(local: local, cloud: cloud, now: 3_000).values["x"] == .int(1))
    }

    /// A record deleted on one device, whose tombstone is dropped after 30 days, does not come back from a device
    /// that held it all along: the cloud has seen its writer's state at its stamp.
    @Test func aRecordDeletedElsewhereDoesNotComeBackAfterItsTombstoneIsDropped() {
        let written = CloudStamp(milliseconds: 1_000, counter: 0, device: "A")
        let deleted = CloudStamp(milliseconds: 2_000, counter: 0, device: "B")
        var cloud = RecordStamps(
            entries: ["x": Stamped(stamp: deleted, value: nil)], seen: ["A": written, "B": deleted])
        cloud.pruneTombstones(now: 2_000 + RecordStamps.tombstoneLifetime + 1)
        let local = RecordStamps(entries: ["x": Stamped(stamp: written, value: .int(1))], seen: ["A": written])
        #expect(CloudMerge.records(local: local, cloud: cloud, now: 3_000).values["x"] == nil)
    }
}
