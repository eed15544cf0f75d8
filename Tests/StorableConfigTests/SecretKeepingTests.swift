import Foundation
import Testing

@testable import StorableConfig
@testable import StorableConfigSecrets

/// Secret settings over a `SecretRoutingStore` that wraps a `JSONFileStore` or a `UserDefaultsStore` go to a secret
/// store: never into the file or the defaults, moved there from plain storage once, and a secret store that cannot be used loses nothing.
struct SecretKeepingTests {
    static let planted = "PLANTED-SECRET-91c2"

    @Test func aSecretSettingIsWrittenToTheSecretStoreAndNeverToTheFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let config = KeptSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        let changes = Locked<[String]>([])
        let token = config.$apiToken.observe { value in changes.withLock { $0.append(value) } }
        config.userName = "visible"
        config.apiToken = Self.planted
        config.pin = 4242
        #expect(config.apiToken == Self.planted)
        let bytes = try Data(contentsOf: url)
        #expect(bytes.range(of: Data(Self.planted.utf8)) == nil)
        #expect(bytes.range(of: Data("4242".utf8)) == nil)
        #expect(String(decoding: bytes, as: UTF8.self).contains("visible"))
        #expect(secrets.bytes(forKey: config.$apiToken.key) == Data("\"\(Self.planted)\"".utf8))
        #expect(secrets.bytes(forKey: config.$pin.key) == Data("4242".utf8))
        #expect(waitUntil { changes.withLock { $0 } == [Self.planted] })
        token.cancel()
        // A later run reads it back from the secret store.
        let later = KeptSecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(later.apiToken == Self.planted)
        #expect(later.pin == 4242)
        later.$apiToken.reset()
        #expect(secrets.bytes(forKey: config.$apiToken.key) == nil)
        #expect(config.apiToken == "unset")
    }

    @Test func aPlainValueInTheFileIsMovedOnceAndTheFileNoLongerHoldsIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let text = """
            {"secretkeep.KeptSecretConfig.apiToken": "\(Self.planted)", "secretkeep.KeptSecretConfig.pin": 1234,
             "secretkeep.KeptSecretConfig.userName": "ann", "unrelated": "kept"}
            """
        try Data(text.utf8).write(to: url)
        let secrets = FailingSecretStore()
        let config = KeptSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(config.apiToken == Self.planted)
        #expect(config.pin == 1234)
        #expect(config.userName == "ann")
        let bytes = try Data(contentsOf: url)
        #expect(bytes.range(of: Data(Self.planted.utf8)) == nil)
        #expect(bytes.range(of: Data("1234".utf8)) == nil)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"unrelated\""))
        #expect(secrets.bytes(forKey: "secretkeep.KeptSecretConfig.apiToken") == Data("\"\(Self.planted)\"".utf8))
        // Nothing set aside beside the file holds it either.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            let data = try Data(contentsOf: directory.file(name))
            #expect(data.range(of: Data(Self.planted.utf8)) == nil, "\(name)")
        }
        // A second config finds it moved, and writes nothing to the secret store.
        let writes = secrets.writeCount
        let second = KeptSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(second.apiToken == Self.planted)
        #expect(secrets.writeCount == writes)
    }

    @Test func aSecretStoreThatCannotBeUsedLosesNothingAndIsReportedByKey() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data("{\"secretkeep.LockedSecretConfig.token\": \"\(Self.planted)\"}".utf8).write(to: url)
        let secrets = FailingSecretStore()
        secrets.isLocked = true
        let config = LockedSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        // The move failed, reported by key: the plain value stays where it was, and the setting reads it there.
        #expect(try Data(contentsOf: url).range(of: Data(Self.planted.utf8)) != nil)
        #expect(config.token == Self.planted)
        let notMoved = ReportedErrors.mentioning("secretkeep.LockedSecretConfig.token")
        #expect(notMoved.count == 1)
        #expect(notMoved.first.map { if case .secretNotMoved = $0 { true } else { false } } == true)
        for error in notMoved { #expect(!error.description.contains(Self.planted)) }
        // Until then it is written where it is.
        config.token = "newer-value"
        // Once the secret store can be used, the next config moves the latest value, and the file holds it no more.
        secrets.isLocked = false
        let later = LockedSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(later.token == "newer-value")
        #expect(config.token == "newer-value")
        #expect(try Data(contentsOf: url).range(of: Data("newer-value".utf8)) == nil)
        #expect(secrets.bytes(forKey: "secretkeep.LockedSecretConfig.token") == Data("\"newer-value\"".utf8))
        // Both now write to the secret store.
        config.token = "newest"
        #expect(later.token == "newest")
        #expect(try Data(contentsOf: url).range(of: Data("newest".utf8)) == nil)
    }

    @Test func aLockedSecretStoreWithNothingToMoveIsReportedAtReadAndLosesNoWrite() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        try secrets.setSecret(Data("\"kept-in-the-vault\"".utf8), forKey: "secretkeep.VaultConfig.token")
        secrets.isLocked = true
        let config = VaultConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        #expect(config.token == "")
        #expect(ReportedErrors.mentioning("secretkeep.VaultConfig.token").count == 1)
        config.token = "typed-while-locked"
        let failures = ReportedErrors.mentioning("secretkeep.VaultConfig.token").filter {
            if case .writeFailed = $0 { return true }
            return false
        }
        #expect(failures.count == 1)
        #expect(FileManager.default.contents(atPath: url.path).map { $0.range(of: Data("typed".utf8)) == nil } ?? true)
        secrets.isLocked = false
        try config.reload()
        #expect(config.token == "kept-in-the-vault")
    }

    @Test func aSecretThatCouldNotBeReadKeepsItsLastGoodValueAtReload() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let secrets = FailingSecretStore()
        let store = SecretRoutingStore(
            wrapping: try JSONFileStore(url: directory.file("settings.json")), secrets: secrets)
        let config = KeptSecretConfig(store: store)
        config.apiToken = "good-one"
        // Another process changes it: read at reload.
        try secrets.setSecret(Data("\"from-elsewhere\"".utf8), forKey: config.$apiToken.key)
        try config.reload()
        #expect(config.apiToken == "from-elsewhere")
        secrets.isLocked = true
        #expect(throws: StorableConfigError.self) { try config.reload() }
        #expect(config.apiToken == "from-elsewhere")
    }

    @Test func userDefaultsNeverHoldsASecretAndItsPlainValueMoves() throws {
        let suite = "SecretKeepingTests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set(Self.planted, forKey: "secretkeep.KeptSecretConfig.apiToken")
        let secrets = FailingSecretStore()
        let plainStore = UserDefaultsStore(defaults, saving: .onEveryWrite)
        let config = KeptSecretConfig(store: SecretRoutingStore(wrapping: plainStore, secrets: secrets))
        #expect(config.apiToken == Self.planted)
        #expect(defaults.object(forKey: config.$apiToken.key) == nil)
        config.pin = 77
        config.userName = "plain"
        #expect(defaults.object(forKey: config.$pin.key) == nil)
        #expect(defaults.string(forKey: config.$userName.key) == "plain")
        #expect(secrets.bytes(forKey: config.$pin.key) == Data("77".utf8))
        // An outside change of the defaults does not make the secret read as gone.
        defaults.set("outside", forKey: config.$userName.key)
        plainStore.announceOutsideChanges()
        #expect(config.userName == "outside")
        #expect(config.pin == 77)
        #expect(config.apiToken == Self.planted)
    }

    @Test func withoutASecretStoreSecretsStayWhereTheyWere() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = KeptSecretConfig(store: try JSONFileStore(url: url))
        config.apiToken = Self.planted
        #expect(try Data(contentsOf: url).range(of: Data(Self.planted.utf8)) != nil)
    }

    @Test func twoConfigsOnOneFileSeeEachOthersSecretWritesAndObserversHearThem() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = FailingSecretStore()
        let first = KeptSecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        let second = KeptSecretConfig(
            store: SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets))
        let heard = Locked<[String]>([])
        let token = second.observe { change in heard.withLock { $0.append(change.key) } }
        first.apiToken = "shared-token"
        #expect(second.apiToken == "shared-token")
        #expect(waitUntil { heard.withLock { $0 } == [first.$apiToken.key] })
        second.$apiToken.reset()
        #expect(first.apiToken == "unset")
        token.cancel()
    }

    /// Four processes that start at once over a settings file holding a secret in plain form: each reads the
    /// secret, the secret store beside the file holds it, and the file holds not one byte of it.
    @Test func fourProcessesStartingAtOnceMoveAPlainSecretOnce() throws {
        let rounds = isRunningUnderThreadSanitizer ? 3 : 10
        for round in 0..<rounds {
            let directory = TemporaryDirectory()
            let url = directory.file("settings.json")
            let planted = "\(Self.planted)-\(round)"
            try Data("{\"stress.SecretRaceConfig.token\": \"\(planted)\", \"other\": 1}".utf8).write(to: url)
            let go = directory.file("go")
            let pipes = (0..<4).map { _ in Pipe() }
            let children = try pipes.map { pipe in
                try launchProduct("storable-config-stress", ["open-secret-config", url.path, go.path], output: pipe)
            }
            usleep(isRunningUnderThreadSanitizer ? 1_000_000 : 300_000)
            _ = FileManager.default.createFile(atPath: go.path, contents: nil)
            for (child, pipe) in zip(children, pipes) {
                let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                child.waitUntilExit()
                #expect(child.terminationStatus == 0)
                #expect(output == "token \(planted)\n", "round \(round)")
            }
            let bytes = try Data(contentsOf: url)
            #expect(bytes.range(of: Data(planted.utf8)) == nil, "round \(round)")
            #expect(String(decoding: bytes, as: UTF8.self).contains("\"other\""))
            // The secret is in the secret store, and nowhere else beside the file.
            let later = SecretRaceConfigForTests(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
            #expect(later.token == planted)
            let holders = try FileManager.default.subpathsOfDirectory(atPath: directory.url.path).filter { path in
                var isDirectory: ObjCBool = false
                let full = directory.file(path).path
                guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue
                else { return false }
                return (FileManager.default.contents(atPath: full) ?? Data()).range(of: Data(planted.utf8)) != nil
            }
            #expect(holders.count == 1, "\(holders)")
            #expect(holders.allSatisfy { $0.hasPrefix("settings.secrets/") }, "\(holders)")
        }
    }

    /// Configs with secrets created, observed, written and released on many threads and in many tasks at once, each
    /// over a store of its own on one file (so routers are made and dropped as stores come and go): none hangs
    /// or crashes, the file never holds a secret, and afterwards every config reads what the secret store holds.
    @Test func configsWithSecretsComeAndGoOnManyThreadsAndTasksAtOnce() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let rounds = isRunningUnderThreadSanitizer ? 20 : 100
        @Sendable func round(_ worker: Int, _ index: Int) {
            guard let store = (try? JSONFileStore(url: url)).map({ SecretRoutingStore(wrapping: $0) }) else { return }
            let config = KeptSecretConfig(store: store)
            let token = config.$apiToken.observe { _ in }
            config.apiToken = "token-\(worker)-\(index)"
            config.userName = "user-\(worker)"
            _ = config.pin
            token.cancel()
        }
        let threads = (0..<4).map { worker in
            Thread { for index in 0..<rounds { round(worker, index) } }
        }
        for thread in threads { thread.start() }
        await withTaskGroup(of: Void.self) { group in
            for worker in 4..<8 {
                group.addTask { for index in 0..<rounds { round(worker, index) } }
            }
        }
        #expect(await waitUntil { threads.allSatisfy(\.isFinished) })
        let final = KeptSecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        let secrets = try FileSecretStore(directory: directory.file("settings.secrets"))
        let held = try #require(try secrets.secret(forKey: final.$apiToken.key))
        #expect(held == Data("\"\(final.apiToken)\"".utf8))
        #expect(final.apiToken.hasPrefix("token-"))
        #expect(try Data(contentsOf: url).range(of: Data("token-".utf8)) == nil)
    }

    /// Two `UserDefaultsStore`s over one `UserDefaults`, whose `FileSecretStore`s name one directory by two paths,
    /// one of them through a symbolic link: they are one place, so a secret changed through one config is what a
    /// config created later over the other store reads.
    @Test func fileSecretStoresReachingOneDirectoryThroughALinkAreOnePlace() throws {
        let directory = TemporaryDirectory()
        let suite = "StorableConfigTests-secret-place-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        let real = directory.file("secrets")
        let link = directory.file("link")
        // Made by the store, private, before the link to it.
        let firstStore = SecretRoutingStore(
            wrapping: UserDefaultsStore(defaults), secrets: try FileSecretStore(directory: real))
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let secondStore = SecretRoutingStore(
            wrapping: UserDefaultsStore(defaults), secrets: try FileSecretStore(directory: link))
        let first = KeptSecretConfig(store: firstStore)
        let second = KeptSecretConfig(store: secondStore)
        first.apiToken = "one-token"
        second.apiToken = "two-token"
        #expect(waitUntil(seconds: 5) { first.apiToken == "two-token" }, "first reads \(first.apiToken)")
        #expect(KeptSecretConfig(store: firstStore).apiToken == "two-token")
    }

    @Test func exportLeavesSecretsOutUnlessAsked() throws {
        let directory = TemporaryDirectory()
        let config = KeptSecretConfig(
            store: SecretRoutingStore(
                wrapping: try JSONFileStore(url: directory.file("settings.json")), secrets: FailingSecretStore()))
        config.apiToken = Self.planted
        let plain = try ConfigDocument(exporting: [config]).jsonText()
        #expect(!plain.contains(Self.planted))
        let full = try ConfigDocument(exporting: [config], includingSecrets: true).jsonText()
        #expect(full.contains(Self.planted))
    }
}

