import Foundation
import StorableConfig
import Testing

/// The demo's `export` and `import`, and its `app` config reading the seed article's plain keys.
struct DemoDocumentTests {
    @Test func anExportImportedIntoAnotherStoreGivesTheSameValues() throws {
        let home = DemoHome()
        try home.run("set", "twitter.userName", "nkysu1")
        try home.run("set", "app.selectedHobbies", #"["sleep","eat"]"#)
        let export = try home.run("export")
        #expect(export.status == 0)
        let document = home.directory.file("backup.json")
        try Data(export.output.utf8).write(to: document)
        let copy = home.directory.file("copy.json").path
        let imported = try home.run("import", document.path, "--store", copy)
        #expect(imported.status == 0)
        #expect(try home.run("get", "twitter.userName", "--store", copy).output == "nkysu1\n")
        #expect(try home.run("get", "app.selectedHobbies", "--store", copy).output == "[\"sleep\",\"eat\"]\n")
        // Only the named configs, each even with nothing stored.
        let partial = try ConfigDocument(jsonText: try home.run("export", "facebook").output)
        #expect(partial.configs.keys.sorted() == ["FacebookConfig"])
        #expect(partial.configs["FacebookConfig"]?.settings == [:])
    }

    @Test func replaceResetsWhatTheDocumentDoesNotSet() throws {
        let home = DemoHome()
        try home.run("set", "twitter.userName", "old")
        try home.run("set", "facebook.userName", "kept")
        let document = home.directory.file("doc.json")
        let text = try home.run("export", "twitter").output.replacingOccurrences(of: "\"old\"", with: "\"new\"")
        try Data(text.utf8).write(to: document)
        #expect(try home.run("import", "--replace", document.path).status == 0)
        #expect(try home.run("get", "twitter.userName").output == "new\n")
        #expect(try home.run("get", "facebook.userName").output == "kept\n")
    }

    @Test(arguments: [
        ("missing", 1, "cannot read"),
        ("{not json", 1, "not JSON"),
        (#"{"a": 1}"#, 2, "not a StorableConfig settings document"),
        (
            #"{"format": "StorableConfig settings", "formatVersion": 1, "configs": {"AppConfig": {"namespace": "x", "#
                + #""schemaVersion": 0, "settings": {"volume": "loud", "colour": "red"}}, "Nope": {"namespace": "x", "#
                + #""schemaVersion": 0, "settings": {}}}}"#, 2, "AppConfig.colour"
        ),
    ])
    func aBadDocumentChangesNothingAndSaysWhy(content: String, status: Int32, message: String) throws {
        let home = DemoHome()
        try home.run("set", "app.volume", "0.3")
        let before = try Data(contentsOf: home.settingsFile)
        let document = home.directory.file("doc.json")
        if content != "missing" { try Data(content.utf8).write(to: document) }
        let result = try home.run("import", document.path)
        #expect(result.status == status)
        #expect(result.errorOutput.contains(message))
        if content.contains("colour") {
            #expect(result.errorOutput.contains("AppConfig.volume"))
            #expect(result.errorOutput.contains("Nope"))
        }
        #expect(try Data(contentsOf: home.settingsFile) == before)
    }

    @Test func theAppConfigReadsAndMovesTheSeedArticlesPlainKeys() throws {
        let home = DemoHome()
        let directory = home.settingsFile.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"isFirstLaunch": false, "userName": "nkysu1", "selectedHobbies": ["sleep"]}"#.utf8)
            .write(to: home.settingsFile)
        let launch = try home.run()
        #expect(launch.output.hasPrefix("Welcome back"))
        #expect(try home.run("get", "app.userName").output == "nkysu1\n")
        let settings = try home.settings()
        #expect(settings["userName"] == nil)
        #expect(settings["storable-config-demo.AppConfig.selectedHobbies"] as? [String] == ["sleep"])
    }
}
