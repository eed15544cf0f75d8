/// When and where a synced value was written: a reading of a hybrid logical clock and the device that took it.
///
/// Stamps are ordered by milliseconds, then counter, then device identifier, the same way on every device, so
/// that two devices that compare the same two stamps pick the same winner. A device's clock never goes back: a
/// reading is later than every stamp the device wrote or saw, even when the wall clock jumps back.
///
/// Its text form, inside a cloud value, is `<milliseconds>.<counter>@<device>`: `1795000000000.0@iPad`. A text
/// whose milliseconds are past ``lastMilliseconds`` (the start of the year 10000) is not a stamp: no clock reads
/// that far, and a stamp there would leave no later one for the writes after it.
public struct CloudStamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The last millisecond of a stamp, the same on every device: 253,402,300,800,000, the start of the year 10000,
    /// far past any working clock. A clock reads no later than it.
    public static let lastMilliseconds: Int64 = 253_402_300_800_000

    /// Milliseconds since 1970 by the clock of the device that wrote, moved forward past every stamp it had seen.
    public let milliseconds: Int64
    /// Orders the writes made within one millisecond (or while the wall clock stood behind a stamp seen).
    public let counter: UInt32
    /// The writing device's identifier.
    public let device: String

    /// Creates a stamp.
    public init(milliseconds: Int64, counter: UInt32, device: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.device = device
    }

    /// The stamp of a value that a device held before sync was turned on: older than any value written with
    /// sync on, so that a value already in the cloud wins over it.
    static func beforeSync(device: String) -> CloudStamp { CloudStamp(milliseconds: 0, counter: 0, device: device) }

    /// Whether this stamps a value held before sync was turned on and not yet sent.
    var isBeforeSync: Bool { milliseconds == 0 && counter == 0 }

    /// The stamp of a value held before sync was turned on, as it goes up: still older than any value written
    /// with sync on, but ordered among such values by device, the same way on every device.
    static func sentBeforeSync(device: String) -> CloudStamp {
        CloudStamp(milliseconds: 0, counter: 1, device: device)
    }

    /// Whether `lhs` is earlier: by milliseconds, then counter, then device identifier.
    public static func < (lhs: CloudStamp, rhs: CloudStamp) -> Bool {
        (lhs.milliseconds, lhs.counter) != (rhs.milliseconds, rhs.counter)
            ? (lhs.milliseconds, lhs.counter) < (rhs.milliseconds, rhs.counter)
            // Ties between devices go the same way everywhere: by the identifiers' UTF-8 bytes.
            : lhs.device.utf8.lexicographicallyPrecedes(rhs.device.utf8)
    }

    /// `<milliseconds>.<counter>@<device>`.
    public var description: String { "\(milliseconds).\(counter)@\(device)" }

    /// Reads the text form.
    /// - Throws: ``CloudValueError`` naming the text when it is not a stamp.
    init(text: String) throws(CloudValueError) {
        guard let at = text.firstIndex(of: "@"), let dot = text[..<at].firstIndex(of: ".") else {
            throw CloudValueError("'\(text.prefix(80))' is not a stamp (<milliseconds>.<counter>@<device>)")
        }
        let device = String(text[text.index(after: at)...])
        guard let milliseconds = Int64(text[..<dot]), let counter = UInt32(text[text.index(after: dot)..<at]),
            !device.isEmpty
        else { throw CloudValueError("'\(text.prefix(80))' is not a stamp (<milliseconds>.<counter>@<device>)") }
        guard milliseconds <= Self.lastMilliseconds else {
            throw CloudValueError(
                "'\(text.prefix(80))' is not a stamp: its milliseconds are past \(Self.lastMilliseconds), the start of "
                    + "the year 10000, which no clock reads")
        }
        self.init(milliseconds: milliseconds, counter: counter, device: device)
    }
}

/// A hybrid logical clock: readings follow the wall clock, but never go back, and come after every stamp seen.
///
/// Between ``CloudStamp/lastMilliseconds`` and the start of time: a wall clock that reads past it is not read (the
/// counter carries the order, as while the wall clock stands behind), and a stamp past it does not move the clock.
struct HybridClock {
    let device: String
    private(set) var last: CloudStamp

    init(device: String) {
        self.device = device
        last = .beforeSync(device: device)
    }

    /// A new reading, later than every earlier reading and every stamp seen; `nil` when there is none, the clock
    /// being at the last stamp (``CloudStamp/lastMilliseconds``, counter at its largest): never a reading equal to
    /// the last.
    mutating func tick(now milliseconds: Int64) -> CloudStamp? {
        if milliseconds > last.milliseconds && milliseconds <= CloudStamp.lastMilliseconds {
            last = CloudStamp(milliseconds: milliseconds, counter: 0, device: device)
        } else if last.counter < .max {
            last = CloudStamp(milliseconds: last.milliseconds, counter: last.counter + 1, device: device)
        } else if last.milliseconds < CloudStamp.lastMilliseconds {
            // A counter run out within one millisecond: the next millisecond.
            last = CloudStamp(milliseconds: last.milliseconds + 1, counter: 0, device: device)
        } else {
            return nil
        }
        return last
    }

    /// Moves the clock past a stamp that another device wrote, unless it is past the last stamp.
    mutating func witness(_ stamp: CloudStamp) {
        guard (stamp.milliseconds, stamp.counter) > (last.milliseconds, last.counter),
            stamp.milliseconds <= CloudStamp.lastMilliseconds
        else { return }
        last = CloudStamp(milliseconds: stamp.milliseconds, counter: stamp.counter, device: device)
    }
}

/// A cloud value that this version cannot read: its text, a stamp or its format.
struct CloudValueError: Error, CustomStringConvertible {
    let description: String
    /// A value that a later version wrote, in a format this one does not read: left for that version.
    var isLaterFormat = false
    init(_ description: String, isLaterFormat: Bool = false) {
        self.description = description
        self.isLaterFormat = isLaterFormat
    }
}
