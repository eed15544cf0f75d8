import Foundation
import Testing

@testable import StorableConfig

/// `.env` files as Docker Compose's `env_file` reads them: each rule of ``DotEnvFile``'s syntax, with the
/// exact entries and problems, and hostile input.
struct DotEnvFileTests {
    typealias Entry = DotEnvFile.Entry
    typealias Problem = DotEnvFile.Problem
    typealias Reason = DotEnvFile.Reason

    static func parse(_ text: String) -> DotEnvFile {
        DotEnvFile(parsing: Data(text.utf8))
    }

    /// The entries of `text`, which must have no problem.
    static func entries(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [Entry] {
        let file = parse(text)
        #expect(file.problems == [], sourceLocation: sourceLocation)
        return file.entries
    }

    /// The value of the one entry of `text`, which must have no problem.
    static func value(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let found = entries(text, sourceLocation: sourceLocation)
        #expect(found.count == 1, sourceLocation: sourceLocation)
        return found.first?.value
    }

    // MARK: - Comments, blank lines, export

    @Test func commentsAndBlankLinesAreIgnored() {
        let text = "# a comment\n\n   \n\t# indented comment\nA=1\n#B=2\n  \t\nC=3"
        #expect(Self.entries(text) == [Entry(name: "A", value: "1", line: 5), Entry(name: "C", value: "3", line: 8)])
    }

    @Test func anEmptyFileSetsNothing() {
        for text in ["", "\n", "\n\n\n", "# only\n# comments", "\u{FEFF}"] {
            let file = Self.parse(text)
            #expect(file.entries == [] && file.problems == [], "\(text.debugDescription)")
        }
    }

    @Test func exportBeforeTheNameIsSkipped() {
        #expect(
            Self.entries("export A=1\nexport\tB=2\n  export   C = 3") == [
                Entry(name: "A", value: "1", line: 1), Entry(name: "B", value: "2", line: 2),
                Entry(name: "C", value: "3", line: 3),
            ])
    }

