import Foundation

/// Converts dates to and from ISO 8601 text in UTC ("2026-11-21T16:47:43.25Z") without losing precision.
///
/// `ISO8601DateFormatter` keeps at most milliseconds, so a `Date` written with it does not read back as the
/// identical `Date`. Here the fraction has as many digits as it takes, and no more: the text is checked to
/// read back as the identical `Double` of seconds since the reference date.
///
/// Every `Date` reads back identical. Dates whose whole seconds since 2001-01-01 fit in `Int64` (from
/// -292277022626-01-27T08:29:52Z to 292277026627-12-06T15:30:07Z, about ±292 billion years, in the proleptic
/// Gregorian calendar) are ISO 8601 text; a date beyond
/// them (a `Date` holds any `Double` of seconds, up to ±1.8e308) is the shortest decimal text of its seconds
/// since 2001 ("1e+300"), and ±infinity and NaN are "Infinity", "-Infinity" and "NaN". Text that names a
/// date outside that range ("999999999999-01-01T00:00:00Z") is not a date: every step of the arithmetic on
/// the text is checked, so no input can make it overflow.
enum ISO8601Timestamp {
    /// What ``parse(_:)`` found in a text.
    enum Parsed: Equatable {
        case date(Date)
        /// A timestamp whose seconds since 2001 do not fit in `Int64`.
        case outOfRange
        /// Not a timestamp.
        case invalid
    }

    /// The dates that ISO 8601 text may name, as a phrase for messages: those whose whole seconds since 2001
    /// fit in `Int64`.
    static let textRange = "from -292277022626-01-27T08:29:52Z to 292277026627-12-06T15:30:07Z"

    private static let secondsPerDay: Int64 = 86_400
    /// Days from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    private static let referenceDay: Int64 = 11_323

    /// Returns `date` as ISO 8601 text in UTC that ``date(from:)`` reads back as the identical `Date`.
    ///
    /// The seconds are the shortest decimal text of the `Double` that reads back identical (Swift's own
    /// `description`), split exactly, in decimal, into whole seconds and a fraction; ``date(from:)`` joins them
    /// again in decimal before converting to `Double` once, so nothing is lost on either side.
    static func string(from date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite else {
            return interval.isNaN ? "NaN" : (interval < 0 ? "-Infinity" : "Infinity")
        }
        guard let (seconds, fraction) = splitSeconds(interval) else {
            // Beyond ±292 billion years whole seconds leave Int64; such a date keeps its Double text.
            return interval.description
        }
        var days = seconds / secondsPerDay
        var secondOfDay = seconds % secondsPerDay
        if secondOfDay < 0 {
            secondOfDay += secondsPerDay
            days -= 1
        }
        let (year, month, day) = civilDate(fromDays: days + referenceDay)
        var text = yearText(year)
        text += "-" + twoDigits(month) + "-" + twoDigits(day)
        text += "T" + twoDigits(Int(secondOfDay / 3600)) + ":" + twoDigits(Int(secondOfDay / 60 % 60))
        text += ":" + twoDigits(Int(secondOfDay % 60))
        if !fraction.isEmpty { text += "." + fraction }
        return text + "Z"
    }

    /// Parses ISO 8601 text with a date, a time, optional fractional seconds and a zone (`Z` or `±hh:mm`), or
    /// the other forms that ``string(from:)`` writes.
    ///
    /// - Returns: The date, or `nil` if the text is not such a timestamp or names a date out of range.
    static func date(from text: String) -> Date? {
        guard case .date(let date) = parse(text) else { return nil }
        return date
    }

    /// Why `text` is not a date that ``date(from:)`` reads, as a phrase for messages; `nil` if it is one.
    static func problem(with text: String) -> String? {
        switch parse(text) {
        case .date: nil
        case .outOfRange: "\"\(text)\" is beyond the dates that can be read (\(textRange))"
        case .invalid: "\"\(text)\" is not an ISO 8601 date"
        }
    }