final class KeptSecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "secretkeep" }
    @Setting var userName = ""
    @Setting(validate: { $0.count < 3 ? "too short" : nil }, secret: true) var apiToken = "unset"
    @Setting(secret: true) var pin = 0
}

/// The stress program's `SecretRaceConfig`, as this process reads it.
final class SecretRaceConfigForTests: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    override class var configName: String { "SecretRaceConfig" }
    @Setting(secret: true) var token = ""
}

final class VaultConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "secretkeep" }
    @Setting(secret: true) var token = ""
}

final class LockedSecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "secretkeep" }
    @Setting(secret: true) var token = ""
}

/// A secret store in memory that can be locked, as a device before its first unlock locks the Keychain, and that
/// counts its writes.
final class FailingSecretStore: SecretStore, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Data] = [:]
    private var locked = false
    private var writes = 0

    var isLocked: Bool {
        get { lock.withLock { locked } }
        set { lock.withLock { locked = newValue } }
    }

    var writeCount: Int { lock.withLock { writes } }

    var description: String { "test secret store" }

    func bytes(forKey key: String) -> Data? { lock.withLock { values[key] } }

    private func check() throws {
        if locked { throw StorableConfigError.secretStoreUnavailable(store: description, reason: "it is locked") }
    }

    func secret(forKey key: String) throws -> Data? {
        try lock.withLock {
            try check()
            return values[key]
        }
    }

    func setSecret(_ data: Data, forKey key: String) throws {
        try lock.withLock {
            try check()
            writes += 1
            values[key] = data
        }
    }

    func addSecret(_ data: Data, forKey key: String) throws -> Bool {
        try lock.withLock {
            try check()
            guard values[key] == nil else { return false }
            writes += 1
            values[key] = data
            return true
        }
    }

    func removeSecret(forKey key: String) throws {
        try lock.withLock {
            try check()
            writes += 1
            values[key] = nil
        }
    }
}
