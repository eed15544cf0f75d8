import Foundation

@testable import StorableConfig

/// The check of the `iso8601` fuzz target (Fuzz/Targets/ISO8601Target.swift), also run by `swift test` over its
/// seed corpus and every input that ever failed it: the dates of settings files, overrides and imports.
///
/// The input is read twice: as text, and (its first eight bytes) as the bits of a `Double` of seconds since
/// 2001-01-01.
/// - Parsing any text never crashes; a date it reads prints as text that reads back as the identical date.
/// - Where Foundation's `ISO8601DateFormatter` also reads the text, both read the same instant (to its
///   millisecond), from the year 1583 on (before it, Foundation counts by the Julian calendar).
/// - Any date prints as text that reads back identical; from 1583 to 9999, Foundation's formatter reads that
///   text as the same instant.
enum ISO8601FuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let text = String(decoding: input, as: UTF8.self)
        if let problem = textFailure(text) { return problem }
        guard input.count >= 8 else { return nil }
        let bits = input.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return dateFailure(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
    }

    private static func textFailure(_ text: String) -> String? {
        guard let date = ISO8601Timestamp.date(from: text) else { return nil }
        let interval = date.timeIntervalSinceReferenceDate
        if !interval.isFinite && !["Infinity", "-Infinity", "NaN"].contains(text) {
            return "\(text.debugDescription) reads as \(interval)"
        }
        if let problem = dateFailure(date) { return "\(text.debugDescription) reads as a date that fails: \(problem)" }
        if comparable(text, date), let theirs = foundationDate(from: text),
            abs(theirs.timeIntervalSince(date)) >= Self.tolerance
        {
            return "\(text.debugDescription) reads as \(interval) s; ISO8601DateFormatter reads "
                + "\(theirs.timeIntervalSinceReferenceDate) s"
        }
        return nil
    }

    private static func dateFailure(_ date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        let text = ISO8601Timestamp.string(from: date)
        guard let again = ISO8601Timestamp.date(from: text) else {
            return "\(interval) s prints as \(text.debugDescription), which does not read back"
        }
        let read = again.timeIntervalSinceReferenceDate
        // Identical as dates: -0.0 s is 2001-01-01T00:00:00Z like 0.0 s.
        guard read == interval || (read.isNaN && interval.isNaN) else {
            return "\(interval) s prints as \(text.debugDescription), which reads back as \(read) s"
        }
        if comparable(text, date) {
            guard let theirs = foundationDate(from: text) else {
                return "\(interval) s prints as \(text.debugDescription), which ISO8601DateFormatter does not read"
            }
            if abs(theirs.timeIntervalSince(date)) >= Self.tolerance {
                return "\(interval) s prints as \(text.debugDescription), which ISO8601DateFormatter reads as "
                    + "\(theirs.timeIntervalSinceReferenceDate) s"
            }
        }
        return nil
    }

    /// Whether Foundation's formatter is a fair judge of `text`, which reads as `date`: a year of four digits
    /// (it reads "12026-01-09" as 2026-01-09), from 1583 on, and at most nine digits of a fraction.
    private static func comparable(_ text: String, _ date: Date) -> Bool {
        let head = Array(text.utf8.prefix(5))
        let fourDigitYear =
            head.count == 5 && head[4] == UInt8(ascii: "-")
            && head[..<4].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return fourDigitYear && date >= gregorian && fractionDigits(of: text) <= 9
    }

    /// Foundation's formatter keeps milliseconds, cutting off the rest (.999999973 reads as .999).
    private static let tolerance = 0.0015

    /// Before the year 1583, Foundation's formatter counts days by the Julian calendar (the Gregorian calendar
    /// began on 1582-10-15); ISO 8601, and ``ISO8601Timestamp``, count them by the Gregorian calendar backwards.
    private static let gregorian = ISO8601Timestamp.date(from: "1583-01-01T00:00:00Z")!

    /// What Foundation's `ISO8601DateFormatter` reads, with fractional seconds or without (it reads only the
    /// form it is set up for). Never given a fraction of more than nine digits, which it misreads (eleven ones
    /// read as a second early) or which stops the process (about sixty digits: SIGFPE in ICU's parser).
    private static func foundationDate(from text: String) -> Date? {
        formatterLock.withLock { formatters.plain.date(from: text) ?? formatters.fractional.date(from: text) }
    }

    /// Made once (making one costs about a millisecond); used under `formatterLock`, since the tests check
    /// inputs in parallel.
    nonisolated(unsafe) private static let formatters: (plain: ISO8601DateFormatter, fractional: ISO8601DateFormatter) =
        {
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return (ISO8601DateFormatter(), fractional)
        }()
    private static let formatterLock = NSLock()

    /// The length of the longest run of digits after a `.` or a `,` in `text`.
    private static func fractionDigits(of text: String) -> Int {
        var longest = 0
        var current: Int?
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: ",") {
                current = 0
            } else if let count = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                current = count + 1
                longest = max(longest, count + 1)
            } else {
                current = nil
            }
        }
        return longest
    }
}
