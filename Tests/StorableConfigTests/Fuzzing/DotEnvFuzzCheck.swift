import Foundation

@testable import StorableConfig

/// The check of the `dotenv` fuzz target (Fuzz/Targets/DotEnvTarget.swift), also run by `swift test` over its
/// seed corpus and every input that ever failed it: `.env` files that file sources read (``DotEnvFile``).
///
/// Any bytes are read as a `.env` file:
/// - Reading never crashes or hangs; every entry and problem is on a line of the file, each line has at most one
///   of them, in order; names are valid and values hold no NUL; ``DotEnvFile/values`` holds the last entry of
///   each name.
/// - Every problem's reason is one of ``DotEnvFile/Reason``'s: no text of the file but, for an invalid name,
///   that name, taken from before the equals sign of the problem's line. So no value, which may be a secret,
///   ever shows in one.
/// - The values, written back out as `NAME="…"` lines (with `export`, CRLF and a byte order mark too), read as
///   the same values, byte for byte; those that need no quotes or escapes as `NAME='…'` and `NAME=…` lines too.
/// - A line that held a whole assignment (one whose value holds no line break), or that a problem about its name
///   or an unclosed quote was reported for, reads the same on its own: each line is read independently of the
///   lines before it, but for a quoted value that goes on over several lines.
/// - The input with CRLF line ends (when it has no CR), or after a byte order mark (when it has none), reads
///   the same.
enum DotEnvFuzzCheck {
    /// Why `input` fails the check, or `nil` if it passes.
    static func failure(for input: Data) -> String? {
        let file = DotEnvFile(parsing: input)
        if let failure = shapeFailure(file, input) { return failure }
        if let failure = reasonFailure(file, input) { return failure }
        if let failure = roundTripFailure(file) { return failure }
        if let failure = lineAloneFailure(file, input) { return failure }
        let bytes = [UInt8](input)
        if !bytes.contains(UInt8(ascii: "\r")) {
            let crlf = bytes.flatMap { $0 == UInt8(ascii: "\n") ? [UInt8(ascii: "\r"), $0] : [$0] }
            if let failure = sameFailure(file, DotEnvFile(parsing: Data(crlf))) { return "with CRLF: \(failure)" }
        }
        if !bytes.starts(with: byteOrderMark) {
            let marked = DotEnvFile(parsing: Data(byteOrderMark + bytes))
            if let failure = sameFailure(file, marked) { return "after a byte order mark: \(failure)" }
        }
        return nil
    }

