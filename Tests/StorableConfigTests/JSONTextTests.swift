import Foundation
import Testing

@testable import StorableConfig

struct JSONTextTests {
    @Test func integersKeepTheirFullRange() throws {
        let text = #"{"min": -9223372036854775808, "max": 9223372036854775807, "umax": 18446744073709551615}"#
        let value = try JSONText.parse(Data(text.utf8))
        #expect(value == .dictionary(["min": .int(.min), "max": .int(.max), "umax": .uint(.max)]))
        #expect(try JSONText.parse(Data(JSONText.string(from: value, pretty: false).utf8)) == value)
    }

    @Test func numbersWithAFractionOrExponentAreDoubles() throws {
        #expect(try JSONText.parse(Data("1.0".utf8)) == .double(1))
        #expect(try JSONText.parse(Data("1e3".utf8)) == .double(1000))
        #expect(try JSONText.parse(Data("-0.5E-2".utf8)) == .double(-0.005))
        #expect(try JSONText.parse(Data("1e23".utf8)) == .double(1e23))
    }

    @Test(arguments: [
        0.1, -0.0, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 123456789.123456789, 1.0 / 3.0,
    ])
    func doublesRoundTripExactly(number: Double) throws {
        let text = JSONText.string(from: .double(number), pretty: false)
        guard case .double(let parsed) = try JSONText.parse(Data(text.utf8)) else {
            Issue.record("\(text) did not parse as a double")
            return
        }
        #expect(parsed.bitPattern == number.bitPattern)
    }

    @Test func stringsRoundTripWithEscapes() throws {
        let text = "quote\" backslash\\ slash/ tab\t nul\u{0} bell\u{07} emoji 🎌 surrogate \u{1F600}"
        let json = JSONText.string(from: .string(text), pretty: false)
        #expect(json.contains("\\u0000"))
        #expect(json.contains("slash/"))
        #expect(try JSONText.parse(Data(json.utf8)) == .string(text))
        #expect(try JSONText.parse(Data(#""\ud83d\ude00 \u00e9""#.utf8)) == .string("😀 é"))
    }

    @Test func integersAreWrittenAsSwiftPrintsThem() {
        for number: Int64 in [.min, .min + 1, -1_000_000_007, -10, -9, -1, 0, 1, 9, 10, 99, 100, 12_345, .max] {
            #expect(JSONText.string(from: .int(number), pretty: false) == String(number))
        }
        for number: UInt64 in [0, 9, 10, UInt64(Int64.max) + 1, .max] {
            #expect(JSONText.string(from: .uint(number), pretty: false) == String(number))
        }
    }

    @Test func stringsAreWrittenWithExactlyTheEscapesJSONNeeds() {
        let text = "a\"b\\c/d\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F} é 🎌"
        #expect(
            JSONText.string(from: .string(text), pretty: false)
                == #""a\"b\\c/d\n\r\t\b\f\u0001\u001f\#u{7F} é 🎌""#)
        #expect(
            JSONText.string(from: .dictionary(["k\"": .array([.string("x"), .int(-1)])]), pretty: true)
                == "{\n  \"k\\\"\": [\n    \"x\",\n    -1\n  ]\n}")
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "\"unterminated", "\"\\x\"", "\"\\ud800\"", "{} {}",
        "[\"a\nb\"]", "nul",
    ])
    func malformedTextIsRejected(text: String) {
        #expect(throws: JSONText.SyntaxError.self) { try JSONText.parse(Data(text.utf8)) }
    }

    @Test func deeplyNestedTextIsRejectedWithoutCrashing() {
        let text = String(repeating: "[", count: 100_000)
        #expect(throws: JSONText.SyntaxError.self) { try JSONText.parse(Data(text.utf8)) }
    }

    @Test func prettyOutputSortsKeysAndIndentsByTwoSpaces() {
        let value = StoredValue.dictionary(["b": .array([.int(1), .null]), "a": .dictionary([:]), "c": .array([])])
        #expect(
            JSONText.string(from: value, pretty: true) == """
                {
                  "a": {},
                  "b": [
                    1,
                    null
                  ],
                  "c": []
                }
                """)
    }

    @Test func nonFiniteNumbersAreWrittenAsStrings() {
        #expect(JSONText.string(from: .double(.infinity), pretty: false) == #""Infinity""#)
        #expect(JSONText.string(from: .double(-.infinity), pretty: false) == #""-Infinity""#)
        #expect(JSONText.string(from: .double(.nan), pretty: false) == #""NaN""#)
    }
}

struct ISO8601TimestampTests {
    @Test(arguments: [
        0, 0.25, -0.5, 785_000_000.123_456_7, 817_000_000.987_654_321, -1_000_000_000.5, 1e-300, 63_113_904_000,
        -63_114_076_800, 1_234_567_890.000_001, -0.1, -1e-6, -1e-300, 1e15, 2.5e17, -123.456,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
    ])
    func datesReadBackIdentical(interval: Double) throws {
        let date = Date(timeIntervalSinceReferenceDate: interval)
        let text = ISO8601Timestamp.string(from: date)
        let parsed = try #require(ISO8601Timestamp.date(from: text), "\(text)")
        #expect(parsed.timeIntervalSinceReferenceDate.bitPattern == interval.bitPattern, "\(text)")
    }

