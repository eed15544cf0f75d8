import Foundation

/// The variables a `.env` file sets, read with the syntax of Docker Compose's `env_file` ("Syntax for
/// environment files"), so that a file written for Compose means the same here.
///
/// ```
/// # the database
/// export DB_HOST=db.internal     # a comment after an unquoted value
/// DB_USER = "app"                # spaces around the name and "=" are allowed
/// DB_PASSWORD='p@ss $word #1'    # single quotes: literal, $ and # included
/// GREETING="Hello,\n\t\"world\"" # double quotes: escapes
/// CERTIFICATE="-----BEGIN CERTIFICATE-----
/// MIIB...
/// -----END CERTIFICATE-----"
/// ```
///
/// - Lines are split at LF; a CR before it (CRLF) is dropped, and so is a UTF-8 byte order mark at the start.
///   Blank lines, and lines whose first character other than blanks (space, tab, CR, vertical tab, form feed)
///   is `#`, are ignored.
/// - An assignment is `NAME=VALUE`, optionally after `export ` and with blanks around the name and the `=`.
///   A name is ASCII: a letter or `_`, then letters, digits, `_`, `.` or `-` (Compose takes any Unicode letter
///   and `[ ]` too; ASCII keeps two names equal exactly when their bytes are, which Swift's comparison of
///   strings by canonical equivalence would not, and a name starting with a digit cannot be a shell's variable).
///   `NAME: VALUE`, which Compose's parser also takes (undocumented), is not an assignment here.
/// - An unquoted value is the rest of the line, up to a `#` that follows a blank (`A=b # note` is `b`,
///   `A=b#c` is `b#c`, `A= # note` is empty), with blanks around it removed. Backslashes in it are literal.
/// - A value that starts with `'` or `"` is quoted, and may go on over several lines (Compose's parser takes
///   that too; the line breaks in it are LF). After the closing quote only blanks and a `#` comment may follow.
///   In single quotes everything is literal but `\'`, which is a `'` (as Compose documents: `'Let\'s go!'`);
///   a backslash before any other character stays with it, so such a value cannot end in a backslash. In
///   double quotes `\n`, `\r`, `\t`, `\\`, `\"`, `\$`, `\a`, `\b`, `\f` and `\v` are escapes, as in Compose;
///   a backslash before anything else stays (Compose's octal `\0NNN` is not read: it stays as written).
/// - `$` is literal everywhere: there is no `${VAR}` interpolation, since a file source has no environment to
///   take values from, and a value that names another should not change with the process that reads it.
/// - A line that is malformed (no `=`, an invalid name, a quote never closed, text after a closing quote, a
///   NUL byte, bytes that are not UTF-8) is a ``Problem``, and the rest of the file is still read (an
///   assignment with an invalid name is read to the end of its value first, so that the lines of a quoted value
///   are not taken for assignments of their own, nor quoted as names in problems). A line that is only a name
///   (Compose takes its value from the environment) is a problem too: there is no environment to take it from,
///   and a file that seems to set a variable but does not should say so.
/// - Every assignment is kept, in order; of duplicate names, the last wins in ``values``.
///
/// Reading never traps and takes time linear in the file's size, whatever the bytes. A quoted value is read up
/// to its closing quote and reading goes on after it; a quote that is never closed is looked for up to the end of
/// the file, and reading goes on at the next line, but that happens at most once per kind of quote: a later
/// value opened with the same quote would have closed it (an opening quote follows `=` or a blank, never a
/// backslash that would escape it).
struct DotEnvFile: Sendable {
    /// One well-formed assignment.
    struct Entry: Sendable, Equatable {
        let name: String
        let value: String
        /// The 1-based line of the name: where a value over several lines starts.
        let line: Int
    }

    /// One malformed line, which sets nothing.
    struct Problem: Sendable, Equatable {
        /// The 1-based line where the malformed statement starts.
        let line: Int
        /// What is wrong, as a sentence fragment ("the quote opened on this line is never closed"). It never
        /// quotes a value, since values may be secrets and problems are logged; it may quote a name.
        let reason: String
    }

    /// Every well-formed assignment, in file order (duplicates kept in order).
    let entries: [Entry]
    /// One per malformed line; the rest of the file is still used.
    let problems: [Problem]