    /// `NAME="value"`, with `\`, `"`, LF and CR escaped: a line that reads back as `value`, whatever it holds.
    static func quotedLine(name: String, value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\(name)=\"\(escaped)\""
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The file's lines as the parser splits them: after a byte order mark, at LF, the last only if not empty.
    private static func lines(of input: Data) -> [ArraySlice<UInt8>] {
        var bytes = [UInt8](input)[...]
        if bytes.starts(with: byteOrderMark) { bytes = bytes.dropFirst(3) }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    private static func shapeFailure(_ file: DotEnvFile, _ input: Data) -> String? {
        let lineCount = lines(of: input).count
        let numbers = (file.entries.map(\.line) + file.problems.map(\.line)).sorted()
        for (index, number) in numbers.enumerated() {
            guard number >= 1 && number <= lineCount else { return "line \(number) of a file of \(lineCount)" }
            if index > 0 && numbers[index - 1] == number { return "two results on line \(number)" }
        }
        if file.entries.map(\.line) != file.entries.map(\.line).sorted() { return "entries out of order" }
        if file.problems.map(\.line) != file.problems.map(\.line).sorted() { return "problems out of order" }
        for entry in file.entries {
            guard isName(entry.name) else { return "entry on line \(entry.line): invalid name" }
            if entry.value.utf8.contains(0) { return "entry on line \(entry.line): a NUL in its value" }
        }
        let values = file.values
        var seen = Set<String>()
        for entry in file.entries.reversed() where seen.insert(entry.name).inserted {
            guard values[entry.name] == entry else { return "values: not the last entry named \(entry.name)" }
        }
        return values.count == seen.count ? nil : "values: \(values.count) names, entries name \(seen.count)"
    }

    private static func reasonFailure(_ file: DotEnvFile, _ input: Data) -> String? {
        let lines = lines(of: input)
        for problem in file.problems where !DotEnvFile.Reason.fixed.contains(problem.reason) {
            let parts = problem.reason.split(separator: "`", omittingEmptySubsequences: false)
            guard parts.count == 3, problem.reason == DotEnvFile.Reason.invalidName(String(parts[1])) else {
                return "line \(problem.line): an unknown reason: \(problem.reason.debugDescription)"
            }
            let name = Array(parts[1].utf8)
            let line = lines[problem.line - 1]
            let beforeEquals = line.prefix { $0 != UInt8(ascii: "=") }
            guard name.count <= DotEnvFile.Reason.longestQuotedName, contains(beforeEquals, name) else {
                return "line \(problem.line): the reason quotes text that is not the name"
            }
        }
        return nil
    }

    private static func roundTripFailure(_ file: DotEnvFile) -> String? {
        var names: [String] = []
        for entry in file.entries where !names.contains(entry.name) { names.append(entry.name) }
        let values = file.values
        let quoted = names.map { quotedLine(name: $0, value: values[$0]!.value) }
        let forms: [(String, String)] = [
            ("quoted", quoted.joined(separator: "\n")),
            (
                "quoted with export, CRLF and a byte order mark",
                "\u{FEFF}" + quoted.map { "export " + $0 }.joined(separator: "\r\n") + "\r\n"
            ),
        ]
        for (form, text) in forms {
            let again = DotEnvFile(parsing: Data(text.utf8))
            if !again.problems.isEmpty { return "\(form): problems on lines \(again.problems.map(\.line))" }
            guard again.entries.count == names.count else {
                return "\(form): \(again.entries.count) entries for \(names.count) names"
            }
            for (index, entry) in again.entries.enumerated() {
                let value = values[names[index]]!.value
                guard entry.name == names[index], entry.line == index + 1, entry.value.utf8.elementsEqual(value.utf8)
                else { return "\(form): line \(index + 1) reads as \(entry), not \(names[index])" }
            }
        }
        for name in names {
            let value = values[name]!.value
            var lines: [String] = []
            // By bytes: a quote followed by a combining mark is one Character, which `contains("'")` misses.
            if !value.utf8.contains(where: { $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: "\\") || $0 == 0x0A }) {
                lines.append("\(name)='\(value)'")
            }
            if isPlain(value) { lines.append("\(name)=\(value)") }
            for line in lines {
                let again = DotEnvFile(parsing: Data(line.utf8))
                guard again.problems.isEmpty, again.entries.count == 1,
                    again.entries[0].value.utf8.elementsEqual(value.utf8)
                else { return "\(line.debugDescription) reads as \(again)" }
            }
        }
        return nil
    }

    /// Each line is read after a byte order mark, so that one it starts with (after the file's own) stays.
    private static func lineAloneFailure(_ file: DotEnvFile, _ input: Data) -> String? {
        let lines = lines(of: input)
        for entry in file.entries where !entry.value.utf8.contains(UInt8(ascii: "\n")) {
            let alone = DotEnvFile(parsing: Data(byteOrderMark + lines[entry.line - 1]))
            guard alone.problems.isEmpty, alone.entries.count == 1, alone.entries[0].name == entry.name,
                alone.entries[0].value.utf8.elementsEqual(entry.value.utf8)
            else { return "line \(entry.line) on its own reads as \(alone), not \(entry)" }
        }
        let ofTheLine = Set(DotEnvFile.Reason.fixed).subtracting([
            DotEnvFile.Reason.textAfterQuote, DotEnvFile.Reason.nul, DotEnvFile.Reason.invalidUTF8,
        ])
        for problem in file.problems
        where ofTheLine.contains(problem.reason) || !DotEnvFile.Reason.fixed.contains(problem.reason) {
            let alone = DotEnvFile(parsing: Data(byteOrderMark + lines[problem.line - 1]))
            guard alone.entries.isEmpty, alone.problems == [DotEnvFile.Problem(line: 1, reason: problem.reason)] else {
                return "line \(problem.line) on its own reads as \(alone), not \(problem)"
            }
        }
        return nil
    }

    /// Whether `value` reads back unquoted: one line, no blanks around it, no quote first, no `#` after a blank.
    private static func isPlain(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        let blanks: Set<UInt8> = [0x20, 0x09, 0x0B, 0x0C, 0x0D]
        guard let first = bytes.first, let last = bytes.last else { return true }
        if blanks.contains(first) || blanks.contains(last) || first == UInt8(ascii: "'") || first == UInt8(ascii: "\"")
        {
            return false
        }
        if bytes.contains(UInt8(ascii: "\n")) || bytes.contains(UInt8(ascii: "\r")) { return false }
        return !zip(bytes, bytes.dropFirst()).contains { blanks.contains($0) && $1 == UInt8(ascii: "#") }
    }

    private static func sameFailure(_ file: DotEnvFile, _ other: DotEnvFile) -> String? {
        if file.problems != other.problems { return "problems \(other.problems), not \(file.problems)" }
        guard file.entries.count == other.entries.count else {
            return "\(other.entries.count) entries, not \(file.entries.count)"
        }
        for (mine, theirs) in zip(file.entries, other.entries)
        where mine.name != theirs.name || mine.line != theirs.line || !mine.value.utf8.elementsEqual(theirs.value.utf8)
        {
            return "\(theirs), not \(mine)"
        }
        return nil
    }

    private static func isName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || "_.-".utf8.contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        var start = haystack.startIndex
        while start + needle.count <= haystack.endIndex {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}
