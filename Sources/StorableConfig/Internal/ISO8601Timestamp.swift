import Foundation

/// Converts dates to and from ISO 8601 text in UTC ("2026-11-21T16:47:43.25Z") without losing precision.
///
/// `ISO8601DateFormatter` keeps at most milliseconds, so a `Date` written with it does not read back as the
/// identical `Date`. Here the fraction has as many digits as it takes, and no more: the text is checked to
/// read back as the identical `Double` of seconds since the reference date.
enum ISO8601Timestamp {
    private static let secondsPerDay: Int64 = 86_400
    /// Days from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    private static let referenceDay: Int64 = 11_323

    /// Returns `date` as ISO 8601 text in UTC that ``date(from:)`` reads back as the identical `Date`.
    static func string(from date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e15 else {
            return interval.isNaN ? "NaN" : (interval < 0 ? "-Infinity" : "Infinity")
        }
        let whole = interval.rounded(.down)
        let fraction = interval - whole  // exact: both are multiples of the same power of two
        let seconds = Int64(whole)
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
        if fraction > 0 {
            text += "." + fractionDigits(fraction, whole: whole, interval: interval)
        }
        return text + "Z"
    }

    /// Parses ISO 8601 text with a date, a time, optional fractional seconds and a zone (`Z` or `±hh:mm`).
    ///
    /// - Returns: The date, or `nil` if the text is not such a timestamp.
    static func date(from text: String) -> Date? {
        switch text {
        case "Infinity": return Date(timeIntervalSinceReferenceDate: .infinity)
        case "-Infinity": return Date(timeIntervalSinceReferenceDate: -.infinity)
        case "NaN": return Date(timeIntervalSinceReferenceDate: .nan)
        default: break
        }
        var scanner = Scanner(Array(text.utf8))
        var sign: Int64 = 1
        if scanner.take(UInt8(ascii: "-")) {
            sign = -1
        } else {
            _ = scanner.take(UInt8(ascii: "+"))
        }
        guard let yearDigits = scanner.digits(minimum: 4, maximum: 12),
            scanner.take(UInt8(ascii: "-")), let month = scanner.digits(exactly: 2), (1...12).contains(month),
            scanner.take(UInt8(ascii: "-")), let day = scanner.digits(exactly: 2),
            scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
            let hour = scanner.digits(exactly: 2), hour < 24,
            scanner.take(UInt8(ascii: ":")), let minute = scanner.digits(exactly: 2), minute < 60,
            scanner.take(UInt8(ascii: ":")), let second = scanner.digits(exactly: 2), second <= 60
        else { return nil }
        let year = sign * yearDigits
        guard (1...daysInMonth(year: year, month: month)).contains(day) else { return nil }
        var fraction = 0.0
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
            let start = scanner.position
            while scanner.position < scanner.bytes.count, scanner.isDigit(scanner.bytes[scanner.position]) {
                scanner.position += 1
            }
            guard scanner.position > start else { return nil }
            let digits = String(decoding: scanner.bytes[start..<scanner.position], as: UTF8.self)
            fraction = Double("0." + digits) ?? 0
        }
        var offset: Int64 = 0
        if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
            offset = 0
        } else if let zoneSign = scanner.takeSign() {
            guard let zoneHour = scanner.digits(exactly: 2), zoneHour < 24 else { return nil }
            _ = scanner.take(UInt8(ascii: ":"))
            guard let zoneMinute = scanner.digits(exactly: 2), zoneMinute < 60 else { return nil }
            offset = zoneSign * (zoneHour * 3600 + zoneMinute * 60)
        } else {
            return nil
        }
        guard scanner.position == scanner.bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day) - referenceDay
        let whole = days * secondsPerDay + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSinceReferenceDate: Double(whole) + fraction)
    }

    // MARK: Fractions

    private static let powersOfTen: [Double] = (0...9).map { pow(10, Double($0)) }

    /// The shortest decimal digits of `fraction` that read back as the identical `interval`.
    private static func fractionDigits(_ fraction: Double, whole: Double, interval: Double) -> String {
        for count in 1...9 {
            let scaled = (fraction * powersOfTen[count]).rounded()
            guard scaled < powersOfTen[count] else { continue }
            let digits = String(Int(scaled))
            let padded = String(repeating: "0", count: count - digits.count) + digits
            if whole + (Double("0." + padded) ?? -1) == interval {
                return trimmingTrailingZeros(padded)
            }
        }
        // Fall back to the exact shortest digits of the fraction itself, which always read back.
        return trimmingTrailingZeros(plainDigits(ofFraction: fraction))
    }

    /// The digits after "0." of a number in [0, 1), from its shortest description ("1.25e-05" → "0000125").
    private static func plainDigits(ofFraction fraction: Double) -> String {
        let text = fraction.description
        guard let exponentIndex = text.firstIndex(where: { $0 == "e" || $0 == "E" }) else {
            return String(text.drop(while: { $0 != "." }).dropFirst())
        }
        let mantissa = text[..<exponentIndex].filter { $0 != "." }
        let exponent = Int(text[text.index(after: exponentIndex)...]) ?? 0
        return String(repeating: "0", count: max(0, -exponent - 1)) + mantissa
    }

    private static func trimmingTrailingZeros(_ digits: String) -> String {
        let trimmed = digits.reversed().drop(while: { $0 == "0" })
        return trimmed.isEmpty ? "0" : String(trimmed.reversed())
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

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }

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

        mutating func digits(minimum: Int, maximum: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maximum, position < bytes.count, isDigit(bytes[position]) {
                value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
                position += 1
                count += 1
            }
            return count >= minimum ? value : nil
        }
    }
}