    /// The value of each name: the last of duplicate names wins.
    var values: [String: Entry] {
        Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Reads `data`, bytes as read from disk.
    init(parsing data: Data) {
        var parser = Parser(bytes: [UInt8](data))
        var index = 0
        while index < parser.lines.count {
            index = parser.statement(at: index)
        }
        entries = parser.entries
        problems = parser.problems
    }

    /// The reasons a ``Problem`` gives, each in one place so that the fuzz check can tell that a reason is one
    /// of them and holds no text of the file but a name.
    enum Reason {
        static let nameWithoutEquals =
            "the line is a name without an equals sign: Compose would take its value from the environment, "
            + "which a file source does not read"
        static let noEquals = "the line is neither a comment nor an assignment: it has no equals sign"
        static let emptyName = "the line has no name before its equals sign"
        static let unprintableName = "the text before the equals sign is not a valid variable name"
        static let unclosedQuote = "the quote opened on this line is never closed"
        static let textAfterQuote = "the quoted value is followed by text that is not a comment"
        static let nul = "the value holds a NUL byte, which no environment variable can hold"
        static let invalidUTF8 = "the value is not valid UTF-8"

        /// Every reason but ``invalidName(_:)``.
        static let fixed = [
            nameWithoutEquals, noEquals, emptyName, unprintableName, unclosedQuote, textAfterQuote, nul,
            invalidUTF8,
        ]

        /// A name is quoted only when it is short, printable ASCII without a backtick: enough to find it, and
        /// never a line's worth of pasted text (a line of a PEM key, whose lines are 64 characters long).
        static let longestQuotedName = 32

        static func invalidName(_ name: String) -> String {
            "the name `\(name)` is not a valid variable name"
        }
    }
}

extension DotEnvFile {
    /// The start of an assignment: its name, its line (1-based), and what is wrong with the name, if anything.
    private struct Statement {
        let name: String
        let line: Int
        let problem: String?
    }

    /// The reading itself, over the file's bytes.
    private struct Parser {
        let bytes: [UInt8]
        /// Each line's bytes, without its LF and without a CR before it.
        let lines: [Range<Int>]
        var entries: [Entry] = []
        var problems: [Problem] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // An empty line after the last LF changes nothing: a blank line, or one more in an unclosed quote.
            let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            lines = bytes[start...].split(separator: Byte.newline, omittingEmptySubsequences: false).map { line in
                line.startIndex..<(line.last == Byte.carriageReturn ? line.endIndex - 1 : line.endIndex)
            }
        }

        /// Reads the statement that starts on line `index` (0-based); returns the index of the line after it.
        mutating func statement(at index: Int) -> Int {
            let line = lines[index]
            let number = index + 1
            var start = skipBlanks(from: line.lowerBound, to: line.upperBound)
            guard start < line.upperBound, bytes[start] != Byte.hash else { return index + 1 }
            start = afterExport(from: start, to: line.upperBound)

            guard let equals = bytes[start..<line.upperBound].firstIndex(of: Byte.equals) else {
                let isName = Self.isName(bytes[trimmed(start..<line.upperBound)])
                problems.append(Problem(line: number, reason: isName ? Reason.nameWithoutEquals : Reason.noEquals))
                return index + 1
            }
            // A line with an invalid name is still read to the end of its value, and then set aside: else the
            // lines of a quoted value over several lines (a key's, say) would be read as lines of their own.
            let nameRange = trimmed(start..<equals)
            let name = Statement(
                name: String(decoding: bytes[nameRange], as: UTF8.self), line: number, problem: nameProblem(nameRange))

            let valueStart = skipBlanks(from: equals + 1, to: line.upperBound)
            if valueStart < line.upperBound,
                bytes[valueStart] == Byte.singleQuote || bytes[valueStart] == Byte.doubleQuote
            {
                return quoted(name, at: index, quote: valueStart)
            }
            let valueEnd =
                (equals + 1..<line.upperBound).first {
                    bytes[$0] == Byte.hash && $0 - 1 > equals && Self.isBlank(bytes[$0 - 1])
                } ?? line.upperBound
            add(name, value: bytes[trimmed(valueStart..<max(valueStart, valueEnd))])
            return index + 1
        }

