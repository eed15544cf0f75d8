import Foundation
import Testing

@testable import StorableConfig

/// Keys that Swift's `String` holds equal (canonically equivalent) but whose bytes differ: "café" with a
/// precomposed "é" (NFC) and with "e" and a combining accent (NFD). The file keeps each spelling as its own
/// member, byte for byte.
struct JSONFileKeySpellingTests {
    static let composed = "foreign.caf\u{E9}"
    static let decomposed = "foreign.cafe\u{301}"

    /// The file's member lines that hold `key` spelled exactly so, as bytes, without a final comma.
    static func lines(in url: URL, withKey key: String) throws -> [[UInt8]] {
        let quoted = Array("\"\(key)\":".utf8)
        let lines = try Data(contentsOf: url).split(separator: UInt8(ascii: "\n")).map { line in
            Array(line.last == UInt8(ascii: ",") ? line.dropLast() : line)
        }
        return lines.filter { line in line.count >= quoted.count + 2 && Array(line[2..<(2 + quoted.count)]) == quoted }
    }

    /// A file holding both spellings of one key, as a person or another program wrote it.
    static func writeBothSpellings(to url: URL, extra: String = "") throws {
        try Data(
            """
            {
              "\(composed)": "composed",
              \(extra)"\(decomposed)": "decomposed"
            }
            """.utf8
        ).write(to: url)
    }

    @Test func theParserReturnsEachSpellingOfATopLevelKeyAndTheLastOfIdenticalOnes() throws {
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        let big = "123456789012345678901234567890"
        let nested = #"{"\#(composed)": 1, "\#(decomposed)": 2}"#
        let text = """
            {"\(composed)": 1, "\(decomposed)": 2, "\(composed)": 3, "\(decomposed)": \(big), "x": \(nested)}
            """
        let parsed = try JSONText.parseObject(Data(text.utf8))
        // The dictionary holds the first spelling, with the last value given under its very bytes.
        let first = try #require(parsed.members.index(forKey: composed))
        #expect(parsed.members.keys[first].utf8.elementsEqual(composed.utf8))
        #expect(parsed.members[composed] == .int(3))
        #expect(parsed.rawMembers[composed] == nil)
        // Each later member spelled otherwise, in the order of the text, with its text where it is lossy.
        #expect(parsed.respelledMembers.map { Array($0.key.utf8) } == [Array(decomposed.utf8), Array(decomposed.utf8)])
        #expect(parsed.respelledMembers.first?.value == .int(2))
        #expect(parsed.respelledMembers.map(\.raw) == [nil, big])
        // Inside a value, the member's text is kept whole.
        #expect(parsed.rawMembers["x"] == nested)
        // A document read for another purpose (an import) merges the spellings as JSON readers do.
        guard case .dictionary(let members) = try JSONText.parse(Data(text.utf8)) else {
            Issue.record("not an object")
            return
        }
        #expect(members.count == 2)
    }

    @Test func bothSpellingsOfAForeignKeySurviveWritesOfOtherSettings() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let nested = "\"foreign.nested\": {\"caf\u{E9}\": 1, \"cafe\u{301}\": 2}"
        try Self.writeBothSpellings(to: url, extra: nested + ", ")
        do {
            let store = try JSONFileStore(url: url)
            let config = AppConfig(store: store)
            for name in ["one", "two"] {
                // The first write prints every member; the second copies the lines it does not change.
                config.userName = name
                #expect(
                    try Self.lines(in: url, withKey: Self.composed) == [
                        Array("  \"\(Self.composed)\": \"composed\"".utf8)
                    ])
                #expect(
                    try Self.lines(in: url, withKey: Self.decomposed) == [
                        Array("  \"\(Self.decomposed)\": \"decomposed\"".utf8)
                    ])
            }
            // Inside a foreign value too, as the text that was read.
            #expect(try Data(contentsOf: url).range(of: Data(nested.utf8)) != nil)
            // Another member removed, and one added: still both.
            config.reset()
            try store.setValue(.int(1), forKey: "another")
            #expect(try Self.lines(in: url, withKey: Self.composed).count == 1)
            #expect(try Self.lines(in: url, withKey: Self.decomposed).count == 1)
        }
        // A relaunch reads both members back.
        let reopened = try JSONFileStore(url: url)
        #expect(reopened.value(forKey: Self.decomposed) == .string("decomposed"))
        #expect(reopened.value(forKey: Self.composed) == .string("composed"))
    }

    @Test func eachSpellingReadsAndWritesItsOwnMember() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Self.writeBothSpellings(to: url)
        let store = try JSONFileStore(url: url)
        #expect(store.value(forKey: Self.composed) == .string("composed"))
        #expect(store.value(forKey: Self.decomposed) == .string("decomposed"))
        #expect(store.values(forKeys: [Self.decomposed])[Self.decomposed] == .string("decomposed"))
        try store.setValue(.string("changed"), forKey: Self.decomposed)
        #expect(store.value(forKey: Self.composed) == .string("composed"))
        #expect(
            try Self.lines(in: url, withKey: Self.decomposed) == [Array("  \"\(Self.decomposed)\": \"changed\"".utf8)])
        #expect(try Self.lines(in: url, withKey: Self.composed) == [Array("  \"\(Self.composed)\": \"composed\"".utf8)])
        try store.removeValue(forKey: Self.composed)
        #expect(try Self.lines(in: url, withKey: Self.composed).isEmpty)
        #expect(try Self.lines(in: url, withKey: Self.decomposed).count == 1)
    }

    @Test func aDeclaredSettingReadsTheMemberSpelledExactlyAsItsKey() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        // The decomposed spelling first in the file, so that the member with the declared bytes is not simply
        // the first one.
        try Data(
            """
            {
              "\(SpelledConfig.decomposedKey)": "decomposed",
              "\(SpelledConfig.composedKey)": "composed"
            }
            """.utf8
        ).write(to: url)
        let config = SpelledConfig(store: try JSONFileStore(url: url))
        #expect(config.$composed.key.utf8.elementsEqual(SpelledConfig.composedKey.utf8))
        #expect(config.composed == "composed")
        config.composed = "assigned"
        #expect(
            try Self.lines(in: url, withKey: SpelledConfig.composedKey) == [
                Array("  \"\(SpelledConfig.composedKey)\": \"assigned\"".utf8)
            ])
        #expect(
            try Self.lines(in: url, withKey: SpelledConfig.decomposedKey) == [
                Array("  \"\(SpelledConfig.decomposedKey)\": \"decomposed\"".utf8)
            ])
    }

    @Test func aDeclaredSettingWhoseSpellingIsMissingReadsAndWritesTheOtherOne() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        // Only the decomposed spelling, as an editor that decomposes accents would write it.
        try Data(#"{"\#(SpelledConfig.decomposedKey)": "typed by hand"}"#.utf8).write(to: url)
        let config = SpelledConfig(store: try JSONFileStore(url: url))
        #expect(config.composed == "typed by hand")
        config.composed = "assigned"
        #expect(try Self.lines(in: url, withKey: SpelledConfig.composedKey).isEmpty)
        #expect(
            try Self.lines(in: url, withKey: SpelledConfig.decomposedKey) == [
                Array("  \"\(SpelledConfig.decomposedKey)\": \"assigned\"".utf8)
            ])
    }
}

final class SpelledConfig: StorableConfig {
    static let composedKey = "spelled.caf\u{E9}"
    static let decomposedKey = "spelled.cafe\u{301}"
    @Setting(key: SpelledConfig.composedKey) var composed = ""
}
