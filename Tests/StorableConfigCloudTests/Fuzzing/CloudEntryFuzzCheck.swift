import Foundation
import StorableConfig

@testable import StorableConfigCloud

/// The check of the `cloud-entry` fuzz target (Fuzz/Targets/CloudEntryTarget.swift), also run by `swift test` over
/// its seed corpus and every input that ever failed it: cloud values as another device, another version of the
/// app or a damaged cloud leaves them (``CloudEntry``), their stamps (``CloudStamp``), the clock that reads
/// them (``HybridClock``) and the merge rules (``CloudMerge``).
///
/// The input is one cloud value, or two separated by a NUL byte (which no JSON text holds):
/// - Reading never crashes or hangs. What reads, encoded again, reads as an equal entry, and encodes to the same
///   bytes again.
/// - Each stamp's text reads back as the same stamp; the input read as a stamp's text, where it is one, prints
///   as text that reads back as that stamp, and is that text but for the way its numbers are written.
/// - No stamp read is past the last stamp (``CloudStamp/lastMilliseconds``), and one past it does not move a clock.
///   A clock that witnesses the stamps reads later than each, and each reading later than the one before, never
///   past the last stamp, whatever the wall clock says; it gives no reading only at the last stamp (milliseconds at
///   the last, counter at its largest), where nothing is later.
/// - Merging an entry with itself gives it back (less the tombstones that `now` drops from a record
///   collection, and with every stamp it holds seen); merging two entries of one key gives the same either way
///   round, and merging the result with either side changes nothing. Two values both held before sync was
///   turned on are left out of "either way round": the cloud's wins by design (see ``bothBeforeSync``).
enum CloudEntryFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let bytes = [UInt8](input)
        let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false).map { Data($0) }
        var entries: [CloudEntry] = []
        for part in parts {
            guard let entry = try? CloudEntry(decoding: part) else { continue }
            if let failure = roundTripFailure(entry) { return failure }
            if let failure = mergeWithItselfFailure(entry) { return failure }
            entries.append(entry)
        }
        if let failure = stampTextFailure(String(decoding: input, as: UTF8.self)) { return failure }
        if let failure = clockFailure(entries.flatMap(stamps(of:)), now: input.count) { return failure }
        if entries.count == 2 { return twoEntriesFailure(entries[0], rekeyed(entries[1], to: entries[0].key)) }
        return nil
    }

    /// Two different values of one key (or record) both stamped before sync was turned on: the cloud's wins,
    /// whichever side it is, so the merge is not the same either way round, by design.
    static func bothBeforeSync(_ first: CloudEntry, _ second: CloudEntry) -> Bool {
        switch (first, second) {
        case (.single(_, let one), .single(_, let other)):
            return one.stamp.isBeforeSync && other.stamp.isBeforeSync && one != other
        case (.records(_, let one), .records(_, let other)):
            return one.entries.contains { id, entry in
                other.entries[id].map { $0.stamp.isBeforeSync && entry.stamp.isBeforeSync && $0 != entry } ?? false
            }
        default:
            return false
        }
    }

    private static func roundTripFailure(_ entry: CloudEntry) -> String? {
        let encoded = entry.encoded()
        guard let again = try? CloudEntry(decoding: encoded) else {
            return "the encoding of \(entry) does not read: \(String(decoding: encoded, as: UTF8.self))"
        }
        guard again == entry else { return "\(entry) encoded reads as \(again)" }
        guard again.encoded() == encoded else { return "\(entry) encodes differently the second time" }
        for stamp in stamps(of: entry) {
            guard (try? CloudStamp(text: stamp.description)) == stamp else {
                return "the stamp \(stamp.description.debugDescription) does not read back"
            }
        }
        return nil
    }

    private static func stampTextFailure(_ text: String) -> String? {
        guard let stamp = try? CloudStamp(text: text) else { return nil }
        guard let again = try? CloudStamp(text: stamp.description), again == stamp else {
            return "the stamp read from \(text.debugDescription) prints as \(stamp.description.debugDescription), "
                + "which does not read back"
        }
        // Only the numbers may be written otherwise (a sign, leading zeros): the device is taken as it is.
        guard let at = text.firstIndex(of: "@"), text[text.index(after: at)...] == stamp.device else {
            return "the stamp read from \(text.debugDescription) names device \(stamp.device.debugDescription)"
        }
        return nil
    }

    private static func clockFailure(_ stamps: [CloudStamp], now: Int) -> String? {
        var clock = HybridClock(device: "fuzz")
        var previous = clock.last
        let last = CloudStamp.lastMilliseconds
        for (index, stamp) in stamps.enumerated() {
            guard stamp.milliseconds <= last else { return "the stamp \(stamp) past the last one was read" }
            clock.witness(stamp)
            // The same stamp moved past the last one: not a stamp, so the clock stays where it is.
            let before = clock.last
            clock.witness(CloudStamp(milliseconds: last + 1 + stamp.milliseconds & 0xFFFF, counter: 0, device: "Z"))
            guard clock.last == before else { return "a stamp past the last one moved the clock to \(clock.last)" }
            // The wall clock: behind the stamps, at the input's length, at the last millisecond, or past it.
            let wall: Int64 = [stamp.milliseconds, Int64(now), last, .max - 1][index % 4]
            guard let reading = clock.tick(now: wall) else {
                // No reading at the last stamp only, where nothing is later.
                guard clock.last.milliseconds == last, clock.last.counter == .max else {
                    return "the clock gave no reading at \(clock.last) (wall clock \(wall))"
                }
                continue
            }
            for earlier in [stamp, previous] {
                guard (reading.milliseconds, reading.counter) > (earlier.milliseconds, earlier.counter) else {
                    return "the clock read \(reading) after \(earlier) (wall clock \(wall))"
                }
            }
            guard reading.milliseconds <= last else { return "the clock read \(reading), past the last stamp" }
            guard reading.device == "fuzz" else { return "the clock read \(reading) for device fuzz" }
            previous = reading
        }
        return nil
    }

    private static func mergeWithItselfFailure(_ entry: CloudEntry) -> String? {
        switch entry {
        case .single(_, let stamped):
            let merged = CloudMerge.single(local: stamped, cloud: stamped)
            return merged == stamped ? nil : "\(stamped) merged with itself gives \(String(describing: merged))"
        case .records(_, let records):
            for now in nows(records) {
                var pruned = records
                for entry in records.entries.values { pruned.see(entry.stamp) }
                pruned.pruneTombstones(now: now)
                let merged = CloudMerge.records(local: records, cloud: records, now: now)
                guard merged == pruned else {
                    return "\(records) merged with itself at \(now) gives \(merged), not \(pruned)"
                }
            }
            return nil
        }
    }

    private static func twoEntriesFailure(_ first: CloudEntry, _ second: CloudEntry) -> String? {
        guard !bothBeforeSync(first, second) else { return nil }
        switch (first, second) {
        case (.single(_, let one), .single(_, let other)):
            let merged = CloudMerge.single(local: one, cloud: other)
            guard merged == CloudMerge.single(local: other, cloud: one) else {
                return "\(one) and \(other) merge differently either way round"
            }
            guard CloudMerge.single(local: merged, cloud: one) == merged,
                CloudMerge.single(local: other, cloud: merged) == merged
            else { return "merging \(String(describing: merged)) again with a side changes it" }
        case (.records(_, let one), .records(_, let other)):
            for now in nows(one) + nows(other) {
                let merged = CloudMerge.records(local: one, cloud: other, now: now)
                let otherWay = CloudMerge.records(local: other, cloud: one, now: now)
                guard merged == otherWay else {
                    return "\(one) and \(other) merge at \(now) as \(merged) one way, \(otherWay) the other"
                }
                for side in [one, other] {
                    let again = CloudMerge.records(local: merged, cloud: side, now: now)
                    guard again == merged else {
                        return "\(merged) (\(one) merged with \(other) at \(now)) merged again with \(side) "
                            + "gives \(again)"
                    }
                }
            }
        default:
            // A setting and a record collection under one key: the engine reads a key as one or the other.
            break
        }
        return nil
    }

    /// Times to merge at: one where nothing is pruned (`Int64.min`, whose horizon overflows), and just after the
    /// lifetime of each tombstone ends.
    private static func nows(_ records: RecordStamps) -> [Int64] {
        let ends = records.entries.values.filter { $0.value == nil }.prefix(4).map {
            $0.stamp.milliseconds.addingReportingOverflow(RecordStamps.tombstoneLifetime + 1)
        }
        return [.min] + ends.filter { !$0.overflow }.map(\.partialValue)
    }

    private static func stamps(of entry: CloudEntry) -> [CloudStamp] {
        switch entry {
        case .single(_, let stamped): [stamped.stamp]
        case .records(_, let records):
            records.entries.values.map(\.stamp).sorted() + records.seen.values.sorted()
        }
    }

    private static func rekeyed(_ entry: CloudEntry, to key: String) -> CloudEntry {
        switch entry {
        case .single(_, let stamped): .single(key: key, stamped)
        case .records(_, let records): .records(key: key, records)
        }
    }
}
