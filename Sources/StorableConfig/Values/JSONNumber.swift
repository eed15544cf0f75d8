import Foundation

/// Exact readings of a number's decimal text (JSON's grammar, or the shortest text Swift prints for a `Double`
/// or a `Decimal`), for numbers that a `Double` does not hold exactly: an integer or a `Decimal` read digit for
/// digit, and a `Double` only when the number is within its range.
///
/// Written for text from outside the program: no arithmetic here can overflow, whatever the length of the
/// digits or the exponent.
enum JSONNumber {
    /// A number as its sign, significant digits (no leading or trailing zeros) and decimal exponent:
    /// "-3.140e2" is (true, "314", 0), "0.00" is (false, "", 0).
    struct DecimalForm: Equatable {
        var negative: Bool
        /// ASCII digits.
        var digits: [UInt8]
        var exponent: Int
    }

    /// Exponents beyond this are all "too large" for every type here; keeping them there keeps every sum below
    /// far from overflowing, however long the text.
    private static let exponentLimit = 1_000_000_000_000_000

    /// The decimal form of `text`, a JSON number or the text of a finite `Double` or `Decimal`; `nil` if it is
    /// not such text.
    static func decimalForm(of text: String) -> DecimalForm? {
        var rest = Substring(text).utf8
        func take(_ options: String) -> UInt8? {
            guard let byte = rest.first, options.utf8.contains(byte) else { return nil }
            rest = rest.dropFirst()
            return byte
        }
        func takeDigits() -> Substring.UTF8View {
            let run = rest.prefix(while: isDigit)
            rest = rest.dropFirst(run.count)
            return run
        }
        let negative = take("-") != nil
        let integerPart = takeDigits()
        let fractionPart = take(".") != nil ? takeDigits() : rest.prefix(0)
        guard !integerPart.isEmpty || !fractionPart.isEmpty else { return nil }
        var exponent = 0
        if take("eE") != nil {
            let exponentNegative = take("+-") == UInt8(ascii: "-")
            let exponentDigits = takeDigits()
            guard !exponentDigits.isEmpty else { return nil }
            // Saturates: beyond the limit, the number is out of every range anyway.
            for byte in exponentDigits where exponent < exponentLimit {
                exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
            }
            if exponentNegative { exponent = -exponent }
        }
        guard rest.isEmpty else { return nil }
        // The digits of integer and fraction together, less leading and trailing zeros; the exponent moves by
        // the fraction's length and by the trailing zeros (both at most the text's length).
        var digits = Array(integerPart)
        digits.append(contentsOf: fractionPart)
        exponent -= fractionPart.count
        let leading = digits.prefix(while: { $0 == UInt8(ascii: "0") }).count
        guard leading < digits.count else { return DecimalForm(negative: false, digits: [], exponent: 0) }
        let trailing = digits.reversed().prefix(while: { $0 == UInt8(ascii: "0") }).count
        exponent += trailing
        return DecimalForm(
            negative: negative, digits: Array(digits[leading..<(digits.count - trailing)]), exponent: exponent)
    }

    /// The integer that `text` is, exactly, if `Integer` holds it: "1e3" and "3.0" are integers, "2.5" is not,
    /// "18446744073709551616" is no `UInt64`.
    static func integer<Integer: FixedWidthInteger>(_ text: String, as type: Integer.Type) -> Integer? {
        guard let form = decimalForm(of: text) else { return nil }
        guard !form.digits.isEmpty else { return 0 }
        // UInt64.max has 20 digits; `UInt64(_:)` refuses a number beyond it.
        guard form.exponent >= 0, form.digits.count + form.exponent <= 20,
            let magnitude = UInt64(
                String(decoding: form.digits, as: UTF8.self) + String(repeating: "0", count: form.exponent))
        else { return nil }
        guard form.negative else { return Integer(exactly: magnitude) }
        guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
        return Integer(exactly: magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
    }

    /// The `Double` nearest to `text`, if the number is within a `Double`'s range: not beyond its largest
    /// finite value (`1e400`), and not so small that it would read as zero (`1e-400`).
    static func double(_ text: String) -> Double? {
        guard let form = decimalForm(of: text), let number = Double(text), number.isFinite else { return nil }
        guard number != 0 || form.digits.isEmpty else { return nil }
        return number
    }

    /// The `Decimal` that `text` is, digit for digit, if a `Decimal` holds it (at most 38 significant digits,
    /// and an exponent from -128 to 127).
    static func decimal(_ text: String) -> Decimal? {
        guard let form = decimalForm(of: text) else { return nil }
        guard !form.digits.isEmpty else { return Decimal(0) }
        // Decimal(string:) drops digits beyond its mantissa without a word: compare what it read.
        guard form.digits.count <= 40, (-200...200).contains(form.exponent), let decimal = Decimal(string: text),
            !decimal.isNaN,
            decimalForm(of: decimal.description) == form
        else { return nil }
        return decimal
    }

    /// Why `text` is not a `typeName`, as a phrase for messages.
    static func doesNotFit(_ text: String, in typeName: String) -> String {
        "the number \(text) does not fit in \(typeName)"
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
