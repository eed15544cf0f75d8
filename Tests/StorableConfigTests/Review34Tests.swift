import Foundation
import Testing

@testable import StorableConfig
@testable import StorableConfigSecrets

/// Review of issue 34 (secret stores and the managed app configuration): each test states what a user would see.
@Suite(.serialized)
struct Review34Tests {
    static let planted = "R34-PLANTED-7f3e"

    private static func fileHolds(_ url: URL, _ text: String) -> Bool {
        (FileManager.default.contents(atPath: url.path) ?? Data()).range(of: Data(text.utf8)) != nil
    }

    // MARK: - Secrets

    /// Two stores opened the documented way, `SecretRoutingStore(wrapping: JSONFileStore(url:))`, on one settings file (an app and its
    /// extension's code, or two libraries, each opening the file): a token changed through one config is the one
    /// a config over the other store reads, since both keep their secrets in one `settings.secrets` directory.
    @Test func twoDefaultStoresOnOneFileAgreeOnASecret() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let first = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        let second = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        first.token = "one-\(Self.planted)"
        #expect(waitUntil(seconds: 5) { second.token == "one-\(Self.planted)" }, "second reads \(second.token)")
        second.token = "two-\(Self.planted)"
        #expect(waitUntil(seconds: 5) { first.token == "two-\(Self.planted)" }, "first reads \(first.token)")
        // A third config, created after both writes, over the first store.
        let third = R34SecretConfig(store: first.store)
        #expect(third.token == "two-\(Self.planted)")
    }

    /// A value at an earlier key (`previousKeys`) of a setting now declared secret: moved to the secret store, and
    /// neither the current key nor the earlier one leaves it in the file.
    @Test func aPlainValueAtAnEarlierKeyMovesIntoTheSecretStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data("{\"old.Prefs.apiToken\": \"\(Self.planted)\", \"other\": 1}".utf8).write(to: url)
        let secrets = FailingSecretStore()
        let config = R34RenamedSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(config.apiToken == Self.planted)
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(secrets.bytes(forKey: config.$apiToken.key) == Data("\"\(Self.planted)\"".utf8))
        let later = R34RenamedSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(later.apiToken == Self.planted)
    }

    /// A secret setting renamed (`previousNames`): its value, in the secret store under the earlier key, moves
    /// to the current key there, and nothing stays behind under the earlier key.
    @Test func aRenamedSecretSettingKeepsItsValue() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        do {
            let old = R34SecretBeforeRename(
                store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
            old.apiKey = Self.planted
        }
        let renamed = R34SecretAfterRename(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(renamed.apiToken == Self.planted)
        #expect(secrets.bytes(forKey: "r34.Renamed.apiKey") == nil, "the old secret is left behind")
    }

    /// A config class renamed (`previousConfigNames`) with a secret setting: the secret follows the class.
    @Test func aRenamedClassKeepsItsSecret() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        do {
            let old = R34SecretBeforeRename(
                store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
            old.apiKey = Self.planted
        }
        let renamed = R34SecretClassAfterRename(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(renamed.apiKey == Self.planted)
    }

    /// An optional secret set and then set to `nil`: the secret store and the file hold nothing, and a relaunch
    /// reads `nil`.
    @Test func anOptionalSecretSetToNilIsGoneEverywhere() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        config.optionalToken = Self.planted
        #expect(secrets.bytes(forKey: config.$optionalToken.key) != nil)
        config.optionalToken = nil
        #expect(secrets.bytes(forKey: config.$optionalToken.key) == nil)
        #expect(!Self.fileHolds(url, Self.planted))
        let later = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(later.optionalToken == nil)
    }

    /// A batch that sets a plain and a secret setting: each lands where it belongs, observers hear both.
    @Test func aBatchMixingSecretAndPlainSettingsWritesEachWhereItBelongs() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        let heard = Locked<Set<String>>([])
        let token = config.observe { change in heard.withLock { _ = $0.insert(change.key) } }
        config.batch {
            config.userName = "ann"
            config.token = Self.planted
        }
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(Self.fileHolds(url, "ann"))
        #expect(secrets.bytes(forKey: config.$token.key) == Data("\"\(Self.planted)\"".utf8))
        #expect(waitUntil { heard.withLock { $0 } == [config.$token.key, config.$userName.key] })
        token.cancel()
    }

    /// A failed secret write (a locked secret store): reported by key, the setting keeps its last good value,
    /// nothing reaches the file.
    @Test func aFailedSecretWriteKeepsTheLastGoodValueAndTheFileClean() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        config.token = "good"
        secrets.isLocked = true
        config.token = Self.planted
        secrets.isLocked = false
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(!ReportedErrors.mentioning(config.$token.key).isEmpty)
        #expect(ReportedErrors.mentioning(Self.planted).isEmpty)
        let later = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(later.token == "good")
    }

    /// Docs/Secrets.md: "a write that fails is reported and reaches neither the secret store nor the file", and
    /// issue 34: "the setting keeps its last good value": the config that assigned the token during a failed write
    /// (a locked device) reads the old one, as every config created afterwards does.
    @Test func aFailedSecretWriteIsNotReadAsIfItHadSucceeded() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        config.token = "good"
        secrets.isLocked = true
        config.token = "failed"
        secrets.isLocked = false
        config.userName = "a later write that succeeds"
        let later = R34SecretConfig(store: config.store)
        #expect(config.token == later.token, "the assigning config reads \(config.token), a new one \(later.token)")
        #expect(config.token == "good")
    }

    /// A batch that sets a plain setting and a secret while the secret store is locked: the plain value is
    /// written to the file (read after a relaunch), and only the secret's write fails.
    @Test func aBatchWhoseSecretFailsStillWritesItsPlainValue() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        secrets.isLocked = true
        config.batch {
            config.userName = "batch-user-r34"
            config.token = Self.planted
        }
        secrets.isLocked = false
        config.pin = 7
        #expect(config.userName == "batch-user-r34")
        let relaunched = R34SecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: FailingSecretStore()))
        #expect(
            relaunched.userName == "batch-user-r34" || !ReportedErrors.mentioning(config.$userName.key).isEmpty,
            "userName is neither in the file nor reported")
    }

    /// No library lock is held while a store or user code runs: a secret store that, while it writes, assigns
    /// another secret setting (a vault that records when it last rotated a key, say) does not hang.
    @Test func aSecretStoreThatAssignsASecretWhileWritingDoesNotHang() throws {
        let directory = TemporaryDirectory()
        let secrets = R34InterferingSecretStore {}
        let config = R34SecretConfig(
            store: SecretRoutingStore(
                wrapping: try JSONFileStore(url: directory.file("settings.json")), secrets: secrets))
        secrets.setMeanwhile { config.pin = 42 }
        #expect(finishes(within: 10) { config.token = "rotated" }, "the write never returned: a deadlock")
    }

    /// `reload()` racing a write: reload reads the old bytes, and a write of a new value finishes meanwhile; the
    /// just-assigned token is what every config created afterwards reads, not the older bytes reload read.
    @Test func aReloadRacingASecretWriteDoesNotBringBackTheOldValue() throws {
        let directory = TemporaryDirectory()
        let secrets = R34SlowReadSecretStore()
        let store = SecretRoutingStore(
            wrapping: try JSONFileStore(url: directory.file("settings.json")), secrets: secrets)
        let config = R34SecretConfig(store: store)
        config.token = "old"
        // While reload reads the secret store, another thread assigns a new token.
        secrets.afterNextRead(of: config.$token.key) {
            let writer = Thread { config.token = "new" }
            writer.start()
            _ = waitUntil(seconds: 5) { secrets.stored(forKey: config.$token.key) == Data("\"new\"".utf8) }
            usleep(50_000)
        }
        try store.reload()
        #expect(secrets.stored(forKey: config.$token.key) == Data("\"new\"".utf8))
        #expect(waitUntil(seconds: 5) { config.token == "new" }, "the config reads \(config.token)")
        #expect(R34SecretConfig(store: store).token == "new")
    }

    /// Many threads writing a secret through two stores on one file (one secret store): every config reads the
    /// value the secret store holds at the end.
    @Test func concurrentSecretWritesThroughTwoStoresConverge() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let first = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        let second = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<25 {
                let config = thread.isMultiple(of: 2) ? first : second
                config.token = "t\(thread)-\(round)"
            }
        }
        let stored = try #require(secrets.bytes(forKey: first.$token.key))
        let final = String(decoding: stored, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        #expect(waitUntil { first.token == final && second.token == final }, "\(first.token) \(second.token) \(final)")
        #expect(
            R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets)).token
                == final)
    }

    /// A watched file changed from outside while a secret lives in the secret store: the secret does not read as
    /// removed, and its observers hear nothing.
    @Test func anOutsideChangeToAWatchedFileLeavesTheSecretAlone() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let file = try JSONFileStore(url: url)
        let store = SecretRoutingStore(wrapping: file, secrets: secrets)
        try file.startWatching()
        defer { file.stopWatching() }
        let config = R34SecretConfig(store: store)
        config.token = Self.planted
        let heard = Locked<[String]>([])
        let token = config.observe { change in heard.withLock { $0.append(change.key) } }
        try Data("{\"r34.R34SecretConfig.userName\": \"from-outside\"}".utf8).write(to: url)
        #expect(waitUntil { config.userName == "from-outside" })
        try config.reload()
        #expect(config.token == Self.planted)
        #expect(heard.withLock { $0 } == [config.$userName.key])
        token.cancel()
    }

    /// The default secret store beside a settings file whose directory does not exist yet: the secret is written,
    /// in a directory of mode 0700, in a file of mode 0600.
    @Test func theDefaultSecretStoreBesideAFileInAMissingDirectory() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("a/b/settings.json")
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        config.token = Self.planted
        let secretsDirectory = directory.url.appendingPathComponent("a/b/settings.secrets")
        let attributes = try FileManager.default.attributesOfItem(atPath: secretsDirectory.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: secretsDirectory.path)
        #expect(names.count == 1)
        for name in names {
            let mode =
                try FileManager.default.attributesOfItem(
                    atPath: secretsDirectory.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url))).token == Self.planted)
    }

    /// Several threads making the first write through their own default stores at once: the `settings.secrets`
    /// directory is made once, no write fails, and every secret is kept.
    @Test func firstSecretWritesFromManyThreadsMakeTheDirectoryOnce() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("fresh/settings.json")
        DispatchQueue.concurrentPerform(iterations: 6) { index in
            guard let store = (try? JSONFileStore(url: url)).map({ SecretRoutingStore(wrapping: $0) }) else { return }
            let config = R34SecretConfig(store: store)
            if index.isMultiple(of: 2) { config.token = "token-\(index)" } else { config.pin = index }
        }
        #expect(
            ReportedErrors.mentioning(directory.url.path).isEmpty, "\(ReportedErrors.mentioning(directory.url.path))")
        let later = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        #expect(later.token.hasPrefix("token-"))
        #expect(later.pin % 2 == 1)
    }

    /// A document exported with its secrets, imported into a config over a JSON file store: the secret lands in
    /// the secret store, never in the file.
    @Test func importingADocumentWithSecretsKeepsThemOutOfTheFile() throws {
        let directory = TemporaryDirectory()
        let source = R34SecretConfig(store: InMemoryStore())
        source.token = Self.planted
        source.userName = "ann"
        let text = try ConfigDocument(exporting: [source], includingSecrets: true).jsonText()
        #expect(text.contains(Self.planted))
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        try ConfigDocument(jsonText: text).apply(to: [config])
        #expect(config.token == Self.planted)
        #expect(config.userName == "ann")
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(secrets.bytes(forKey: config.$token.key) == Data("\"\(Self.planted)\"".utf8))
    }

    /// A secret key holding a value of the wrong type in the file: moved out of the file, reported by key, and
    /// the report never shows the value.
    @Test func aWrongTypedPlainSecretIsMovedAndReportedWithoutItsValue() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data("{\"r34.R34SecretConfig.pin\": \"\(Self.planted)\"}".utf8).write(to: url)
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(config.pin == 0)
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(!ReportedErrors.mentioning(config.$pin.key).isEmpty)
        #expect(ReportedErrors.mentioning(Self.planted).isEmpty)
    }

    /// `description` of a config never shows a secret. (`valueText` does, by design: it is the text that
    /// `assign(parsing:)` reads back, as `wrappedValue` is the value.)
    @Test func aSecretsDescriptionIsRedacted() throws {
        let config = R34SecretConfig(
            store: SecretRoutingStore(
                wrapping: try JSONFileStore(url: TemporaryDirectory().file("s.json")), secrets: FailingSecretStore()))
        config.token = Self.planted
        #expect(!config.description.contains(Self.planted))
        #expect(!"\(config.$token)".contains(Self.planted))
    }

    /// Two `UserDefaultsStore`s over one `UserDefaults`, each given its own `FileSecretStore` over one directory
    /// (as two modules of an app would write it): a secret changed through one config is what a config created
    /// later over the other store reads.
    @Test func twoUserDefaultsStoresWithTheirOwnFileSecretStoresAgreeOnASecret() throws {
        let directory = TemporaryDirectory()
        let suite = "StorableConfigTests-r34-ud-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        let secretsDirectory = directory.file("secrets")
        let firstStore = SecretRoutingStore(
            wrapping: UserDefaultsStore(defaults), secrets: try FileSecretStore(directory: secretsDirectory))
        let secondStore = SecretRoutingStore(
            wrapping: UserDefaultsStore(defaults), secrets: try FileSecretStore(directory: secretsDirectory))
        let first = R34SecretConfig(store: firstStore)
        let second = R34SecretConfig(store: secondStore)
        first.token = "one"
        second.token = "two"
        #expect(waitUntil(seconds: 5) { first.token == "two" }, "first reads \(first.token)")
        #expect(R34SecretConfig(store: firstStore).token == "two")
    }

    /// A migration that moves an old plain value into a secret setting: the value lands in the secret store, and
    /// the file keeps no byte of it.
    @Test func aMigrationIntoASecretSettingKeepsItOutOfTheFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data("{\"r34.R34MigratingConfig.legacyToken\": \"\(Self.planted)\"}".utf8).write(to: url)
        let secrets = FailingSecretStore()
        let config = R34MigratingConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(config.token == Self.planted)
        #expect(!Self.fileHolds(url, Self.planted))
        #expect(secrets.bytes(forKey: config.$token.key) == Data("\"\(Self.planted)\"".utf8))
        #expect(
            R34MigratingConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets)).token
                == Self.planted)
    }

    /// A migration that changes a secret's type (an `Int` PIN becomes a `String`): it reads the value from the
    /// secret store and writes the new one there.
    @Test func aMigrationChangingASecretsTypeRunsOnTheSecretStoresValue() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        do {
            let old = R34PinBefore(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
            old.pin = 1234
        }
        let migrated = R34PinAfter(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(migrated.pin == "1234")
        #expect(secrets.bytes(forKey: migrated.$pin.key) == Data("\"1234\"".utf8))
        #expect(!Self.fileHolds(url, "1234"))
    }

    /// Importing, in `.replace` mode, a document exported without secrets: the secret is kept, not reset.
    @Test func replacingFromADocumentWithoutSecretsKeepsTheSecret() throws {
        let directory = TemporaryDirectory()
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(
            store: SecretRoutingStore(
                wrapping: try JSONFileStore(url: directory.file("settings.json")), secrets: secrets))
        config.token = Self.planted
        config.userName = "ann"
        let text = try ConfigDocument(exporting: [config]).jsonText()
        config.userName = "bob"
        try ConfigDocument(jsonText: text).apply(to: [config], mode: .replace)
        #expect(config.userName == "ann")
        #expect(config.token == Self.planted)
        #expect(secrets.bytes(forKey: config.$token.key) != nil)
    }

    /// Another process's change to a secret (written to the secret store directly) is read at `reload()`, and
    /// observers hear it.
    @Test func reloadReadsASecretChangedElsewhere() throws {
        let directory = TemporaryDirectory()
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(
            store: SecretRoutingStore(
                wrapping: try JSONFileStore(url: directory.file("settings.json")), secrets: secrets))
        config.token = "before"
        let heard = Locked<[String]>([])
        let token = config.$token.observe { value in heard.withLock { $0.append(value) } }
        try secrets.setSecret(Data("\"after\"".utf8), forKey: config.$token.key)
        try config.reload()
        #expect(config.token == "after")
        #expect(waitUntil { heard.withLock { $0 } == ["after"] })
        token.cancel()
    }

    /// `reset()` of a secret removes it from the secret store; the config reads its default, and so does the next.
    @Test func resetOfASecretRemovesIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        config.token = Self.planted
        config.reset()
        #expect(secrets.bytes(forKey: config.$token.key) == nil)
        #expect(config.token == "")
        #expect(
            R34SecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets)).token
                == "")
    }

    /// A plain value that another process (an older version of the app) writes to the file after the first
    /// config was created is moved by the next config made after it is read, and the configs alive read it.
    @Test func aPlainSecretWrittenLaterByAnotherProcessIsMovedByTheNextConfig() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let store = SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets)
        let first = R34SecretConfig(store: store)
        first.token = "older"
        // An older version of the app, in another process, writes the token in plain form.
        try Data("{\"r34.R34SecretConfig.token\": \"\(Self.planted)\"}".utf8).write(to: url)
        try store.reload()
        let next = R34SecretConfig(store: store)
        #expect(next.token == Self.planted, "the newer plain value is read")
        #expect(!Self.fileHolds(url, Self.planted), "the settings file still holds the plain secret")
    }

    /// UserDefaultsStore's move: a plain value written again while it is moved (another thread or process of an
    /// older version) is moved too, and `UserDefaults` keeps nothing of it in clear.
    @Test func aPlainSecretRewrittenDuringItsMoveIsNotHiddenInDefaults() throws {
        let suite = "StorableConfigTests-r34-move-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        let key = "r34.R34SecretConfig.token"
        defaults.set("first-plain", forKey: key)
        let secrets = R34InterferingSecretStore { defaults.set(Self.planted, forKey: key) }
        let config = R34SecretConfig(store: SecretRoutingStore(wrapping: UserDefaultsStore(defaults), secrets: secrets))
        let inDefaults = defaults.object(forKey: key) as? String
        #expect(config.token == Self.planted, "reads \(config.token), defaults hold \(inDefaults ?? "-")")
        #expect(inDefaults == nil)
        #expect(R34SecretConfig(store: config.store).token == config.token)
    }

    // MARK: - Managed configuration

    private static func withDefaults(_ body: (ForcingDefaults) throws -> Void) throws {
        ReportedErrors.install()
        let suite = "StorableConfigTests-r34-\(UUID().uuidString)"
        let defaults = try #require(ForcingDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        try body(defaults)
    }

    /// A managed value for a secret setting: read, never written to the secret store or the file, and not shown in
    /// `description`, `valueText` or `origin`.
    @Test func aManagedSecretIsReadButNeitherStoredNorShown() throws {
        try Self.withDefaults { defaults in
            defaults.set(["ManagedSecretConfig.token": Self.planted], forKey: ManagedDefaults.key)
            let directory = TemporaryDirectory()
            let url = directory.file("settings.json")
            let secrets = FailingSecretStore()
            let config = R34ManagedSecretConfig.make(
                store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets),
                sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            #expect(config.token == Self.planted)
            #expect(config.$token.isManaged)
            #expect(secrets.bytes(forKey: config.$token.key) == nil)
            #expect(!Self.fileHolds(url, Self.planted))
            #expect(!config.description.contains(Self.planted))
            #expect(!config.$token.origin.contains(Self.planted))
        }
    }

    /// A managed value of the wrong type for a secret setting: reported by key, without the value.
    @Test func aWrongTypedManagedSecretIsReportedWithoutItsValue() throws {
        try Self.withDefaults { defaults in
            defaults.set(["ManagedSecretConfig.pin": Self.planted], forKey: ManagedDefaults.key)
            let config = R34ManagedSecretConfig.make(
                store: InMemoryStore(), sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            #expect(config.pin == 0)
            #expect(!ReportedErrors.mentioning("ManagedSecretConfig.pin").isEmpty)
            #expect(ReportedErrors.mentioning(Self.planted).isEmpty)
            #expect(!"\(config.overrideProblems)".contains(Self.planted))
        }
    }

    /// A managed value out of a secret setting's range: reported by key, without the value, and ignored.
    @Test func anOutOfRangeManagedSecretIsReportedWithoutItsValue() throws {
        try Self.withDefaults { defaults in
            defaults.set(["ManagedSecretConfig.level": 987_654_321], forKey: ManagedDefaults.key)
            let config = R34ManagedSecretConfig.make(
                store: InMemoryStore(), sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            #expect(config.level == 5)
            #expect(!config.$level.isManaged)
            #expect(!ReportedErrors.mentioning("ManagedSecretConfig.level").isEmpty)
            #expect(ReportedErrors.mentioning("987654321").isEmpty)
            #expect(!"\(config.overrideProblems)".contains("987654321"))
            do {
                try StorableConfig.checkOverrides(of: [config])
                Issue.record("checkOverrides found nothing")
            } catch {
                #expect(!"\(error)".contains("987654321"))
            }
        }
    }

    /// Values of the wrong type, as corelibs bridges property-list numbers: a boolean for an `Int`, a number for a
    /// `Bool`, a number for a `String`, a real with a fraction for an `Int`. Each is reported by key and ignored.
    @Test func managedValuesOfTheWrongTypeAreIgnored() throws {
        try Self.withDefaults { defaults in
            defaults.set(
                [
                    "ManagedTypesConfig.count": true, "ManagedTypesConfig.flag": 1, "ManagedTypesConfig.name": 42,
                    "ManagedTypesConfig.ratioInt": 3.7,
                ], forKey: ManagedDefaults.key)
            let config = R34ManagedTypesConfig.make(
                store: InMemoryStore(), sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            #expect(config.count == 5, "a boolean read as \(config.count)")
            #expect(config.flag == false, "a number read as \(config.flag)")
            #expect(config.name == "default", "a number read as \(config.name)")
            #expect(config.ratioInt == 2, "3.7 read as \(config.ratioInt)")
            for name in ["count", "flag", "name", "ratioInt"] {
                #expect(!ReportedErrors.mentioning("ManagedTypesConfig.\(name)").isEmpty, "\(name) not reported")
            }
        }
    }

    /// The managed configuration key holding something other than a dictionary: reported, never a crash, and the
    /// settings read their lower layers.
    @Test func aManagedConfigurationThatIsNotADictionaryIsIgnored() throws {
        try Self.withDefaults { defaults in
            defaults.set("not a dictionary", forKey: ManagedDefaults.key)
            let config = R34ManagedTypesConfig.make(
                store: InMemoryStore(), sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            #expect(config.count == 5)
            defaults.set(["ManagedTypesConfig.count": 6], forKey: ManagedDefaults.key)
            #expect(waitUntil { config.count == 6 })
            defaults.set([1, 2], forKey: ManagedDefaults.key)
            #expect(waitUntil { config.count == 5 })
        }
    }

    /// An assignment to a managed secret setting is stored in the secret store, not the file, and read once the
    /// administrator removes the value.
    @Test func anAssignmentToAManagedSecretGoesToTheSecretStore() throws {
        try Self.withDefaults { defaults in
            defaults.set(["ManagedSecretConfig.token": "admin"], forKey: ManagedDefaults.key)
            let directory = TemporaryDirectory()
            let url = directory.file("settings.json")
            let secrets = FailingSecretStore()
            let config = R34ManagedSecretConfig.make(
                store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets),
                sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            config.token = Self.planted
            #expect(config.token == "admin")
            #expect(!Self.fileHolds(url, Self.planted))
            #expect(secrets.bytes(forKey: config.$token.key) == Data("\"\(Self.planted)\"".utf8))
            defaults.removeObject(forKey: ManagedDefaults.key)
            #expect(waitUntil { config.token == Self.planted })
        }
    }

    /// The dictionary removed: the setting is no longer managed, and reads the value assigned meanwhile (stored,
    /// not read, while managed); `reset()` while managed removes the stored value and keeps the managed one.
    @Test func removingTheDictionaryGivesBackTheStoredValue() throws {
        try Self.withDefaults { defaults in
            defaults.set(["ManagedSecretConfig.limit": 7], forKey: ManagedDefaults.key)
            let config = R34ManagedSecretConfig.make(
                store: InMemoryStore(), sources: ConfigSources(managed: .managedAppConfiguration(defaults)))
            #expect(config.limit == 7 && config.$limit.isManaged)
            config.limit = 9
            #expect(config.limit == 7)
            defaults.removeObject(forKey: ManagedDefaults.key)
            #expect(waitUntil { config.limit == 9 })
            #expect(!config.$limit.isManaged)
            defaults.set(["ManagedSecretConfig.limit": 8], forKey: ManagedDefaults.key)
            #expect(waitUntil { config.limit == 8 })
            config.$limit.reset()
            #expect(config.limit == 8)
            defaults.removeObject(forKey: ManagedDefaults.key)
            #expect(waitUntil { config.limit == 1 })
        }
    }
}

final class R34SecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    @Setting var userName = ""
    @Setting(secret: true) var token = ""
    @Setting(secret: true) var optionalToken: String? = nil
    @Setting(secret: true) var pin = 0
}

final class R34RenamedSecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    @Setting(previousKeys: ["old.Prefs.apiToken"], secret: true) var apiToken = ""
}

final class R34MigratingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    @Setting(secret: true) var token = ""
    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 1, "the legacy token becomes a secret") { values in
                if let legacy = try values.value("legacyToken", as: String.self) {
                    try values.setValue(legacy, for: "token")
                    values.removeValue(for: "legacyToken")
                }
            }
        ]
    }
}

