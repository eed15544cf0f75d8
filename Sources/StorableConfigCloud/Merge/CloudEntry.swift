import Foundation
import StorableConfig

/// A value with the stamp it was written at; `nil`: deleted (a tombstone), so that the deletion reaches every
/// device and no device that missed it brings the value back.
struct Stamped: Sendable, Hashable {
    var stamp: CloudStamp
    var value: StoredValue?
}

/// One synced key as the cloud holds it: its value and stamp together in one cloud value, so that they never
/// arrive out of step.
///
/// A setting is one stamped value; a record collection is a stamped value per record, so that records written on
/// two devices merge record by record. Its text is JSON:
/// `{"format":1,"key":"com.example.app.AppConfig.userName","stamp":"1795000000000.0@iPad","value":"nkysu1"}`,
/// with `"deleted":true` instead of `value` for a tombstone, and for records
/// `{"format":1,"key":…,"records":{"id":{"stamp":…,"value":…}},"seen":{"iPad":"1795000000000.0@iPad"}}`.
enum CloudEntry: Sendable, Hashable {
    case single(key: String, Stamped)
    case records(key: String, RecordStamps)

    /// The format this version writes; a value of a later format is left as it is.
    static let format: Int64 = 1

    var key: String {
        switch self {
        case .single(let key, _), .records(let key, _): key
        }
    }

    /// Every stamp the entry holds: its value's, or its records' and what it has seen.
    var stamps: [CloudStamp] {
        switch self {
        case .single(_, let stamped): [stamped.stamp]
        case .records(_, let records): records.entries.values.map(\.stamp) + records.seen.values
        }
    }

    /// The value's text, as UTF-8 bytes.
    func encoded() -> Data {
        var object: [String: StoredValue] = ["format": .int(Self.format), "key": .string(key)]
        switch self {
        case .single(_, let stamped):
            for (name, value) in Self.fields(of: stamped) { object[name] = value }
        case .records(_, let records):
            object["records"] = .dictionary(records.entries.mapValues { .dictionary(Self.fields(of: $0)) })
            if !records.seen.isEmpty {
                object["seen"] = .dictionary(records.seen.mapValues { .string($0.description) })
            }
        }
        return Data(StoredValue.dictionary(object).jsonText().utf8)
    }

    private static func fields(of stamped: Stamped) -> [String: StoredValue] {
        var fields: [String: StoredValue] = ["stamp": .string(stamped.stamp.description)]
        if let value = stamped.value { fields["value"] = value } else { fields["deleted"] = .bool(true) }
        return fields
    }

    /// Reads a cloud value.
    /// - Throws: ``CloudValueError`` saying what is wrong: not JSON, a later format, a missing or bad stamp.
    init(decoding data: Data) throws(CloudValueError) {
        guard let text = String(data: data, encoding: .utf8) else { throw CloudValueError("it is not UTF-8 text") }
        let value: StoredValue
        do {
            value = try StoredValue(jsonText: text)
        } catch {
            throw CloudValueError("it is not JSON (\(error))")
        }
        guard case .dictionary(let object) = value else { throw CloudValueError("it is not a JSON object") }
        guard case .int(let format) = object["format"] else { throw CloudValueError("it names no format") }
        guard format <= Self.format else {
            throw CloudValueError(
                "it is in format \(format), later than this version's \(Self.format)", isLaterFormat: true)
        }
        guard format == Self.format else { throw CloudValueError("it is in format \(format), which is no format") }
        guard case .string(let key) = object["key"] else { throw CloudValueError("it names no key") }
        if let records = object["records"] {
            guard case .dictionary(let entries) = records else {
                throw CloudValueError("its records are not an object")
            }
            var stamps = RecordStamps()
            for (id, entry) in entries { stamps.entries[id] = try Self.stamped(entry, at: "record '\(id)'") }
            if let seen = object["seen"] {
                guard case .dictionary(let devices) = seen else { throw CloudValueError("its seen is not an object") }
                for (device, stamp) in devices {
                    guard case .string(let text) = stamp else { throw CloudValueError("its seen is not stamps") }
                    stamps.seen[device] = try CloudStamp(text: text)
                }
            }
            self = .records(key: key, stamps)
        } else {
            self = .single(key: key, try Self.stamped(value, at: "the value"))
        }
    }

    private static func stamped(_ value: StoredValue, at place: String) throws(CloudValueError) -> Stamped {
        guard case .dictionary(let fields) = value, case .string(let text) = fields["stamp"] else {
            throw CloudValueError("\(place) has no stamp")
        }
        let stamp = try CloudStamp(text: text)
        if fields["deleted"] == .bool(true) { return Stamped(stamp: stamp, value: nil) }
        guard let stored = fields["value"] else { throw CloudValueError("\(place) has neither a value nor a deletion") }
        return Stamped(stamp: stamp, value: stored)
    }
}

/// A record collection's records by identifier, each stamped, with the tombstones of deleted records, and what
/// it has seen of each device: the latest stamp of that device whose state it took in.
///
/// Tombstones stay bounded: one older than ``RecordStamps/tombstoneLifetime`` is dropped when the collection is
/// next merged. A record that one side holds and the other lacks is then told apart by `seen`: if the side that
/// lacks it has seen its writer's state at or after its stamp, it had the record and deleted it (its tombstone
/// since dropped), so it goes; otherwise it is new to that side (written offline, say), so it stays.
struct RecordStamps: Sendable, Hashable {
    var entries: [String: Stamped] = [:]
    var seen: [String: CloudStamp] = [:]

    /// 30 days, in milliseconds.
    static let tombstoneLifetime: Int64 = 30 * 24 * 3600 * 1000

    /// The records, without tombstones.
    var values: [String: StoredValue] { entries.compactMapValues(\.value) }

    /// Whether this side has seen the state of `stamped`'s writer at or after its stamp.
    func hasSeen(_ stamped: Stamped) -> Bool {
        seen[stamped.stamp.device].map { stamped.stamp <= $0 } ?? false
    }

    /// Takes in a stamp: this side holds its writer's state at least as of it.
    mutating func see(_ stamp: CloudStamp) {
        if seen[stamp.device].map({ $0 < stamp }) ?? true { seen[stamp.device] = stamp }
    }

    /// Drops the tombstones older than the lifetime before `now`.
    mutating func pruneTombstones(now: Int64) {
        let horizon = now.subtractingReportingOverflow(Self.tombstoneLifetime)
        guard !horizon.overflow else { return }
        for (id, entry) in entries where entry.value == nil && entry.stamp.milliseconds < horizon.partialValue {
            entries[id] = nil
        }
    }
}