    @Test func exportAloneBeforeTheEqualsSignIsTheName() {
        #expect(
            Self.entries("export=1\nexport = 2\nexporter=3\nexport.x=4") == [
                Entry(name: "export", value: "1", line: 1), Entry(name: "export", value: "2", line: 2),
                Entry(name: "exporter", value: "3", line: 3), Entry(name: "export.x", value: "4", line: 4),
            ])
    }

    // MARK: - Names

    @Test(arguments: ["A", "a", "_", "_A1", "DB_HOST", "spring.datasource.url", "my-var", "A.b-c_9", "x1.2-3"])
    func validNames(name: String) {
        #expect(Self.entries("\(name)=v") == [Entry(name: name, value: "v", line: 1)])
    }

    @Test(arguments: ["1X", "9", ".hidden", "-dash", "A$", "A:B", "A[0]", "\"A\"", "'A'", "A/B", "A\\B"])
    func invalidNamesAreQuoted(name: String) {
        let file = Self.parse("\(name)=secret value")
        #expect(file.entries == [])
        #expect(file.problems == [Problem(line: 1, reason: "the name `\(name)` is not a valid variable name")])
    }

    @Test func theExampleReasonOfTheIssue() {
        #expect(Self.parse("1X=1").problems[0].reason == "the name `1X` is not a valid variable name")
    }

    @Test func namesThatCannotBeQuotedAreDescribed() {
        let long = String(repeating: "x", count: 65) + "!"
        for text in ["MY VAR=1", "é=1", "A\u{1}=1", "A`B=1", "\(long)=1", "ÄÖ=1", "🎌=1", "נ=1"] {
            #expect(
                Self.parse(text).problems == [Problem(line: 1, reason: Reason.unprintableName)],
                "\(text.debugDescription)")
        }
    }

    @Test func namesAreQuotedUpToThirtyTwoCharacters() {
        let longest = "1" + String(repeating: "x", count: 31)
        #expect(Self.parse("\(longest)=v").problems == [Problem(line: 1, reason: Reason.invalidName(longest))])
        #expect(Self.parse("\(longest)x=v").problems == [Problem(line: 1, reason: Reason.unprintableName)])
    }

    @Test func anInvalidNameTakesItsQuotedValueWithIt() {
        // Else the lines of the key would be read as lines of their own, and quoted in problems as names.
        let text = "1X=\"-----BEGIN KEY-----\nMIIBabc/def+ghi==\nA=b\n-----END KEY-----\"\nNEXT=1\n2Y='open"
        let file = Self.parse(text)
        #expect(file.entries == [Entry(name: "NEXT", value: "1", line: 5)])
        #expect(
            file.problems == [
                Problem(line: 1, reason: Reason.invalidName("1X")), Problem(line: 6, reason: Reason.invalidName("2Y")),
            ])
        #expect(Self.parse("1X=\"a\" b").problems == [Problem(line: 1, reason: Reason.invalidName("1X"))])
    }

    @Test func anEmptyNameIsAProblem() {
        #expect(
            Self.parse("=value\n  = value").problems == [
                Problem(line: 1, reason: Reason.emptyName), Problem(line: 2, reason: Reason.emptyName),
            ])
    }

    @Test func blanksAroundTheNameAndTheEqualsSignAreAllowed() {
        #expect(
            Self.entries("  A  =  1  \n\tB\t=\t2\t") == [
                Entry(name: "A", value: "1", line: 1), Entry(name: "B", value: "2", line: 2),
            ])
    }

    // MARK: - Lines without an equals sign

    @Test func aNameWithoutAnEqualsSignIsAProblem() {
        // Compose takes its value from the environment; a file source has none to take it from.
        let file = Self.parse("NAME\nexport OTHER\nA=1")
        #expect(file.entries == [Entry(name: "A", value: "1", line: 3)])
        #expect(
            file.problems == [
                Problem(line: 1, reason: Reason.nameWithoutEquals), Problem(line: 2, reason: Reason.nameWithoutEquals),
            ])
    }

    @Test func aLineOfOtherTextWithoutAnEqualsSignIsAProblem() {
        let file = Self.parse("this is not an assignment\nexport\nA: 1")
        #expect(
            file.problems == [
                Problem(line: 1, reason: Reason.noEquals), Problem(line: 2, reason: Reason.nameWithoutEquals),
                Problem(line: 3, reason: Reason.noEquals),
            ])
    }

    // MARK: - Unquoted values

    @Test func unquotedValuesAreTrimmed() {
        #expect(Self.value("A=   spaced out   ") == "spaced out")
        #expect(Self.value("A=\t tabbed \t") == "tabbed")
        #expect(Self.value("A=") == "")
        #expect(Self.value("A=   ") == "")
        #expect(Self.value("A=inner   spaces  kept") == "inner   spaces  kept")
    }

    @Test func aHashAfterABlankStartsAComment() {
        #expect(Self.value("VAR=VAL # comment") == "VAL")
        #expect(Self.value("VAR=VAL\t# comment") == "VAL")
        #expect(Self.value("VAR=VAL# not a comment") == "VAL# not a comment")
        #expect(Self.value("VAR=#not a comment") == "#not a comment")
        #expect(Self.value("VAR= # only a comment") == "")
        #expect(Self.value("URL=http://example.com/#anchor # the page") == "http://example.com/#anchor")
        #expect(Self.value("VAR=a#b #c #d") == "a#b")
    }

    @Test func unquotedValuesAreLiteral() {
        #expect(Self.value(#"VAR=some\tvalue"#) == #"some\tvalue"#)
        #expect(Self.value(#"VAR=C:\path\"#) == #"C:\path\"#)
        #expect(Self.value(#"VAR=a"b'c"#) == #"a"b'c"#)
        #expect(Self.value("VAR=a=b=c") == "a=b=c")
        #expect(Self.value("VAR=dGVzdA==") == "dGVzdA==")
    }

    @Test func dollarSignsAreLiteral() {
        // No interpolation: not in unquoted values, not in double quotes, not in single quotes.
        #expect(Self.value("A=${HOME}/x $USER") == "${HOME}/x $USER")
        #expect(Self.value("A=\"${HOME} $USER ${A:-default}\"") == "${HOME} $USER ${A:-default}")
        #expect(Self.value("A='$OTHER'") == "$OTHER")
        #expect(Self.value("A='${OTHER}'") == "${OTHER}")
        #expect(Self.value(#"A="\$HOME""#) == "$HOME")
        #expect(Self.value("A=$$") == "$$")
    }

    // MARK: - Single quotes

    @Test func singleQuotedValuesAreLiteral() {
        #expect(Self.value("VAR='VAL'") == "VAL")
        #expect(Self.value(#"VAR='some\tvalue'"#) == #"some\tvalue"#)
        #expect(Self.value("VAR='  kept  '") == "  kept  ")
        #expect(Self.value("VAR='a # not a comment'") == "a # not a comment")
        #expect(Self.value(#"VAR='say "hi"'"#) == #"say "hi""#)
        #expect(Self.value("VAR=''") == "")
        #expect(Self.value(#"VAR='a\\b'"#) == #"a\\b"#)
    }

    @Test func aBackslashEscapesASingleQuote() {
        // As Compose documents: VAR='Let\'s go!' -> Let's go!
        #expect(Self.value(#"VAR='Let\'s go!'"#) == "Let's go!")
    }

    // MARK: - Double quotes

    @Test func doubleQuotedValuesTakeEscapes() {
        #expect(Self.value(#"VAR="VAL""#) == "VAL")
        #expect(Self.value(#"VAR="some\tvalue""#) == "some\tvalue")
        #expect(Self.value(#"VAR="a\nb\rc""#) == "a\nb\rc")
        #expect(Self.value(#"VAR="back\\slash""#) == #"back\slash"#)
        #expect(Self.value(#"VAR="{\"hello\": \"json\"}""#) == #"{"hello": "json"}"#)
        #expect(Self.value(#"VAR="\a\b\f\v""#) == "\u{7}\u{8}\u{C}\u{B}")
        #expect(Self.value(#"VAR="\$""#) == "$")
    }

    @Test func otherBackslashesInDoubleQuotesStay() {
        #expect(Self.value(#"VAR="\q\'\0123\u00e9\x41""#) == #"\q\'\0123\u00e9\x41"#)
        #expect(Self.value(#"VAR="\é""#) == #"\é"#)
    }

    @Test func doubleQuotedValuesKeepBlanksAndHashes() {
        #expect(Self.value(#"VAR="VAL # not a comment""#) == "VAL # not a comment")
        #expect(Self.value(#"VAR="  padded  ""#) == "  padded  ")
        #expect(Self.value(#"VAR="""#) == "")
    }

    @Test func aCommentMayFollowTheClosingQuote() {
        #expect(Self.value(#"VAR="VAL" # comment"#) == "VAL")
        #expect(Self.value(#"VAR='VAL'   # comment"#) == "VAL")
        #expect(Self.value(##"VAR="VAL"# comment"##) == "VAL")
        #expect(Self.value("VAR=\"VAL\" \t ") == "VAL")
        #expect(Self.value("VAR=   \"VAL\"") == "VAL")
    }

    @Test func textAfterTheClosingQuoteIsAProblem() {
        let file = Self.parse("A=\"secret\" more\nB='x'y\nC=\"a\"\"b\"\nD=ok")
        #expect(file.entries == [Entry(name: "D", value: "ok", line: 4)])
        #expect(file.problems == [1, 2, 3].map { Problem(line: $0, reason: Reason.textAfterQuote) })
    }

    // MARK: - Quoted values over several lines

    @Test func quotedValuesMayGoOnOverSeveralLines() {
        let text = """
            KEY="-----BEGIN KEY-----
            abc
            -----END KEY-----" # the key
            NEXT='one
            # not a comment
            two'
            LAST=1
            """
        #expect(
            Self.entries(text) == [
                Entry(name: "KEY", value: "-----BEGIN KEY-----\nabc\n-----END KEY-----", line: 1),
                Entry(name: "NEXT", value: "one\n# not a comment\ntwo", line: 4),
                Entry(name: "LAST", value: "1", line: 7),
            ])
    }

    @Test func aQuoteNeverClosedIsAProblemAndTheNextLinesAreStillRead() {
        let file = Self.parse("A=\"secret\nB=2\nC='also secret\nD=4\n")
        #expect(file.entries == [Entry(name: "B", value: "2", line: 2), Entry(name: "D", value: "4", line: 4)])
        #expect(
            file.problems == [
                Problem(line: 1, reason: "the quote opened on this line is never closed"),
                Problem(line: 3, reason: Reason.unclosedQuote),
            ])
    }

    @Test func anEscapedQuoteDoesNotCloseTheValue() {
        let file = Self.parse(#"A="ends with \""# + "\nB=1")
        #expect(file.problems == [Problem(line: 1, reason: Reason.unclosedQuote)])
        #expect(file.entries == [Entry(name: "B", value: "1", line: 2)])
        // In single quotes too: a single-quoted value cannot end in a backslash, as in Compose.
        #expect(Self.parse(#"A='C:\'"#).problems == [Problem(line: 1, reason: Reason.unclosedQuote)])
    }

    @Test func aQuoteThatClosesOnALaterLineTakesTheLinesBetween() {
        // As in Compose: a stray quote takes what follows up to the next quote of its kind.
        let file = Self.parse("A=\"one\nB=\"two\"\nC=3")
        #expect(file.entries == [Entry(name: "C", value: "3", line: 3)])
        #expect(file.problems == [Problem(line: 1, reason: Reason.textAfterQuote)])
        #expect(
            Self.entries("A=\"one\nB=\" # closed\nC=3") == [
                Entry(name: "A", value: "one\nB=", line: 1), Entry(name: "C", value: "3", line: 3),
            ])
    }

    // MARK: - Duplicates

    @Test func theLastOfDuplicateNamesWins() {
        let file = Self.parse("A=1\nB=x\nA=2\nA=3 # last")
        #expect(file.entries.map(\.value) == ["1", "x", "2", "3"])
        #expect(
            file.values == ["A": Entry(name: "A", value: "3", line: 4), "B": Entry(name: "B", value: "x", line: 2)])
    }

    @Test func namesDifferInCase() {
        #expect(Self.parse("a=1\nA=2").values.count == 2)
    }

    // MARK: - Problems

    @Test func problemsNeverQuoteAValue() {
        let secret = "hunter2-SECRET"
        let text = [
            "1X=\(secret)", "B=\"\(secret)\" \(secret)", "C=\(secret)\u{0}", "\(secret)", "MY VAR=\(secret)",
            "=\(secret)", "D='\(secret)", "A=\"\(secret)",
        ].joined(separator: "\n")
        let file = Self.parse(text)
        #expect(file.entries == [])
        #expect(file.problems.count == 8)
        for problem in file.problems {
            #expect(!problem.reason.contains("hunter2"), "\(problem)")
        }
    }

    @Test func everyProblemHasItsLineAndTheRestIsUsed() {
        let text = "A=1\n1X=2\nB=2\nNAME\nC=\"open\nD=4"
        let file = Self.parse(text)
        #expect(
            file.entries == [
                Entry(name: "A", value: "1", line: 1), Entry(name: "B", value: "2", line: 3),
                Entry(name: "D", value: "4", line: 6),
            ])
        #expect(file.problems.map(\.line) == [2, 4, 5])
    }

    // MARK: - Encodings and line ends

    @Test func crlfLineEndsAreRead() {
        let text = "# comment\r\nA=1\r\nB = \"two\r\nlines\" \r\nC='x'\r\nD=unquoted \r\n\r\nE=\"\\r\"\r\n"
        #expect(
            Self.entries(text) == [
                Entry(name: "A", value: "1", line: 2), Entry(name: "B", value: "two\nlines", line: 3),
                Entry(name: "C", value: "x", line: 5), Entry(name: "D", value: "unquoted", line: 6),
                Entry(name: "E", value: "\r", line: 8),
            ])
    }

    @Test func aByteOrderMarkAtTheStartIsSkipped() {
        let data = Data([0xEF, 0xBB, 0xBF] + Array("A=1\nB=2".utf8))
        #expect(
            DotEnvFile(parsing: data).entries == [
                Entry(name: "A", value: "1", line: 1), Entry(name: "B", value: "2", line: 2),
            ])
        // Anywhere else it is text: a second one makes the first name invalid.
        let twice = DotEnvFile(parsing: Data([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("A=1".utf8)))
        #expect(twice.problems == [Problem(line: 1, reason: Reason.unprintableName)])
        #expect(Self.value("A=\u{FEFF}x") == "\u{FEFF}x")
    }

    @Test func invalidUTF8InAValueIsAProblem() {
        let data = Data(Array("A=ok\nB=".utf8) + [0xFF, 0xFE] + Array("\nC=\"".utf8) + [0xC3] + Array("\"\nD=4".utf8))
        let file = DotEnvFile(parsing: data)
        #expect(file.entries == [Entry(name: "A", value: "ok", line: 1), Entry(name: "D", value: "4", line: 4)])
        #expect(
            file.problems == [
                Problem(line: 2, reason: Reason.invalidUTF8), Problem(line: 3, reason: Reason.invalidUTF8),
            ])
    }

    @Test func invalidUTF8InACommentOrAfterAValueIsIgnored() {
        let data = Data(
            Array("# ".utf8) + [0xFF] + Array("\nA=1 # ".utf8) + [0xFE] + Array("\nB=\"2\" #".utf8) + [0x80])
        #expect(
            DotEnvFile(parsing: data).entries == [
                Entry(name: "A", value: "1", line: 2), Entry(name: "B", value: "2", line: 3),
            ])
    }

    @Test func nulBytesInAValueAreAProblem() {
        let data = Data(Array("A=x".utf8) + [0] + Array("y\nB=\"".utf8) + [0] + Array("\"\nC=3\n#".utf8) + [0])
        let file = DotEnvFile(parsing: data)
        #expect(file.entries == [Entry(name: "C", value: "3", line: 3)])
        #expect(file.problems == [Problem(line: 1, reason: Reason.nul), Problem(line: 2, reason: Reason.nul)])
        #expect(
            DotEnvFile(parsing: Data([0x41, 0, 0x3D, 0x31])).problems == [
                Problem(line: 1, reason: Reason.unprintableName)
            ])
    }

    @Test func oddUnicodeInValuesIsKeptByteForByte() {
        let values = [
            "🎌 flag", "👩‍👩‍👧 family", "שלום עולם", "مرحبا", "\u{202E}reversed\u{202C}", "e\u{301}\u{301}\u{301}",
            "\u{301}starts with a mark", "zero\u{200B}width", "\u{10FFFF}", "日本語の値",
        ]
        for value in values {
            for text in ["A=\(value)", "A=\"\(value)\"", "A='\(value)'"] {
                let found = Self.entries(text)
                #expect(found.count == 1 && found[0].value.utf8.elementsEqual(value.utf8), "\(text.debugDescription)")
            }
        }
        // A combining mark right after the equals sign or after the closing quote does not join them.
        #expect(Self.value("A=\u{301}x") == "\u{301}x")
        #expect(Self.parse("A=\"x\"\u{301}").problems == [Problem(line: 1, reason: Reason.textAfterQuote)])
    }

    // MARK: - Size

    @Test func aLineOfAMegabyteIsRead() {
        let long = String(repeating: "abcdefgh", count: 131_072)
        #expect(Self.value("A=\(long)") == long)
        #expect(Self.value("A=\"\(long)\"") == long)
        let unclosed = Self.parse("A=\"\(long)\nB=1")
        #expect(unclosed.problems == [Problem(line: 1, reason: Reason.unclosedQuote)])
        #expect(unclosed.entries == [Entry(name: "B", value: "1", line: 2)])
        let name = String(repeating: "N", count: 1 << 20)
        #expect(Self.entries("\(name)=1").first?.name.utf8.count == 1 << 20)
    }

    @Test func aHundredThousandLinesAreRead() {
        let text = (0..<100_000).map { "NAME_\($0)=\"value \($0)\" # comment" }.joined(separator: "\n")
        let file = Self.parse(text)
        #expect(file.problems == [])
        #expect(file.entries.count == 100_000)
        #expect(file.entries.last == Entry(name: "NAME_99999", value: "value 99999", line: 100_000))
        #expect(file.values.count == 100_000)
    }

    @Test func manyLinesThatEachOpenAQuoteAreRead() {
        // Each quote closes at the next line's: one problem for every two lines.
        let paired = Self.parse(String(repeating: "A=\"x\n", count: 100_000))
        #expect(paired.entries == [])
        #expect(paired.problems.count == 50_000)
        #expect(paired.problems.last == Problem(line: 99_999, reason: Reason.textAfterQuote))
        // A quote never closed is looked for to the end of the file once, not again for each line after it.
        let unclosed = Self.parse("A=\"x\nB='y\n" + String(repeating: "C=z\n", count: 100_000))
        #expect(
            unclosed.problems == [
                Problem(line: 1, reason: Reason.unclosedQuote), Problem(line: 2, reason: Reason.unclosedQuote),
            ])
        #expect(unclosed.entries.count == 100_000)
    }

    @Test func manyEscapedQuotesAreRead() {
        let text =
            "A=\"" + String(repeating: #"\""#, count: 200_000) + "\"\nB=" + String(repeating: "\\", count: 100_001)
        let file = Self.parse(text)
        #expect(file.problems == [])
        #expect(file.entries.first?.value == String(repeating: "\"", count: 200_000))
        #expect(file.entries.last?.value.utf8.count == 100_001)
    }

    // MARK: - The fuzz check's writer

    @Test func valuesWrittenQuotedReadBack() {
        let values = [
            "", "plain", " padded ", "quote\" backslash\\ $HOME", "a\nb\r\nc\r", "# hash", "'", "\t\u{B}\u{C}",
        ]
        let text = values.enumerated().map { DotEnvFuzzCheck.quotedLine(name: "V\($0.offset)", value: $0.element) }
            .joined(separator: "\n")
        #expect(Self.entries(text).map(\.value) == values)
    }
}
