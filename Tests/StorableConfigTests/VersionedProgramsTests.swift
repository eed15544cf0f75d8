import Foundation
import Testing

/// Two executables built from two versions of one type (Tests/Programs/window-v1 and window-v2) take turns on
/// one JSON file: an upgrade fills the fields version 1 did not have, a downgrade that writes keeps them.
/// (EtcdVersionedProgramsTests does the same on one etcd prefix.)
@Suite struct VersionedProgramsTests {
    @Test func anOlderAndANewerProgramOnOneJSONFileLoseNothingOfEachOther() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("settings.json").path
        func run(_ program: String, _ change: String...) throws -> String {
            let result = try runProduct(program, [file] + change, timeout: 60)
            #expect(result.status == 0, "\(program) \(change): \(result.errorOutput)")
            // Nothing is reported: a missing field is filled silently, an unknown one ignored.
            #expect(result.errorOutput.isEmpty, "\(program) \(change)")
            return result.output
        }
        #expect(try run("window-v1", "width", "1024") == #"{"title":{"text":"untitled"},"width":1024}"# + "\n")
        // The upgrade reads version 1's width and fills what version 2 added.
        #expect(
            try run("window-v2") == #"{"isFullScreen":false,"title":{"isBold":false,"text":"untitled"},"width":1024}"#
                + "\n")
        _ = try run("window-v2", "fullscreen", "true")
        _ = try run("window-v2", "bold", "true")
        // The downgrade writes the width, and keeps what it does not know, nested too.
        #expect(try run("window-v1", "width", "640") == #"{"title":{"text":"untitled"},"width":640}"# + "\n")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains(#""isFullScreen": true"#) || text.contains(#""isFullScreen":true"#), "\(text)")
        #expect(
            try run("window-v2") == #"{"isFullScreen":true,"title":{"isBold":true,"text":"untitled"},"width":640}"#
                + "\n")
    }
}