        /// Reads a quoted value whose opening quote is at `quote`, on line `index`; returns the index of the line
        /// after the one with its closing quote.
        private mutating func quoted(_ name: Statement, at index: Int, quote: Int) -> Int {
            let kind = bytes[quote]
            let isDouble = kind == Byte.doubleQuote
            var value: [UInt8] = []
            var lineIndex = index
            var position = quote + 1
            var end = lines[index].upperBound
            while true {
                while position < end {
                    let byte = bytes[position]
                    if byte == kind {
                        // After the closing quote only blanks and a comment may follow.
                        let rest = skipBlanks(from: position + 1, to: end)
                        if rest < end && bytes[rest] != Byte.hash {
                            problems.append(Problem(line: name.line, reason: name.problem ?? Reason.textAfterQuote))
                        } else {
                            add(name, value: value[...])
                        }
                        return lineIndex + 1
                    }
                    if byte == Byte.backslash, position + 1 < end {
                        let next = bytes[position + 1]
                        let escaped = isDouble ? Self.doubleQuoteEscapes[next] : (next == Byte.singleQuote ? next : nil)
                        // The escape's meaning, or the backslash and the character as they are.
                        value.append(contentsOf: escaped.map { [$0] } ?? [byte, next])
                        position += 2
                    } else {
                        value.append(byte)
                        position += 1
                    }
                }
                lineIndex += 1
                guard lineIndex < lines.count else {
                    problems.append(Problem(line: name.line, reason: name.problem ?? Reason.unclosedQuote))
                    return index + 1
                }
                value.append(Byte.newline)
                position = lines[lineIndex].lowerBound
                end = lines[lineIndex].upperBound
            }
        }

        private mutating func add(_ name: Statement, value: ArraySlice<UInt8>) {
            if let problem = name.problem ?? (value.contains(0) ? Reason.nul : nil) {
                problems.append(Problem(line: name.line, reason: problem))
                return
            }
            // Decoding replaces each invalid sequence with U+FFFD, so the bytes differ exactly when some were
            // not UTF-8 (String(validating:) needs macOS 15).
            let text = String(decoding: value, as: UTF8.self)
            guard text.utf8.elementsEqual(value) else {
                problems.append(Problem(line: name.line, reason: Reason.invalidUTF8))
                return
            }
            entries.append(Entry(name: name.name, value: text, line: name.line))
        }

        /// Why the bytes in `range`, before an equals sign, are not a name; `nil` if they are one.
        private func nameProblem(_ range: Range<Int>) -> String? {
            let name = bytes[range]
            if Self.isName(name) { return nil }
            if name.isEmpty { return Reason.emptyName }
            let quotable =
                name.count <= Reason.longestQuotedName
                && name.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "`") }
            return quotable ? Reason.invalidName(String(decoding: name, as: UTF8.self)) : Reason.unprintableName
        }

        /// `[A-Za-z_][A-Za-z0-9_.-]*`
        static func isName(_ name: ArraySlice<UInt8>) -> Bool {
            guard let first = name.first, isLetter(first) || first == UInt8(ascii: "_") else { return false }
            return name.dropFirst().allSatisfy {
                isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
            }
        }

        private static func isLetter(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        }

        /// ASCII white space but LF: space, tab, vertical tab, form feed, CR.
        static func isBlank(_ byte: UInt8) -> Bool {
            byte == 0x20 || (byte >= 0x09 && byte <= 0x0D && byte != Byte.newline)
        }

        /// Skips an `export` and the blanks after it at `start`, unless what follows is an equals sign (then
        /// `export` is the name) or nothing.
        private func afterExport(from start: Int, to end: Int) -> Int {
            let export = Array("export".utf8)
            guard end - start > export.count, bytes[start..<start + export.count].elementsEqual(export),
                Self.isBlank(bytes[start + export.count])
            else { return start }
            let next = skipBlanks(from: start + export.count, to: end)
            return next < end && bytes[next] != Byte.equals ? next : start
        }

        private func skipBlanks(from start: Int, to end: Int) -> Int {
            bytes[start..<end].firstIndex { !Self.isBlank($0) } ?? end
        }

        private func trimmed(_ range: Range<Int>) -> Range<Int> {
            let lower = skipBlanks(from: range.lowerBound, to: range.upperBound)
            return lower..<(bytes[lower..<range.upperBound].lastIndex { !Self.isBlank($0) }.map { $0 + 1 } ?? lower)
        }

        /// What follows a backslash in double quotes, and what it stands for.
        private static let doubleQuoteEscapes: [UInt8: UInt8] = [
            UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09, UInt8(ascii: "\\"): 0x5C,
            UInt8(ascii: "\""): 0x22, UInt8(ascii: "$"): 0x24, UInt8(ascii: "a"): 0x07, UInt8(ascii: "b"): 0x08,
            UInt8(ascii: "f"): 0x0C, UInt8(ascii: "v"): 0x0B,
        ]
    }

    private enum Byte {
        static let newline = UInt8(ascii: "\n")
        static let carriageReturn = UInt8(ascii: "\r")
        static let hash = UInt8(ascii: "#")
        static let equals = UInt8(ascii: "=")
        static let singleQuote = UInt8(ascii: "'")
        static let doubleQuote = UInt8(ascii: "\"")
        static let backslash = UInt8(ascii: "\\")
    }
}
