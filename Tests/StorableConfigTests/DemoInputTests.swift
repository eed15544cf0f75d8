import Foundation
import StorableConfig
import Testing

/// Documents from pipes and devices, stores that cannot be written, and the command line's grammar.
struct DemoInputTests {
    @Test func importReadsADocumentFromAPipeLikeAFile() throws {
        let home = DemoHome()
        try home.run("set", "twitter.userName", "nkysu1")
        let document = try home.run("export").output
        let copy = home.directory.file("copy.json").path
        // What `import <(cat doc.json)` passes: a path that is a pipe.
        let result = try home.run(["import", "/dev/stdin", "--store", copy], input: Data(document.utf8))
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "imported AppConfig, BudgetConfig, FacebookConfig, TwitterConfig from /dev/stdin\n")
        #expect(try home.run("get", "twitter.userName", "--store", copy).output == "nkysu1\n")
    }

    @Test(arguments: [
        (
            ["import", "/dev/null"],
            "storable-config-demo: cannot import /dev/null: it is empty; a settings document is "
                + "what export prints\n"
        ),
        (
            ["import", "-"],
            "storable-config-demo: cannot import standard input: it is empty; a settings document is "
                + "what export prints\n"
        ),
        (["import", "/"], "storable-config-demo: cannot read /: it is a directory, not a settings document\n"),
        (
            ["import", "/nonexistent/doc.json"],
            "storable-config-demo: cannot read /nonexistent/doc.json: No such "
                + "file or directory\n"
        ),
    ])
    func aDocumentThatCannotBeReadSaysWhyNamingThePath(arguments: [String], message: String) throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "before")
        let before = try Data(contentsOf: home.settingsFile)
        let result = try home.run(arguments, input: Data())
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput == message)
        #expect(try Data(contentsOf: home.settingsFile) == before)
    }

    /// A settings document is kilobytes; `import` reads at most 16 MiB, so that a huge input cannot take the
    /// machine's memory. A document one byte over the limit (spaces after the JSON) is refused, from a file or a
    /// pipe, and changes nothing.
    @Test func aDocumentOverTheLimitIsRefusedNamingTheLimitAndChangesNothing() throws {
        let home = DemoHome()
        try home.run("set", "app.userName", "from the document")
        var document = Data(try home.run("export").output.utf8)
        document.append(Data(repeating: UInt8(ascii: " "), count: 16 * 1024 * 1024 + 1 - document.count))
        let file = home.directory.file("padded.json")
        try document.write(to: file)
        try home.run("set", "app.userName", "before")
        let before = try Data(contentsOf: home.settingsFile)
        for (arguments, input, source) in [
            (["import", file.path], Data(), file.path), (["import", "-"], document, "standard input"),
        ] {
            let result = try home.run(arguments, input: input)
            #expect(result.status == 1, "\(arguments): \(result.output)")
            #expect(
                result.errorOutput
                    == "storable-config-demo: cannot import \(source): it holds more than 16777216 bytes (16 MiB), "
                    + "the most a settings document may hold; nothing was changed\n")
            #expect(try Data(contentsOf: home.settingsFile) == before)
        }
    }

    /// `import /dev/zero` ends at the limit, instead of reading until the kernel ends the program.
    @Test func anEndlessInputEndsAtTheLimit() throws {
        let home = DemoHome()
        let result = try runProduct(
            "storable-config-demo", ["import", "/dev/zero"], environment: ["HOME": home.directory.url.path],
            removing: ["XDG_CONFIG_HOME"], timeout: 120)
        #expect(!result.timedOut)
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("cannot import /dev/zero: it holds more than 16777216 bytes"))
        #expect(!FileManager.default.fileExists(atPath: home.settingsFile.path))
    }

    @Test func aStoreWhoseDirectoryCannotBeMadeIsNamedWithTheSystemsReason() throws {
        let home = DemoHome()
        let result = try home.run("set", "app.userName", "x", "--store", "/proc/nonexistent/x.json")
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(
            result.errorOutput
                == "storable-config-demo: could not store app.userName: The settings file /proc/nonexistent/x.json "
                + "cannot be used: creating its directory /proc/nonexistent failed: No such file or directory.\n")
    }

    @Test func aLaunchThatCannotBeRecordedDoesNotClaimItWas() throws {
        let home = DemoHome()
        let file = home.directory.file("read-only.json")
        try Data("{}\n".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file.path)
        let result = try home.run("--store", file.path)
        #expect(result.status == 1)
        #expect(
            result.output
                == "First launch: welcome! This launch could not be recorded, so the next one will be a first launch "
                + "too.\n")
        #expect(!result.output.contains("isFirstLaunch"))
        #expect(result.errorOutput.contains("this launch was not recorded in JSON file \(file.path)"))
        #expect(result.errorOutput.contains("read-only"))
        #expect(try Data(contentsOf: file) == Data("{}\n".utf8))
        // The next launch is a first launch again, as said.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(try home.run("--store", file.path).output.hasPrefix("First launch: welcome! This run is recorded"))
    }

    @Test func anOverrideOptionFollowedByACommandIsAUsageError() throws {
        let home = DemoHome()
        let result = try home.run("--app-config-volume", "get", "app.volume")
        #expect(result.status == 2)
        #expect(
            result.errorOutput.hasPrefix(
                "storable-config-demo: --app-config-volume needs a value, and is followed by 'get': write "
                    + "--app-config-volume=<value>"), "\(result.errorOutput)")
        #expect(try home.run("--app-config-volume").status == 2)
        #expect(try home.run("list", "--app-config-volume", "--json").status == 2)
        // The forms that work.
        #expect(try home.run("--app-config-volume", "0.3", "get", "app.volume").output == "0.3\n")
        #expect(try home.run("--app-config-volume=0.4", "get", "app.volume").output == "0.4\n")
        #expect(try home.run("--app-config-user-name=get", "get", "app.userName").output == "get\n")
        #expect(try home.run("get", "app.isFirstLaunch", "--app-config-is-first-launch", "false").output == "false\n")
        #expect(try home.run("--app-config-is-first-launch", "get", "app.isFirstLaunch").output == "true\n")
        // After --, nothing is an option.
        #expect(try home.run("get", "--", "--app-config-volume").status == 2)
    }

    @Test(arguments: ["-h", "--help", "--json", "--store", "--app-config-volume", "--app-config-user-name=x", "-"])
    func theArgumentAfterSetAndANameIsAlwaysTheValue(value: String) throws {
        let home = DemoHome()
        let result = try home.run("set", "app.userName", value)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "app.userName = \(value)\n")
        #expect(try home.settings()["storable-config-demo.AppConfig.userName"] as? String == value)
        // `--` still ends the options first.
        #expect(try home.run("set", "app.userName", "--", value).status == 0)
        #expect(try home.run("get", "app.userName").output == "\(value)\n")
    }
}