    /// Parses `text` as ``date(from:)`` does, telling a date out of range from text that is not a date.
    static func parse(_ text: String) -> Parsed {
        switch text {
        case "Infinity": return .date(Date(timeIntervalSinceReferenceDate: .infinity))
        case "-Infinity": return .date(Date(timeIntervalSinceReferenceDate: -.infinity))
        case "NaN": return .date(Date(timeIntervalSinceReferenceDate: .nan))
        default: break
        }
        if let interval = secondsBeyondTimestamps(text) { return .date(Date(timeIntervalSinceReferenceDate: interval)) }
        var scanner = Scanner(bytes: Array(text.utf8))
        let sign = scanner.takeSign() ?? 1
        guard let yearDigits = scanner.digits(minimum: 4, maximum: 12),
            scanner.take(UInt8(ascii: "-")), let month = scanner.digits(exactly: 2), (1...12).contains(month),
            scanner.take(UInt8(ascii: "-")), let day = scanner.digits(exactly: 2),
            scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
            let hour = scanner.digits(exactly: 2), hour < 24,
            scanner.take(UInt8(ascii: ":")), let minute = scanner.digits(exactly: 2), minute < 60,
            scanner.take(UInt8(ascii: ":")), let second = scanner.digits(exactly: 2), second <= 60
        else { return .invalid }
        let year = sign * yearDigits
        guard (1...daysInMonth(year: year, month: month)).contains(day) else { return .invalid }
        var fraction = ""
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
            let start = scanner.position
            while scanner.position < scanner.bytes.count, JSONNumber.isDigit(scanner.bytes[scanner.position]) {
                scanner.position += 1
            }
            guard scanner.position > start else { return .invalid }
            fraction = String(decoding: scanner.bytes[start..<scanner.position], as: UTF8.self)
        }
        // `Z` (an offset of 0), or `±hh:mm`.
        var offset: Int64 = 0
        if let zoneSign = scanner.takeSign() {
            guard let zoneHour = scanner.digits(exactly: 2), zoneHour < 24 else { return .invalid }
            _ = scanner.take(UInt8(ascii: ":"))
            guard let zoneMinute = scanner.digits(exactly: 2), zoneMinute < 60 else { return .invalid }
            offset = zoneSign * (zoneHour * 3600 + zoneMinute * 60)
        } else if !scanner.take(UInt8(ascii: "Z")) && !scanner.take(UInt8(ascii: "z")) {
            return .invalid
        }
        guard scanner.position == scanner.bytes.count else { return .invalid }
        // Days stay far inside Int64 (a year has at most 12 digits: under 3.7e14 days), and so does the time of
        // day with its offset (under two days of seconds); their seconds need not (12 digits of years are
        // about 3.2e19 seconds): checked, and arranged so that only a result beyond Int64 overflows.
        var days = daysFromCivil(year: year, month: month, day: day) - referenceDay
        var secondOfDay = hour * 3600 + minute * 60 + second - offset
        // The zone's offset moves the time by less than a day: one day back, none, or one day on.
        let carry = (secondOfDay + secondsPerDay) / secondsPerDay - 1
        days += carry
        secondOfDay -= carry * secondsPerDay
        if days < 0 {
            // Counted back from the end of the day: the day's first second may be just beyond Int64.min when
            // the result is not.
            days += 1
            secondOfDay -= secondsPerDay
        }
        let (daySeconds, productOverflowed) = days.multipliedReportingOverflow(by: secondsPerDay)
        let (whole, sumOverflowed) = daySeconds.addingReportingOverflow(secondOfDay)
        guard !productOverflowed, !sumOverflowed else { return .outOfRange }
        guard let interval = Double(joinSeconds(whole, fraction: fraction)) else { return .invalid }
        return .date(Date(timeIntervalSinceReferenceDate: interval))
    }

    /// The seconds of a date beyond the range of ISO 8601 text, written as ``string(from:)`` writes them: the
    /// shortest decimal text of a finite `Double` of at least 2⁶³ seconds, and nothing else.
    private static func secondsBeyondTimestamps(_ text: String) -> Double? {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39),
            let interval = Double(text), interval.isFinite, interval.magnitude >= 0x1p63,
            interval.description == text
        else { return nil }
        return interval
    }

    // MARK: Seconds as decimal text

    /// Splits `interval` into whole seconds (rounded down) and the digits of the fraction, exactly, working on
    /// its shortest decimal text: -0.1 is -1 and "9".
    private static func splitSeconds(_ interval: Double) -> (seconds: Int64, fraction: String)? {
        let (negative, integerDigits, fractionDigits) = plainDecimal(interval.description)
        guard let magnitude = Int64(integerDigits) else { return nil }
        guard negative else { return (magnitude, fractionDigits) }
        guard !fractionDigits.isEmpty else { return (-magnitude, "") }
        // -(m + 0.f) = -(m + 1) + (1 - 0.f)
        guard magnitude < Int64.max else { return nil }
        return (-(magnitude + 1), trimmingTrailingZeros(complement(fractionDigits)))
    }

    /// The decimal text of `seconds + 0.fraction`, for `Double(_:)` to round once.
    private static func joinSeconds(_ seconds: Int64, fraction: String) -> String {
        let fraction = trimmingTrailingZeros(fraction)
        guard !fraction.isEmpty else { return String(seconds) }
        guard seconds < 0 else { return "\(seconds).\(fraction)" }
        // s + 0.f with s < 0 is -((-s - 1) + (1 - 0.f))
        return "-\(UInt64(-(seconds + 1))).\(complement(fraction))"
    }

    /// The digits of 1 - 0.digits, with as many digits: "9" → "1", "25" → "75", "001" → "999".
    private static func complement(_ digits: String) -> String {
        var bytes = Array(digits.utf8)
        guard let last = bytes.lastIndex(where: { $0 != UInt8(ascii: "0") }) else { return digits }
        // 10^k - d, digit by digit: trailing zeros stay, the last non-zero digit d gives 10 - d, the digits
        // before it 9 - d.
        for index in 0..<last { bytes[index] = UInt8(ascii: "9") - bytes[index] + UInt8(ascii: "0") }
        bytes[last] = UInt8(ascii: "9") - bytes[last] + UInt8(ascii: "1")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The sign, integer digits and fraction digits of a finite Double's description ("1.25e-05" → false,
    /// "0", "0000125").
    private static func plainDecimal(_ text: String) -> (negative: Bool, integer: String, fraction: String) {
        guard let form = JSONNumber.decimalForm(of: text) else { return (false, "0", "") }
        let digits = String(decoding: form.digits, as: UTF8.self)
        // How many of the digits stand before the decimal point (none, some, or all and more as zeros).
        let point = digits.count + form.exponent
        guard point > 0 else { return (form.negative, "0", String(repeating: "0", count: -point) + digits) }
        guard point < digits.count else {
            return (form.negative, digits + String(repeating: "0", count: point - digits.count), "")
        }
        return (form.negative, String(digits.prefix(point)), String(digits.dropFirst(point)))
    }

    private static func trimmingTrailingZeros(_ digits: String) -> String {
        String(digits.reversed().drop(while: { $0 == "0" }).reversed())
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, after Howard Hinnant's civil_from_days)

    private static func civilDate(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let adjustedYear = month <= 2 ? year - 1 : year
        let era = (adjustedYear >= 0 ? adjustedYear : adjustedYear - 399) / 400
        let yearOfEra = adjustedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2:
            let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return isLeap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func twoDigits(_ value: some BinaryInteger) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    private static func yearText(_ year: Int64) -> String {
        let digits = String(abs(year))
        let padded = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        if year < 0 { return "-" + padded }
        return year > 9999 ? "+" + padded : padded
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        mutating func takeSign() -> Int64? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }

        mutating func digits(exactly count: Int) -> Int64? {
            digits(minimum: count, maximum: count)
        }

        /// At most `maximum` digits, which callers keep to 12 or fewer: the value cannot overflow.
        mutating func digits(minimum: Int, maximum: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maximum, position < bytes.count, JSONNumber.isDigit(bytes[position]) {
                value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
                position += 1
                count += 1
            }
            return count >= minimum ? value : nil
        }
    }
}
