import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A settings file that is a symbolic link, as dotfile managers and mounted configuration make it: every write
/// goes through to the file the link leads to, and the link stays a link.
@Suite(.timeLimit(.minutes(5)))
struct JSONFileLinkTests {
    /// `real/target.json` and the directory `conf/` for the link, in a fresh temporary directory.
    final class Layout {
        let directory = TemporaryDirectory()
        var real: URL { directory.file("real") }
        var conf: URL { directory.file("conf") }
        var target: URL { real.appendingPathComponent("target.json") }
        var link: URL { conf.appendingPathComponent("settings.json") }

        init() throws {
            for folder in [real, conf] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
        }

        /// Makes `link` a symbolic link whose text is `destination`.
        func makeLink(_ link: URL, to destination: String) throws {
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: destination)
        }

        /// The names in `folder`, sorted.
        func names(in folder: URL) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        }
    }

    /// The text of the link at `url`, or `nil` if it is not a symbolic link.
    static func linkText(_ url: URL) -> String? {
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
        return try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)
    }

    @Test func aWriteGoesThroughALinkToAFileInAnotherDirectoryAndTheLinkStays() throws {
        let layout = try Layout()
        try Data(#"{"theirs": 1}"#.utf8).write(to: layout.target)
        try layout.makeLink(layout.link, to: layout.target.path)
        let store = try JSONFileStore(url: layout.link)
        #expect(store.value(forKey: "theirs") == .int(1))
        try store.setValue(.string("first"), forKey: "mine")
        try store.setValue(.string("second"), forKey: "mine")
        #expect(Self.linkText(layout.link) == layout.target.path)
        let object = try jsonObject(at: layout.target)
        #expect(object["mine"] as? String == "second")
        #expect(object["theirs"] as? Int == 1)
        // A second store over the target's own path reads what went through the link, and its writes are seen
        // through the link: both lock the one side file beside the target.
        let direct = try JSONFileStore(url: layout.target)
        #expect(direct.value(forKey: "mine") == .string("second"))
        try direct.setValue(.int(2), forKey: "theirs")
        try store.reload()
        #expect(store.value(forKey: "theirs") == .int(2))
        #expect(try layout.names(in: layout.conf) == ["settings.json"])
        #expect(try layout.names(in: layout.real) == ["target.json", "target.json.lock"])
    }

    @Test func aRelativeLinkResolvesAgainstTheLinksDirectory() throws {
        let layout = try Layout()
        try layout.makeLink(layout.link, to: "../real/target.json")
        // Opened from another working directory, the link's text still means conf/../real/target.json.
        let store = try JSONFileStore(url: layout.link)
        try store.setValue(.bool(true), forKey: "k")
        #expect(Self.linkText(layout.link) == "../real/target.json")
        #expect(try jsonObject(at: layout.target)["k"] as? Bool == true)
        #expect(try layout.names(in: layout.conf) == ["settings.json"])
    }

    @Test func aChainOfLinksIsFollowedToItsEnd() throws {
        let layout = try Layout()
        let middle = layout.directory.file("middle.json")
        try Data(#"{"k": 0}"#.utf8).write(to: layout.target)
        try layout.makeLink(middle, to: "real/target.json")
        try layout.makeLink(layout.link, to: "../middle.json")
        let store = try JSONFileStore(url: layout.link)
        #expect(store.value(forKey: "k") == .int(0))
        try store.setValue(.int(1), forKey: "k")
        #expect(Self.linkText(layout.link) == "../middle.json")
        #expect(Self.linkText(middle) == "real/target.json")
        #expect(try jsonObject(at: layout.target)["k"] as? Int == 1)
    }

    @Test func aLoopOfLinksIsAClearErrorNamingThePath() throws {
        let layout = try Layout()
        let other = layout.conf.appendingPathComponent("other.json")
        try layout.makeLink(layout.link, to: "other.json")
        try layout.makeLink(other, to: "settings.json")
        #expect {
            _ = try JSONFileStore(url: layout.link)
        } throws: { error in
            "\(error)".contains(layout.link.path)
        }
        #expect(Self.linkText(layout.link) == "other.json")
    }

    @Test func aDanglingLinkIsAnsweredByCreatingItsTarget() throws {
        let layout = try Layout()
        try layout.makeLink(layout.link, to: "../real/target.json")
        let store = try JSONFileStore(url: layout.link)
        #expect(store.allValues.isEmpty)
        try store.setValue(.string("created"), forKey: "k")
        #expect(Self.linkText(layout.link) == "../real/target.json")
        #expect(try jsonObject(at: layout.target)["k"] as? String == "created")
        let permissions = try FileManager.default.attributesOfItem(atPath: layout.target.path)[.posixPermissions]
        #expect(permissions as? Int == 0o600)
    }

    @Test func aDanglingLinkIntoAMissingDirectoryIsRefusedNamingBothPaths() throws {
        let layout = try Layout()
        let missing = layout.directory.file("unmounted").appendingPathComponent("target.json")
        try layout.makeLink(layout.link, to: missing.path)
        let store = try JSONFileStore(url: layout.link)
        #expect {
            try store.setValue(.int(1), forKey: "k")
        } throws: { error in
            let text = "\(error)"
            return text.contains(layout.link.path) && text.contains(missing.path)
        }
        // Nothing was created along the link: a volume that is not mounted yet stays as it is.
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))
        #expect(Self.linkText(layout.link) == missing.path)
        #expect(store.value(forKey: "k") == .int(1))
    }

    @Test func eachWriteFollowsTheLinkAsItIsThen() throws {
        let layout = try Layout()
        let other = layout.real.appendingPathComponent("other.json")
        try layout.makeLink(layout.link, to: "../real/target.json")
        let store = try JSONFileStore(url: layout.link)
        try store.setValue(.int(1), forKey: "k")
        // A dotfile manager points the link elsewhere.
        try FileManager.default.removeItem(at: layout.link)
        try layout.makeLink(layout.link, to: "../real/other.json")
        try store.setValue(.int(2), forKey: "k")
        #expect(try jsonObject(at: layout.target)["k"] as? Int == 1)
        #expect(try jsonObject(at: other)["k"] as? Int == 2)
        #expect(Self.linkText(layout.link) == "../real/other.json")
    }

    @Test func aCorruptTargetIsMovedAsideBesideTheTargetAndTheLinkStays() throws {
        ReportedErrors.install()
        let layout = try Layout()
        let bytes = Data("{ torn".utf8)
        try bytes.write(to: layout.target)
        try layout.makeLink(layout.link, to: "../real/target.json")
        let store = try JSONFileStore(url: layout.link)
        #expect(store.allValues.isEmpty)
        #expect(Self.linkText(layout.link) == "../real/target.json")
        let quarantined = try #require(try layout.names(in: layout.real).first { $0.hasPrefix("target.json.corrupt-") })
        #expect(try Data(contentsOf: layout.real.appendingPathComponent(quarantined)) == bytes)
        #expect(ReportedErrors.mentioning(layout.link.path).contains { $0.description.contains(quarantined) })
        try store.setValue(.int(1), forKey: "k")
        #expect(Self.linkText(layout.link) == "../real/target.json")
        #expect(try jsonObject(at: layout.target)["k"] as? Int == 1)
    }

    @Test(arguments: [false, true])
    func aWatchedLinkSeesAChangeMadeThroughItsTarget(polling: Bool) async throws {
        let layout = try Layout()
        let middle = layout.directory.file("middle.json")
        try layout.makeLink(middle, to: "real/target.json")
        try layout.makeLink(layout.link, to: "../middle.json")
        let store = try JSONFileStore(url: layout.link)
        let file = try #require(store.storageIdentity as? JSONFile)
        try file.startWatching(forcePolling: polling, pollingInterval: 0.05)
        defer { store.stopWatching() }
        let config = AppConfig(store: store)
        config.userName = "through the link"
        // Another program replaces the target by renaming over it, in the target's own directory.
        let key = config.$userName.key
        try Data(#"{"\#(key)": "edited at the target"}"#.utf8).write(to: layout.target, options: .atomic)
        #expect(await waitUntil { config.userName == "edited at the target" })
        // And the link pointed at another file is seen too.
        let other = layout.real.appendingPathComponent("other.json")
        try Data(#"{"\#(key)": "another target"}"#.utf8).write(to: other)
        let newLink = layout.directory.file("middle.json.new")
        try layout.makeLink(newLink, to: "real/other.json")
        #expect(rename(newLink.path, middle.path) == 0)
        #expect(await waitUntil { config.userName == "another target" })
        try Data(#"{"\#(key)": "edited at the other target"}"#.utf8).write(to: other, options: .atomic)
        #expect(await waitUntil { config.userName == "edited at the other target" })
    }
}

extension JSONFileLinkTests {
    /// A Kubernetes ConfigMap volume: `settings.json -> ..data/settings.json`, `..data -> ..<timestamp>`; an
    /// update writes a new timestamped directory and renames a new `..data` link over the old one.
    @Test(arguments: [false, true])
    func aWatchedLinkSeesTheDirectoryOnItsWaySwapped(polling: Bool) async throws {
        let layout = try Layout()
        let volume = layout.conf
        let key = "com.example.app.AppConfig.userName"
        func writeVersion(_ name: String, userName: String) throws {
            let folder = volume.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(#"{"\#(key)": "\#(userName)"}"#.utf8).write(to: folder.appendingPathComponent("settings.json"))
        }
        try writeVersion("..2026_11_25_01", userName: "first version")
        try layout.makeLink(volume.appendingPathComponent("..data"), to: "..2026_11_25_01")
        try layout.makeLink(layout.link, to: "..data/settings.json")
        let store = try JSONFileStore(url: layout.link)
        let file = try #require(store.storageIdentity as? JSONFile)
        try file.startWatching(forcePolling: polling, pollingInterval: 0.05)
        defer { store.stopWatching() }
        let config = AppConfig(store: store)
        #expect(config.userName == "first version")
        try writeVersion("..2026_11_25_02", userName: "second version")
        try layout.makeLink(volume.appendingPathComponent("..data_tmp"), to: "..2026_11_25_02")
        #expect(
            rename(volume.appendingPathComponent("..data_tmp").path, volume.appendingPathComponent("..data").path) == 0)
        #expect(await waitUntil { config.userName == "second version" })
    }
}
