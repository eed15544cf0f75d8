import Foundation
import StorableConfig
import Testing

/// What the demo prints for unusual text, and what it leaves on disk when it has nothing to write.
struct DemoDisplayTests {
    static let userNameKey = "storable-config-demo.AppConfig.userName"

    @Test func controlCharactersAreShownEscapedAndReadBackBySet() throws {
        let home = DemoHome()
        let text = "line one\nline two\u{1B}[31mred\u{7}\u{9B}"
        let set = try home.run("set", "app.userName", text)
        #expect(set.status == 0)
        let escaped = #""line one\nline two\u001b[31mred\u0007\u009b""#
        #expect(set.output == "app.userName = \(escaped)\n")
        let get = try home.run("get", "app.userName")
        #expect(get.output == escaped + "\n")
        let list = try home.run("list").output
        #expect(list.split(separator: "\n").count == 15)
        #expect(list.contains(escaped))
        #expect(!list.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(!list.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) })
        // --json is JSON, which escapes them itself, and holds the text exactly.
        let json = try home.run("list", "--json").output
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["app.userName"] as? String == text)
        // What get prints, set reads back as the same text.
        #expect(try home.run("set", "app.userName", escaped).status == 0)
        #expect(try home.settings()[Self.userNameKey] as? String == text)
    }

    @Test func anOptionalHoldingTheTextNullIsNotShownAsNoValue() throws {
        let home = DemoHome()
        let set = try home.run("set", "app.nickname", #""null""#)
        #expect(set.output == "app.nickname = \"null\"\n")
        #expect(try home.settings()["storable-config-demo.AppConfig.nickname"] as? String == "null")
        #expect(try home.run("get", "app.nickname").output == "\"null\"\n")
        let row = try #require(
            try home.run("list").output.split(separator: "\n").first { $0.hasPrefix("app.nickname") })
        // VALUE the text, quoted; DEFAULT no value.
        #expect(row.split(separator: " ").prefix(3) == ["app.nickname", #""null""#, "null"], "\(row)")
        try home.run("set", "app.nickname", "null")
        #expect(try home.run("get", "app.nickname").output == "null\n")
        // Text that reads as itself is shown as it is.
        try home.run("set", "app.nickname", "nil")
        #expect(try home.run("get", "app.nickname").output == "nil\n")
    }

    @Test(arguments: [["reset"], ["reset", "app"], ["reset", "app.userName"], ["list"], ["get", "app.userName"]])
    func aCommandWithNothingToWriteCreatesNothing(arguments: [String]) throws {
        let home = DemoHome()
        let result = try home.run(arguments)
        #expect(result.status == 0)
        #expect(try home.contents().isEmpty)
    }

    @Test func resetStillRemovesAValueOfTheWrongType() throws {
        let home = DemoHome()
        try FileManager.default.createDirectory(
            at: home.settingsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"storable-config-demo.BudgetConfig.incomes": [1], "foreign": 1}"#.utf8).write(to: home.settingsFile)
        #expect(try home.run("reset", "budget").status == 0)
        #expect(try home.settings().keys.sorted() == ["foreign"])
    }

    @Test func watchCreatesNothingAndFollowsTheFileOnceItsDirectoryExists() throws {
        let home = DemoHome()
        let directory = home.directory.file("new/dir")
        let file = directory.appendingPathComponent("x.json").path
        let output = Pipe()
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.directory.url.path
        let watcher = try launchProduct(
            "storable-config-demo", ["watch", "--store", file], environment: environment, output: output)
        defer {
            kill(watcher.processIdentifier, SIGKILL)
            watcher.waitUntilExit()
        }
        let waiting = String(
            decoding: readUntil(output.fileHandleForReading, contains: "waiting", timeout: 20), as: UTF8.self)
        #expect(waiting.contains("waiting for the directory \(directory.path) to be created"))
        #expect(try home.contents().isEmpty)
        // Made one level at a time, which fails if `watch` made either; then `watch` says that it watches, which
        // it does only once it has found the directory: by then anything it made while waiting would be there.
        try FileManager.default.createDirectory(
            at: directory.deletingLastPathComponent(), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        let watching = String(
            decoding: readUntil(output.fileHandleForReading, contains: "watching", timeout: 20), as: UTF8.self)
        #expect(watching.contains("watching"))
        #expect(try home.contents() == ["new", "new/dir"])
        #expect(try home.run("set", "app.userName", "w", "--store", file).status == 0)
        let seen = String(
            decoding: readUntil(output.fileHandleForReading, contains: "app.userName", timeout: 20), as: UTF8.self)
        #expect(seen.contains(#"app.userName: "" → "w""#))
    }
}