final class R34ManagedSecretConfig: ManagedTestConfig, @unchecked Sendable {
    override class var namespace: String { "r34managed" }
    override class var configName: String { "ManagedSecretConfig" }
    @Setting(secret: true) var token = ""
    @Setting(secret: true) var pin = 0
    @Setting(in: 1...100, secret: true) var level = 5
    @Setting var limit = 1
}

/// A secret store in memory that runs `meanwhile` once, at its first write: another writer of the plain value
/// at the moment of a move.
final class R34InterferingSecretStore: SecretStore, @unchecked Sendable {
    private let inner = InMemorySecretStore()
    private let lock = NSLock()
    private var meanwhile: (() -> Void)?

    init(meanwhile: @escaping () -> Void) {
        self.meanwhile = meanwhile
    }

    func setMeanwhile(_ action: @escaping () -> Void) {
        lock.withLock { meanwhile = action }
    }

    var description: String { "interfering secret store" }
    func secret(forKey key: String) throws -> Data? { inner.secret(forKey: key) }
    func setSecret(_ data: Data, forKey key: String) throws {
        inner.setSecret(data, forKey: key)
        let action = lock.withLock {
            defer { meanwhile = nil }
            return meanwhile
        }
        action?()
    }
    func addSecret(_ data: Data, forKey key: String) throws -> Bool { inner.addSecret(data, forKey: key) }
    func removeSecret(forKey key: String) throws { inner.removeSecret(forKey: key) }
}

