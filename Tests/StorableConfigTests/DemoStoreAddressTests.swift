import Foundation
import StorableConfig
import Testing

/// What `--store` takes: a file path (colons and all, `~` from `$HOME`), `file:///…`, `etcd://…`; any other
/// `scheme://` is refused before anything is created.
struct DemoStoreAddressTests {
    @Test(arguments: ["http://127.0.0.1:1/fleet/", "redis://x", "postgres://h/db", "HTTPS://example.com/x.json"])
    func anAddressOfAnotherSchemeIsAUsageErrorThatCreatesNothing(address: String) throws {
        let home = DemoHome()
        let result = try home.run(["--store", address, "set", "twitter.userName", "x"], input: Data())
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        let scheme = address.prefix { $0 != ":" }
        #expect(result.errorOutput.contains("does not serve \(scheme):// addresses"), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("a file path"))
        #expect(result.errorOutput.contains("file:///path.json"))
        #expect(result.errorOutput.contains("etcd://host:port"))
        #expect(try home.contents().isEmpty)
    }

    @Test func aFilePathWithAColonIsStillAFile() throws {
        let home = DemoHome()
        let result = try home.run(["--store", "./a:b.json", "set", "twitter.userName", "x"], input: Data())
        #expect(result.status == 0, "\(result.errorOutput)")
        let file = home.directory.file("a:b.json")
        #expect(try jsonObject(at: file)["storable-config-demo.TwitterConfig.userName"] as? String == "x")
    }

    @Test func aFileURLNamesTheFileItsPathNames() throws {
        let home = DemoHome()
        let file = home.directory.file("url settings.json")
        let url = "file://" + file.path.replacingOccurrences(of: " ", with: "%20")
        #expect(try home.run("--store", url, "set", "twitter.userName", "x").status == 0)
        #expect(try jsonObject(at: file)["storable-config-demo.TwitterConfig.userName"] as? String == "x")
        let elsewhere = try home.run("--store", "file://example.com/x.json", "list")
        #expect(elsewhere.status == 2)
        #expect(elsewhere.errorOutput.contains("this machine's files only"))
    }

    @Test func aLeadingTildeIsTheHomeThatHOMENames() throws {
        let home = DemoHome()
        let name = "tilde-demo-\(UUID().uuidString).json"
        // Where the demo wrote before: the home directory of the user database, whatever HOME says.
        defer {
            for leftover in [name, name + ".lock"] {
                try? FileManager.default.removeItem(atPath: NSHomeDirectory() + "/" + leftover)
            }
        }
        // A literal ~ (quoted in a shell): the HOME of the run.
        let result = try home.run("--store", "~/" + name, "set", "twitter.userName", "x")
        #expect(result.status == 0, "\(result.errorOutput)")
        let file = home.directory.file(name)
        #expect(try jsonObject(at: file)["storable-config-demo.TwitterConfig.userName"] as? String == "x")
        let someoneElses = try home.run("--store", "~nobody/x.json", "list")
        #expect(someoneElses.status == 2)
        #expect(someoneElses.errorOutput.contains("only ~ and ~/ are expanded"))
    }
}
