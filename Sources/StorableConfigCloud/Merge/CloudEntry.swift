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
/// `{"format":1,"key":…,"records":{"id":{"stamp":…,"value":…}},"prunedBefore":…}`.
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

    /// The value's text, as UTF-8 bytes.
    func encoded() -> Data {
        var object: [String: StoredValue] = ["format": .int(Self.format), "key": .string(key)]
        switch self {
        case .single(_, let stamped):
            for (name, value) in Self.fields(of: stamped) { object[name] = value }
        case .records(_, let records):
            object["records"] = .dictionary(records.entries.mapValues { .dictionary(Self.fields(of: $0)) })
            if let prunedBefore = records.prunedBefore { object["prunedBefore"] = .string(prunedBefore.description) }
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
            if let pruned = object["prunedBefore"] {
                guard case .string(let text) = pruned else { throw CloudValueError("its prunedBefore is not text") }
                stamps.prunedBefore = try CloudStamp(text: text)
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

/// A record collection's records by identifier, each stamped, with the tombstones of deleted records.
///
/// Tombstones stay bounded: one older than ``RecordStamps/tombstoneLifetime`` is dropped when the collection is
/// next written, and `prunedBefore` remembers the newest stamp dropped, so that a device that comes back with a
/// record stamped before it (a record deleted elsewhere whose tombstone is gone) deletes it instead of bringing
/// it back.
struct RecordStamps: Sendable, Hashable {
    var entries: [String: Stamped] = [:]
    var prunedBefore: CloudStamp?

    /// 30 days, in milliseconds.
    static let tombstoneLifetime: Int64 = 30 * 24 * 3600 * 1000

    /// The records, without tombstones.
    var values: [String: StoredValue] { entries.compactMapValues(\.value) }

    /// Drops the tombstones older than the lifetime before `now`.
    mutating func pruneTombstones(now: Int64) {
        let horizon = now.subtractingReportingOverflow(Self.tombstoneLifetime)
        guard !horizon.overflow else { return }
        for (id, entry) in entries where entry.value == nil && entry.stamp.milliseconds < horizon.partialValue {
            entries[id] = nil
            if prunedBefore.map({ $0 < entry.stamp }) ?? true { prunedBefore = entry.stamp }
        }
    }
}