    @Test func randomDatesReadBackIdentical() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let interval =
                Double.random(in: -5e10...5e10, using: &generator)
                * (Bool.random(using: &generator) ? 1 : 1e-9)
            let text = ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: interval))
            let parsed = try #require(ISO8601Timestamp.date(from: text), "\(text)")
            guard parsed.timeIntervalSinceReferenceDate.bitPattern == interval.bitPattern else {
                Issue.record("\(interval) wrote \(text), read \(parsed.timeIntervalSinceReferenceDate)")
                return
            }
        }
    }

    @Test func textIsTheShortestThatReadsBack() {
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 0.5)) == "1970-01-01T00:00:00.5Z")
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: -0.1)) == "2000-12-31T23:59:59.9Z")
        #expect(
            ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: 721_692_800.1))
                == "2023-11-14T22:13:20.1Z")
        // 1_700_000_000.1 - 978_307_200 is not the Double nearest 721_692_800.1, so it needs more digits.
        #expect(
            ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 1_700_000_000.1))
                == "2023-11-14T22:13:20.0999999Z")
    }

    @Test func zonesAndFormatsAreParsed() {
        let utc = ISO8601Timestamp.date(from: "2026-11-21T07:47:43Z")
        #expect(ISO8601Timestamp.date(from: "2026-11-21T16:47:43+09:00") == utc)
        #expect(ISO8601Timestamp.date(from: "2026-11-21T02:47:43-0500") == utc)
        #expect(ISO8601Timestamp.date(from: "2026-11-21t07:47:43z") == utc)
        #expect(ISO8601Timestamp.date(from: "2024-02-29T00:00:00Z") != nil)
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21", "2026-11-21T07:47:43",
        "2026-11-21T24:00:00Z", "yesterday", "2026-11-21T07:47:43.Z", "2026-11-21T07:47:43+99:99",
        "2026-11-21T07:47:43+24:00", "2026-11-21T07:47:43-00:60", "9999999999999-01-01T00:00:00Z",
        "12345678901234567890", "1e300", "1.0e+300", "inf", "-inf", "nan", "0x1p70", "9.223372036854776e+18Z",
    ])
    func invalidTextIsRejected(text: String) {
        #expect(ISO8601Timestamp.date(from: text) == nil)
        #expect(ISO8601Timestamp.parse(text) == .invalid)
    }

    @Test(arguments: [
        "999999999999-01-01T00:00:00Z", "-999999999999-01-01T00:00:00Z", "+999999999999-12-31T23:59:60.999Z",
        "292277026627-12-06T15:30:08Z", "292277026627-12-06T16:30:08+01:00", "-292277022626-01-27T08:29:51Z",
        "-292277022626-01-27T08:29:52.5+00:01", "500000000000-06-15T12:00:00-23:59",
    ])
    func datesBeyondInt64SecondsAreOutOfRangeNotACrash(text: String) {
        #expect(ISO8601Timestamp.parse(text) == .outOfRange)
        #expect(ISO8601Timestamp.date(from: text) == nil)
        #expect(ISO8601Timestamp.problem(with: text)?.contains("beyond the dates that can be read") == true)
    }

    @Test func theEdgesOfTheRangeReadExactly() throws {
        let last = try #require(ISO8601Timestamp.date(from: "292277026627-12-06T15:30:07Z"))
        #expect(last.timeIntervalSinceReferenceDate == Double(Int64.max))
        let first = try #require(ISO8601Timestamp.date(from: "-292277022626-01-27T08:29:52Z"))
        #expect(first.timeIntervalSinceReferenceDate == Double(Int64.min))
        // The largest Doubles of whole seconds below 2^63 are ISO 8601 text, and read back.
        for interval in [0x1p63 - 1024, -0x1p63 + 1024] {
            let text = ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: interval))
            #expect(text.hasSuffix("Z"))
            #expect(ISO8601Timestamp.date(from: text)?.timeIntervalSinceReferenceDate == interval, "\(text)")
        }
    }

    @Test(arguments: [
        0x1p63, -0x1p63, 1e19, -1e19, 1e300, -1e300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .infinity, -.infinity,
    ])
    func datesBeyondTheTextRangeReadBackIdenticalAsSeconds(interval: Double) throws {
        let text = ISO8601Timestamp.string(from: Date(timeIntervalSinceReferenceDate: interval))
        let parsed = try #require(ISO8601Timestamp.date(from: text), "\(text)")
        #expect(parsed.timeIntervalSinceReferenceDate == interval, "\(text)")
    }

    @Test func negativeYearsAreProlepticAstronomicalYears() throws {
        // Year 0 is 1 BC, a leap year; -0001 is 2 BC.
        let yearZero = try #require(ISO8601Timestamp.date(from: "0000-01-01T00:00:00Z"))
        let yearOne = try #require(ISO8601Timestamp.date(from: "0001-01-01T00:00:00Z"))
        let minusOne = try #require(ISO8601Timestamp.date(from: "-0001-01-01T00:00:00Z"))
        #expect(yearOne.timeIntervalSince(yearZero) == 366 * 86_400)
        #expect(yearZero.timeIntervalSince(minusOne) == 365 * 86_400)
        #expect(ISO8601Timestamp.date(from: "0000-02-29T00:00:00Z") != nil)
        #expect(ISO8601Timestamp.date(from: "-0001-02-29T00:00:00Z") == nil)
        // 2,000,000 years of 365.2425 days before 2001.
        let past = try #require(ISO8601Timestamp.date(from: "-1997999-01-01T00:00:00Z"))
        #expect(past.timeIntervalSinceReferenceDate == -2_000_000 * 365.2425 * 86_400)
        #expect(ISO8601Timestamp.string(from: past) == "-1997999-01-01T00:00:00Z")
    }

    @Test func manyFractionDigitsReadAsTheNearestDouble() throws {
        let digits = String(repeating: "1", count: 10_000)
        let date = try #require(ISO8601Timestamp.date(from: "2001-01-01T00:00:00.\(digits)Z"))
        #expect(date.timeIntervalSinceReferenceDate == Double("0.\(digits)"))
        let before = try #require(ISO8601Timestamp.date(from: "2000-12-31T23:59:59.\(digits)Z"))
        // -1 + 0.111…1 is -0.888…89, as text, then rounded once.
        let complement = "-0." + String(repeating: "8", count: 9_999) + "9"
        #expect(before.timeIntervalSinceReferenceDate == Double(complement))
        let zeros = String(repeating: "0", count: 100_000)
        #expect(ISO8601Timestamp.date(from: "2001-01-01T00:00:00.\(zeros)1Z")?.timeIntervalSinceReferenceDate == 0)
        #expect(
            ISO8601Timestamp.date(from: "2001-01-01T00:00:00.\(String(repeating: "9", count: 400))Z")?
                .timeIntervalSinceReferenceDate == 1)
    }

    /// Why the package keeps its own timestamp code (#30: the toolchain first, where it does not lose data):
    /// Foundation's formatters keep milliseconds, so a date written with them does not read back identical, and
    /// `ISO8601DateFormatter` reads a five-digit year as a four-digit one. If this test fails, Foundation has
    /// caught up: try it in `ISO8601Timestamp`'s place.
    @Test func foundationsFormattersLoseWhatThisKeeps() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for interval in [-0.1, 1e-7, 0.123_456_789] {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            let ours = try #require(ISO8601Timestamp.date(from: ISO8601Timestamp.string(from: date)))
            #expect(ours == date)
            #expect(formatter.date(from: formatter.string(from: date)) != date, "\(interval)")
            let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            #expect((try? style.parse(style.format(date))) != date, "\(interval)")
        }
        let year12026 = "12026-01-09T00:00:00Z"
        #expect(ISO8601Timestamp.string(from: try #require(ISO8601Timestamp.date(from: year12026))) == "+" + year12026)
        #expect(ISO8601DateFormatter().date(from: year12026) == ISO8601Timestamp.date(from: "2026-01-09T00:00:00Z"))
    }

    /// Foundation's ISO8601DateFormatter, an independent implementation, agrees wherever both read the text:
    /// years 1583 to 9999 (before 1583 it counts in the Julian calendar; it does not read years of five or more
    /// digits), whole seconds exactly, fractions to its millisecond.
    @Test func foundationsFormatterReadsTheSameDates() throws {
        let whole = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SplitMix64(seed: 25)
        for _ in 0..<5_000 {
            let year = Int.random(in: 1583...9999, using: &generator)
            let month = Int.random(in: 1...12, using: &generator)
            // Foundation's formatter rolls February 30 over into March: only days that every month has.
            let day = Int.random(in: 1...28, using: &generator)
            let hour = Int.random(in: 0...23, using: &generator)
            let minute = Int.random(in: 0...59, using: &generator)
            let second = Int.random(in: 0...59, using: &generator)
            let fraction = Bool.random(using: &generator) ? ".\(Int.random(in: 0...999_999, using: &generator))" : ""
            let zone: String
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: zone = "Z"
            case 1: zone = "+" + padded(Int.random(in: 0...14, using: &generator), 2) + ":30"
            default: zone = "-" + padded(Int.random(in: 0...12, using: &generator), 2) + ":00"
            }
            let text =
                "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(hour, 2)):\(padded(minute, 2)):"
                + padded(second, 2) + fraction + zone
            let theirs = (fraction.isEmpty ? whole : fractional).date(from: text)
            let ours = ISO8601Timestamp.date(from: text)
            guard let ours, let theirs else {
                Issue.record("\(text) read as \(String(describing: ours)) and \(String(describing: theirs))")
                continue
            }
            // Foundation's formatter cuts the fraction to milliseconds.
            #expect(abs(ours.timeIntervalSince(theirs)) < (fraction.isEmpty ? 1e-6 : 0.0011), "\(text)")
        }
    }
}

private func padded(_ number: Int, _ width: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
