import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct JSONFileStoreTests {
    @Test func theFileListsItsKeysSortedAsTheyComeAndGo() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        func keysInFile() throws -> [String] {
            let text = try String(contentsOf: url, encoding: .utf8)
            return text.split(separator: "\n").compactMap { line in
                line.split(separator: "\"").dropFirst().first.map(String.init)
            }
        }
        try store.setValue(.int(1), forKey: "c")
        try store.setValue(.int(2), forKey: "a")
        #expect(try keysInFile() == ["a", "c"])
        try store.setValue(.int(3), forKey: "b")
        #expect(try keysInFile() == ["a", "b", "c"])
        try store.setValue(.int(4), forKey: "b")
        #expect(try keysInFile() == ["a", "b", "c"])
        // The same number of keys, not the same keys.
        try store.setValues(["aa": .int(5)], removingValuesForKeys: ["c"])
        #expect(try keysInFile() == ["a", "aa", "b"])
        try store.removeValue(forKey: "a")
        #expect(try keysInFile() == ["aa", "b"])
        #expect(try JSONFileStore(url: url).value(forKey: "b") == .int(4))
    }

    @Test func theFileIsOneFlatSortedPrettyPrintedObject() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = AppConfig(store: try JSONFileStore(url: url))
        config.userName = "nkysu1"
        config.isFirstLaunch = false
        config.selectedHobbies = ["sleep"]
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(
            text == """
                {
                  "com.example.app.AppConfig.isFirstLaunch": false,
                  "com.example.app.AppConfig.selectedHobbies": [
                    "sleep"
                  ],
                  "com.example.app.AppConfig.userName": "nkysu1"
                }

                """)
    }

    @Test func valuesAreNaturalJSONThatOtherProgramsRead() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = MatrixConfig(store: try JSONFileStore(url: url))
        config.date = Date(timeIntervalSinceReferenceDate: 0.25)
        config.data = Data("hi".utf8)
        config.url = URL(string: "https://example.com/a/b")!
        config.profile = Profile(name: "n", age: 3)
        config.float = 0.1
        let object = try jsonObject(at: url)
        #expect(object[config.$date.key] as? String == "2001-01-01T00:00:00.25Z")
        #expect(object[config.$data.key] as? String == "aGk=")
        #expect(object[config.$url.key] as? String == "https://example.com/a/b")
        #expect((object[config.$profile.key] as? [String: Any])?["name"] as? String == "n")
        #expect(try String(contentsOf: url, encoding: .utf8).contains(#""matrix.MatrixConfig.float": 0.1,"#))
    }

    @Test func aMissingFileAndDirectoryAreCreatedOnTheFirstWrite() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("a/b/settings.json")
        let config = AppConfig(store: try JSONFileStore(url: url))
        #expect(!FileManager.default.fileExists(atPath: url.path))
        config.userName = "x"
        #expect(try jsonObject(at: url)["com.example.app.AppConfig.userName"] as? String == "x")
    }

    @Test func aDirectoryInPlaceOfTheFileIsAClearError() throws {
        let directory = TemporaryDirectory()
        #expect {
            try JSONFileStore(url: directory.url)
        } throws: { error in
            guard case .fileUnusable(let path, let reason) = error as? StorableConfigError else { return false }
            return path == directory.url.standardizedFileURL.path && reason.contains("directory")
        }
    }

    @Test func aParentThatIsAFileIsAClearErrorNamingThePath() throws {
        let directory = TemporaryDirectory()
        let blocker = directory.file("blocker")
        try Data("not a directory".utf8).write(to: blocker)
        let url = blocker.appendingPathComponent("settings.json")
        #expect {
            try JSONFileStore(url: url)
        } throws: { error in
            guard case .fileUnusable(let path, let reason) = error as? StorableConfigError else { return false }
            return path == url.path && reason.contains("not a directory")
        }
        #expect(try String(contentsOf: blocker, encoding: .utf8) == "not a directory")
    }

    @Test(.timeLimit(.minutes(5)))
    func aFIFOInPlaceOfTheFileIsAClearErrorNamingThePath() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try #require(mkfifo(url.path, 0o600) == 0)
        // Opening a FIFO for reading would wait for a writer: the store must refuse it without opening it.
        #expect {
            try JSONFileStore(url: url)
        } throws: { error in
            guard case .fileUnusable(let path, let reason) = error as? StorableConfigError else { return false }
            return path == url.path && reason.contains("not a regular file")
        }
        var info = stat()
        #expect(lstat(url.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["settings.json"])
    }

    @Test func aFailedWriteIsReportedWithThePathAndTheValueStaysReadable() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = FailingFileConfig(store: try JSONFileStore(url: url))
        config.value = 1
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: url.path)
        config.value = 42
        #expect(config.value == 42)
        let reported = ReportedErrors.mentioning("failingfile.FailingFileConfig.value")
        #expect(reported.contains { $0.description.contains(url.path) && $0.description.contains("read-only") })
        #expect(try jsonObject(at: url)["failingfile.FailingFileConfig.value"] as? Int == 1)
    }

    @Test func aChangeThatFailedToWriteIsWrittenWithTheNextSuccessfulWrite() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        try store.setValue(.int(1), forKey: "first")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: url.path)
        #expect {
            try store.setValue(.int(2), forKey: "second")
        } throws: { error in
            (error as? StorableConfigError)?.description.contains("read-only") == true
        }
        #expect(store.value(forKey: "second") == .int(2))
        #expect(try jsonObject(at: url)["second"] == nil)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        try store.setValue(.int(3), forKey: "third")
        let object = try jsonObject(at: url)
        #expect(object["second"] as? Int == 2)
        #expect(object["third"] as? Int == 3)
    }

    @Test(arguments: [
        ("truncated", Data(#"{"com.example.app.AppConfig.userName": "nky"#.utf8)),
        ("garbage", Data([0xFF, 0x00, 0x13, 0x37, 0xDE, 0xAD])),
        ("not an object", Data(#"["a", "b"]"#.utf8)),
        ("empty", Data()),
        (
            "invalid UTF-8",
            Data(#"{"com.example.app.AppConfig.userName": "caf"#.utf8) + [0xC3, 0x28] + Data(#""}"#.utf8)
        ),
        ("random bytes", randomBytes(count: 4096, seed: 0xBAD5EED)),
    ])
    func aCorruptFileIsMovedAsideReportedAndTheStoreStartsEmpty(name: String, bytes: Data) throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try bytes.write(to: url)
        let config = AppConfig(store: try JSONFileStore(url: url))
        #expect(config.userName == "")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        let quarantined = try #require(siblings.first { $0.hasPrefix("settings.json.corrupt-") })
        #expect(try Data(contentsOf: directory.file(quarantined)) == bytes)
        // Both paths, whole, so that a person can find the file and its saved bytes.
        #expect(
            ReportedErrors.mentioning(url.path).contains {
                $0.description.contains(directory.file(quarantined).path)
            })
        config.userName = "fresh"
        #expect(try jsonObject(at: url)["com.example.app.AppConfig.userName"] as? String == "fresh")
        #expect(try Data(contentsOf: directory.file(quarantined)) == bytes)
    }

    @Test func keysOfOtherProgramsAndValuesOfTheWrongTypeStayInTheFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data(
            #"{"other.tool.key": {"nested": [1, 2.5, null]}, "com.example.app.AppConfig.isFirstLaunch": "maybe"}"#.utf8
        ).write(to: url)
        let config = AppConfig(store: try JSONFileStore(url: url))
        #expect(config.isFirstLaunch == true)
        config.userName = "x"
        config.reset()
        let object = try jsonObject(at: url)
        #expect(object["com.example.app.AppConfig.isFirstLaunch"] == nil)
        let nested = try #require((object["other.tool.key"] as? [String: Any])?["nested"] as? [Any])
        #expect(nested.count == 3)
    }

    @Test func foreignNumbersThatADoubleCannotHoldAreWrittenBackAsTheyWere() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let foreign = """
            {
              "big": 123456789012345678901234567890,
              "huge": 1e400,
              "pi": 3.14159265358979323846264338327950288,
              "nested": {"a": [1, -1e400], "b": "text"},
              "plain": 0.5,
              "com.example.app.AppConfig.userName": "before"
            }
            """
        try Data(foreign.utf8).write(to: url)
        let config = AppConfig(store: try JSONFileStore(url: url))
        config.userName = "after"
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(#""big": 123456789012345678901234567890,"#))
        #expect(text.contains(#""huge": 1e400,"#))
        #expect(text.contains(#""pi": 3.14159265358979323846264338327950288,"#))
        #expect(text.contains(#""nested": {"a": [1, -1e400], "b": "text"},"#))
        #expect(text.contains(#""plain": 0.5"#))
        #expect(text.contains(#""com.example.app.AppConfig.userName": "after""#))
        #expect(try JSONText.parse(Data(text.utf8)) != .null)
        // A later write, which prints only the member it changes, keeps them too.
        config.userName = "later"
        let later = try String(contentsOf: url, encoding: .utf8)
        #expect(later == text.replacingOccurrences(of: #""after""#, with: #""later""#))
    }

    /// A write prints only the members it changes and copies the others' lines from the write before: after
    /// any sequence of sets, removals, batches and other processes' writes, the file must be exactly the
    /// values printed whole.
    @Test func theFileIsAlwaysExactlyItsValuesPrintedWhole() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        var expected: [String: StoredValue] = [:]
        var random = SplitMix64(seed: 0x5EED)
        // Keys that sort and escape in interesting ways; "é" twice, precomposed and as "e" + accent.
        let keys = ["a", "aa", "B", "b", "z.1", "z.10", "z.2", "quote\"d", "tab\t", "\u{E9}", "e\u{301}", "日本", ""]
        let values: [StoredValue] = [
            .int(0), .int(-42), .string("x"), .string("line\nbreak \"q\""), .bool(true), .null, .double(0.1),
            .array([.int(1), .array([])]), .dictionary(["k": .string("v"), "j": .dictionary([:])]),
        ]
        func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
        for step in 0..<400 {
            switch random.next() % 20 {
            case 0..<11:
                let (key, value) = (pick(keys), pick(values))
                try store.setValue(value, forKey: key)
                expected[key] = value
            case 11..<15:
                let key = pick(keys)
                try store.removeValue(forKey: key)
                expected[key] = nil
            case 15..<18:
                var set: [String: StoredValue] = [:]
                for _ in 0..<3 { set[pick(keys)] = pick(values) }
                let removed = [pick(keys)].filter { set[$0] == nil }
                try store.setValues(set, removingValuesForKeys: removed)
                for key in removed { expected[key] = nil }
                for (key, value) in set { expected[key] = value }
            case 18:
                // Someone deletes the file: the next write starts a new one.
                try FileManager.default.removeItem(at: url)
                expected = [:]
                try store.setValue(.int(Int64(step)), forKey: "a")
                expected["a"] = .int(Int64(step))
            default:
                // Another process writes a value, and the next write merges it.
                expected[pick(keys)] = pick(values)
                try Data((StoredValue.dictionary(expected).jsonText(pretty: true) + "\n").utf8).write(
                    to: url, options: .atomic)
                try store.setValue(.int(Int64(step)), forKey: "a")
                expected["a"] = .int(Int64(step))
            }
            // Bytes, not strings: two spellings of "é" are equal strings.
            let printed = Data((StoredValue.dictionary(expected).jsonText(pretty: true) + "\n").utf8)
            try #require(try Data(contentsOf: url) == printed, "step \(step)")
        }
    }

    @Test func aForeignNumberThisProcessOverwritesIsWrittenAsTheNewValue() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data(#"{"k": 1e400}"#.utf8).write(to: url)
        let store = try JSONFileStore(url: url)
        try store.setValue(.int(2), forKey: "k")
        #expect(try jsonObject(at: url)["k"] as? Int == 2)
    }

    /// A namespace names the settings file's directory: `..` would put the file beside the configuration
    /// directory, `a/b` would make directories.
    @Test(arguments: ["..", ".", "a/b", "", "/etc", "../x", "a\u{0}b"])
    func aNamespaceThatIsNotOnePathComponentIsRefusedNamingIt(namespace: String) {
        #expect {
            try JSONFileStore(namespace: namespace)
        } throws: { error in
            guard case .fileUnusable(_, let reason) = error as? StorableConfigError else { return false }
            return reason.contains("the namespace \"\(namespace)\"") && reason.contains("not a single path component")
        }
    }

    @Test func anErrorHandlerThatWritesASettingDoesNotDeadlock() async {
        await #expect(processExitsWith: .success) {
            alarm(20)  // a deadlock ends the child with SIGALRM instead of hanging the tests
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "StorableConfigTests-handler-\(getpid())")
            ExitTestChild.attempt(2, "creating \(directory.path)") {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("settings.json")
            let config = ErrorLogConfig(
                store: ExitTestChild.attempt(3, "opening \(url.path)") { try JSONFileStore(url: url) })
            StorableConfig.errorHandler = { error in config.lastError = "\(error)" }
            config.note = "first"
            ExitTestChild.attempt(4, "writing \(url.path)") { try Data("{ torn".utf8).write(to: url) }
            config.note = "second"  // finds the corrupt file under the store's locks, and reports it
            guard config.lastError.contains("corrupt"), config.note == "second" else { exit(1) }
            exit(0)
        }
    }

    @Test func aWriteMergesIntoWhatAnotherProcessWroteMeanwhile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        try store.setValue(.string("mine"), forKey: "a")
        // Another process rewrites the file with a key of its own.
        try Data(#"{"a": "mine", "b": "theirs"}"#.utf8).write(to: url)
        try store.setValue(.string("mine too"), forKey: "c")
        let object = try jsonObject(at: url)
        #expect(object["b"] as? String == "theirs")
        #expect(object["c"] as? String == "mine too")
        #expect(store.value(forKey: "b") == .string("theirs"))
    }

    @Test func aRelaunchReadsTheFileFromDisk() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        do {
            let config = AppConfig(store: try JSONFileStore(url: url))
            config.userName = "persisted"
        }
        // Nothing holds the first store any more, so this one reads the file again.
        let store = try JSONFileStore(url: url)
        #expect(store.value(forKey: "com.example.app.AppConfig.userName") == .string("persisted"))
        try Data(#"{"com.example.app.AppConfig.userName": "from disk"}"#.utf8).write(to: url)
        try store.reload()
        #expect(AppConfig(store: store).userName == "from disk")
    }

    @Test func theDefaultLocationFollowsXDGConfigHome() {
        let url = JSONFileStore.defaultURL(namespace: "com.example.app")
        let environment = ProcessInfo.processInfo.environment
        #expect(url.lastPathComponent == "settings.json")
        #expect(url.deletingLastPathComponent().lastPathComponent == "com.example.app")
        #if !canImport(Darwin)
            if let configHome = environment["XDG_CONFIG_HOME"], configHome.hasPrefix("/") {
                #expect(url.path.hasPrefix(configHome))
            } else if let home = environment["HOME"] {
                #expect(url.path == home + "/.config/com.example.app/settings.json")
            }
        #endif
    }

    @Test func aNewFileIsReadableOnlyByItsOwner() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try JSONFileStore(url: url).setValue(.string("token"), forKey: "k")
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test func valuesOfTheWrongTypeAreReportedEachByItsKeyAndStayInTheFileAsWritten() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let prefix = "wrongtypefile.WrongTypeFileConfig."
        try Data(
            """
            {
              "\(prefix)enabled": "maybe",
              "\(prefix)hobbies": {"a": 1},
              "\(prefix)limit": 2.5,
              "\(prefix)nickname": 42
            }
            """.utf8
        ).write(to: url)
        let config = WrongTypeFileConfig(store: try JSONFileStore(url: url))
        #expect(config.enabled == false)
        #expect(config.hobbies == [])
        #expect(config.limit == 10)
        #expect(config.nickname == nil)
        for (name, found) in [("enabled", "\"maybe\""), ("hobbies", "\"a\""), ("limit", "2.5"), ("nickname", "42")] {
            let reported = ReportedErrors.mentioning("'\(prefix)\(name)'")
            #expect(reported.count == 1, "\(name): \(reported)")
            #expect(reported.allSatisfy { $0.key == prefix + name && $0.description.contains(found) }, "\(name)")
        }
        // Another setting's write, and a relaunch, leave them as they were.
        config.userName = "written"
        let object = try jsonObject(at: url)
        #expect(object[prefix + "enabled"] as? String == "maybe")
        #expect(object[prefix + "hobbies"] as? [String: Int] == ["a": 1])
        #expect(object[prefix + "limit"] as? Double == 2.5)
        #expect(object[prefix + "nickname"] as? Int == 42)
        #expect(object[prefix + "userName"] as? String == "written")
    }

    /// Values at the edges of what a settings file holds: a 10 MB string beside many keys that no config
    /// declares, through a write and a relaunch.
    @Test func aTenMegabyteStringAndAHundredThousandForeignKeysSurviveAWriteAndARelaunch() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        // The probe kept 500,000 foreign keys (Docs/Stores.md has the figures of such a file); a tenth of them
        // keeps this test within seconds, and ThreadSanitizer's run, many times slower, takes a tenth again.
        let foreignKeys = isRunningUnderThreadSanitizer ? 10_000 : 100_000
        let bytes = isRunningUnderThreadSanitizer ? 1_000_000 : 10_000_000
        var text = "{\n"
        for index in 0..<foreignKeys {
            text += "  \"other.tool.key\(index)\": \"value \(index)\",\n"
        }
        text += "  \"other.tool.last\": [1, 2.5, null, {\"nested\": true}]\n}\n"
        try Data(text.utf8).write(to: url)
        // Characters that JSON escapes, and some that it does not: ten million bytes.
        let unit = "quote\" backslash\\ tab\t newline\n nul\u{0} é 名前 👩‍👩‍👧‍👦 "
        let big = String(repeating: unit, count: bytes / unit.utf8.count)
        do {
            let config = WrongTypeFileConfig(store: try JSONFileStore(url: url))
            config.userName = big
        }
        let store = try JSONFileStore(url: url)
        let read = WrongTypeFileConfig(store: store).userName
        let same = read == big
        #expect(same, "read \(read.utf8.count) bytes of the \(big.utf8.count) written")
        let values = store.allValues
        #expect(values.count == foreignKeys + 2)
        let lost = (0..<foreignKeys).filter { values["other.tool.key\($0)"] != .string("value \($0)") }
        #expect(lost.isEmpty, "lost \(lost.count) foreign keys, the first \(lost.prefix(5))")
        #expect(
            values["other.tool.last"]
                == .array([.int(1), .double(2.5), .null, .dictionary(["nested": .bool(true)])]))
    }

    /// Files damaged at random (bytes changed, inserted, deleted, repeated; files cut short): each is either
    /// read whole, and every one of its members survives a write, or moved aside byte for byte.
    @Test func randomlyDamagedFilesAreReadWholeOrSetAsideByteForByte() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let base = Data(Self.damageBase.utf8)
        var random = SplitMix64(seed: 0xDA3A6E)
        let files = isRunningUnderThreadSanitizer ? 300 : 3_000
        var (read, setAside) = (0, 0)
        for index in 0..<files {
            let damaged = Self.damage(base, using: &random)
            let name = "settings-\(index).json"
            let url = directory.file(name)
            try damaged.write(to: url)
            let expected = try? JSONText.parseObject(damaged)
            do {
                let store = try JSONFileStore(url: url)
                if let expected {
                    try #require(store.allValues == expected.members, "file \(index) read as other values")
                }
                try store.setValue(.string("written"), forKey: "probe")
            }
            let after = try JSONText.parseObject(try Data(contentsOf: url))
            let siblings = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                .filter { $0.hasPrefix(name + ".corrupt-") }
            if let expected {
                read += 1
                var members = after.members
                #expect(members.removeValue(forKey: "probe") == .string("written"))
                try #require(members == expected.members.filter { $0.key != "probe" }, "file \(index) lost a member")
                try #require(after.rawMembers == expected.rawMembers, "file \(index) lost a number's text")
                // Keys by their bytes: `String` takes two spellings of "café" for one.
                func spellings(_ members: [JSONText.RespelledMember]) -> [[UInt8]: StoredValue] {
                    Dictionary(members.map { ([UInt8]($0.key.utf8), $0.value) }, uniquingKeysWith: { $1 })
                }
                try #require(
                    spellings(after.respelledMembers) == spellings(expected.respelledMembers),
                    "file \(index) lost a spelling of a key")
                try #require(siblings.isEmpty, "file \(index) was read and also set aside")
            } else {
                setAside += 1
                try #require(siblings.count == 1, "file \(index) does not parse, and was not set aside once")
                let movedTo = directory.file(siblings[0])
                try #require(try Data(contentsOf: movedTo) == damaged, "file \(index) was not set aside as it was")
                try #require(after.members == ["probe": .string("written")])
                if setAside <= 10 {
                    #expect(ReportedErrors.mentioning(url.path).contains { $0.description.contains(movedTo.path) })
                }
                try FileManager.default.removeItem(at: movedTo)
            }
            try FileManager.default.removeItem(at: url)
            try FileManager.default.removeItem(at: directory.file(name + ".lock"))
        }
        // Both outcomes are exercised, and often.
        #expect(read > files / 20, "\(read) of \(files) damaged files parsed")
        #expect(setAside > files / 2, "\(setAside) of \(files) damaged files did not parse")
    }

    /// A settings file with a member of every kind, escapes, non-ASCII keys and numbers a `Double` cannot hold.
    static let damageBase = """
        {
          "com.example.app.AppConfig.isFirstLaunch": false,
          "com.example.app.AppConfig.nickname": null,
          "com.example.app.AppConfig.selectedHobbies": [
            "sleep",
            "eat \\"well\\"\\n"
          ],
          "com.example.app.AppConfig.userName": "nkysu1 \\u00e9 名前 🎌",
          "other.tool.big": 123456789012345678901234567890,
          "other.tool.huge": -1e400,
          "other.tool.nested": {"a": [1, 2.5, -0.0, {"b": {}}], "c": "d"},
          "other.tool.ratio": 0.1,
          "caf\u{E9}": 1,
          "cafe\u{301}": 2
        }

        """

    /// `data` with one to three random kinds of damage.
    static func damage(_ data: Data, using random: inout SplitMix64) -> Data {
        var bytes = [UInt8](data)
        let syntax = Array(#"{}[]",:\ 0123456789.eE-+tfnul"#.utf8)
        func position(_ count: Int) -> Int { Int(random.next() % UInt64(max(count, 1))) }
        for _ in 0...(random.next() % 3) {
            switch random.next() % 6 {
            case 0 where !bytes.isEmpty:
                bytes[position(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
            case 1 where !bytes.isEmpty:
                bytes[position(bytes.count)] = syntax[position(syntax.count)]
            case 2:
                bytes.insert(syntax[position(syntax.count)], at: position(bytes.count + 1))
            case 3 where !bytes.isEmpty:
                let start = position(bytes.count)
                bytes.removeSubrange(start..<min(bytes.count, start + 1 + position(8)))
            case 4 where !bytes.isEmpty:
                let start = position(bytes.count)
                let slice = bytes[start..<min(bytes.count, start + 1 + position(16))]
                bytes.insert(contentsOf: slice, at: position(bytes.count + 1))
            default:
                bytes.removeSubrange(position(bytes.count + 1)...)
            }
        }
        return Data(bytes)
    }
}

final class ErrorLogConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "errorlog" }
    @Setting var note = ""
    @Setting var lastError = ""
}

final class WrongTypeFileConfig: StorableConfig {
    override class var namespace: String { "wrongtypefile" }
    @Setting var enabled = false
    @Setting var hobbies: [String] = []
    @Setting var limit = 10
    @Setting var nickname: String? = nil
    @Setting var userName = ""
}

final class FailingFileConfig: StorableConfig {
    override class var namespace: String { "failingfile" }
    @Setting var value = 0
}
