import Foundation
import StorableConfig

@testable import StorableConfigCloud

/// Stamps at and past the last stamp a clock may read (Docs/CloudSync.md, "Stamps"), and cloud values that carry
/// them, as a broken or hostile install leaves them.
enum PlantedValues {
    /// The start of the year 10000, in milliseconds since 1970: the last millisecond of a stamp.
    static let lastMilliseconds: Int64 = 253_402_300_800_000
    /// The last stamp a clock may read: nothing is later.
    static let lastStamp = CloudStamp(milliseconds: lastMilliseconds, counter: .max, device: "Z")
    /// Stamps past the last: the end of `Int64` and `UInt32` (the issue's), just past it, and in between.
    static let pastTheLimit = [
        CloudStamp(milliseconds: .max, counter: .max, device: "Z"),
        CloudStamp(milliseconds: lastMilliseconds + 1, counter: 0, device: "Z"),
        CloudStamp(milliseconds: 9_999_999_999_999_999, counter: 7, device: "Z"),
    ]

    /// The cloud value of a setting, stamped `stamp`.
    static func single(_ key: String, _ value: StoredValue, at stamp: CloudStamp) -> CloudEntry {
        .single(key: key, Stamped(stamp: stamp, value: value))
    }

    /// The cloud value of a record collection holding one record, stamped `stamp`.
    static func records(_ key: String, id: String, _ value: StoredValue, at stamp: CloudStamp) -> CloudEntry {
        .records(key: key, RecordStamps(entries: [id: Stamped(stamp: stamp, value: value)], seen: ["Z": stamp]))
    }
}

extension SimulatedCloud {
    /// Puts `entry` in the cloud from a device of its own named `name`: on the server, with a notice to the other
    /// devices of the account.
    func plant(_ entry: CloudEntry, from name: String = "Z") {
        let device = device(name)
        device.setData(entry.encoded(), forKey: CloudLimits.cloudKey(for: entry.key))
        upload(from: name)
    }
}