final class R34ManagedTypesConfig: ManagedTestConfig, @unchecked Sendable {
    override class var namespace: String { "r34managed" }
    override class var configName: String { "ManagedTypesConfig" }
    @Setting var count = 5
    @Setting var flag = false
    @Setting var name = "default"
    @Setting var ratioInt = 2
}

final class R34SecretBeforeRename: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    override class var configName: String { "Renamed" }
    @Setting(secret: true) var apiKey = ""
}

final class R34SecretAfterRename: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    override class var configName: String { "Renamed" }
    @Setting(previousNames: ["apiKey"], secret: true) var apiToken = ""
}

final class R34SecretClassAfterRename: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    override class var configName: String { "RenamedClass" }
    override class var previousConfigNames: [String] { ["Renamed"] }
    @Setting(secret: true) var apiKey = ""
}

final class R34PinBefore: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    override class var configName: String { "Pin" }
    @Setting(secret: true) var pin = 0
}

final class R34PinAfter: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "r34" }
    override class var configName: String { "Pin" }
    @Setting(secret: true) var pin = ""
    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 1, "the PIN is text") { values in
                if let number = try values.value("pin", as: Int.self) { try values.setValue("\(number)", for: "pin") }
            }
        ]
    }
}

/// A secret store in memory whose next read, after taking the bytes it returns, runs an action: a write that
/// finishes while a reader is between reading and noting what it read.
final class R34SlowReadSecretStore: SecretStore, @unchecked Sendable {
    private let inner = InMemorySecretStore()
    private let lock = NSLock()
    private var action: (() -> Void)?
    private var actionKey = ""

    func afterNextRead(of key: String, _ action: @escaping () -> Void) {
        lock.withLock {
            self.action = action
            actionKey = key
        }
    }

    func stored(forKey key: String) -> Data? { inner.secret(forKey: key) }

    var description: String { "slow-reading secret store" }
    func secret(forKey key: String) throws -> Data? {
        let data = inner.secret(forKey: key)
        let pending: (() -> Void)? = lock.withLock {
            guard key == actionKey else { return nil }
            defer { action = nil }
            return action
        }
        pending?()
        return data
    }
    func setSecret(_ data: Data, forKey key: String) throws { inner.setSecret(data, forKey: key) }
    func addSecret(_ data: Data, forKey key: String) throws -> Bool { inner.addSecret(data, forKey: key) }
    func removeSecret(forKey key: String) throws { inner.removeSecret(forKey: key) }
}
