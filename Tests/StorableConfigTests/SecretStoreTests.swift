import Foundation
import StorableConfigTesting
import Testing

@testable import StorableConfig
@testable import StorableConfigSecrets

/// The secret stores against the conformance kit, the Keychain store's logic over a fake Keychain, and systemd's
/// credentials directory as a source.
struct SecretStoreTests {
    init() { ReportedErrors.install() }

    @Test func inMemorySecretStorePassesTheConformanceKit() throws {
        let store = InMemorySecretStore()
        try SecretStoreConformance(persistent: false) { store }.run()
    }

    /// Where the default secret stores keep secrets off Apple platforms, as Docs/Secrets.md names the directories:
    /// worked out from the environment as `ProcessInfo` reads it, against the library's own reading.
    @Test(.enabled(if: !secretsGoToTheKeychain, "Apple platforms keep secrets in the Keychain"))
    func theDefaultSecretStoresKeepSecretsWhereTheDocsSay() throws {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config").path
        let suite = "StorableConfigTests-places-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        #expect(
            SecretStores.forDefaults(defaults, suiteName: "com.example.suite").description
                == "directory \(configHome)/com.example.suite.secrets")
        #expect(
            SecretStores.forDefaults(defaults).description
                == "directory \(configHome)/\(ProcessInfo.processInfo.processName).secrets")
        #expect(
            SecretStores.besideFile(at: URL(fileURLWithPath: "/srv/app/../app/settings.json")).description
                == "directory /srv/app/settings.secrets")
    }

    /// A relative `$HOME` is taken from the working directory when the store is made, as the settings file's own
    /// place is: a program that changes its working directory afterwards still finds its secrets there. (In a
    /// process of its own, since it changes the environment and the working directory.)
    @Test(.enabled(if: !secretsGoToTheKeychain, "Apple platforms keep secrets in the Keychain"))
    func aRelativeHomeIsTakenFromTheWorkingDirectoryWhenTheStoreIsMade() async {
        #if !canImport(Darwin)
            await #expect(processExitsWith: .success) {
                let base = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "StorableConfigTests-relative-home-\(getpid())")
                try? FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: base) }
                guard FileManager.default.changeCurrentDirectoryPath(base.path) else { exit(2) }
                setenv("HOME", "home", 1)
                unsetenv("XDG_CONFIG_HOME")
                let store = SecretStores.forDefaults(.standard, suiteName: "com.example.suite")
                let other = base.appendingPathComponent("elsewhere")
                try? FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
                guard FileManager.default.changeCurrentDirectoryPath(other.path) else { exit(3) }
                guard (try? store.setSecret(Data("s3cret".utf8), forKey: "token")) != nil else { exit(4) }
                let expected = base.appendingPathComponent("home/.config/com.example.suite.secrets")
                guard let reopened = try? FileSecretStore(directory: expected),
                    (try? reopened.secret(forKey: "token")) == Data("s3cret".utf8)
                else { exit(5) }
                exit(0)
            }
        #endif
    }

    @Test func fileSecretStorePassesTheConformanceKit() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("secrets")
        try SecretStoreConformance { try FileSecretStore(directory: url) }.run()
        withExtendedLifetime(directory) {}
    }

    @Test func keychainStoreOverAFakeKeychainPassesTheConformanceKit() throws {
        let keychain = FakeKeychain()
        try SecretStoreConformance { Self.keychainStore(keychain) }.run()
    }

    static func keychainStore(
        _ keychain: FakeKeychain, accessGroup: String? = nil,
        accessibility: KeychainSecretStore.Accessibility = .afterFirstUnlock, synchronizable: Bool = false
    ) -> KeychainSecretStore {
        KeychainSecretStore(
            service: "com.example.app", accessGroup: accessGroup, accessibility: accessibility,
            synchronizable: synchronizable, backend: keychain)
    }

    @Test func aKitRunFindsAStoreThatLosesAddsOrShowsSecrets() throws {
        let failure = try #require(throws: ConfigStoreConformance.Failure.self) {
            try SecretStoreConformance(persistent: false) { CarelessSecretStore() }.run()
        }
        let text = failure.description
        #expect(text.contains("exactly one wins"))
        #expect(text.contains("adds only to a key without a secret"))
        #expect(text.contains("an error that shows a secret's bytes"))
        #expect(!text.contains("secret-"), "the kit's own report shows a secret")
    }

    @Test func keychainItemsHaveTheServiceTheKeyAsAccountTheGroupTheClassAndSync() throws {
        let keychain = FakeKeychain()
        let store = Self.keychainStore(
            keychain, accessGroup: "TEAM.com.example.shared", accessibility: .whenUnlockedThisDeviceOnly,
            synchronizable: true)
        try store.setSecret(Data("token".utf8), forKey: "com.example.app.AppConfig.apiToken")
        let item = KeychainItem(
            service: "com.example.app", account: "com.example.app.AppConfig.apiToken",
            accessGroup: "TEAM.com.example.shared", synchronizable: true)
        #expect(
            keychain.items.withLock { $0 }
                == [item: FakeKeychain.Stored(data: Data("token".utf8), accessibility: .whenUnlockedThisDeviceOnly)])
        #expect(store.description == "Keychain service com.example.app in access group TEAM.com.example.shared")
        // Items of another service, group or sync setting are others' items.
        let plain = Self.keychainStore(keychain)
        #expect(try plain.secret(forKey: "com.example.app.AppConfig.apiToken") == nil)
    }

    @Test(arguments: [
        KeychainStatus.interactionNotAllowed, KeychainStatus.missingEntitlement, KeychainStatus.notAvailable,
    ])
    func aLockedOrUnavailableKeychainIsAnUnavailableStore(status: Int32) throws {
        let keychain = FakeKeychain()
        let store = Self.keychainStore(keychain)
        keychain.failure.withLock { $0 = status }
        for attempt in Self.everyCall(store, data: Data("hunter2".utf8)) {
            let error = try #require(throws: StorableConfigError.self) { try attempt() }
            guard case .secretStoreUnavailable(let name, let reason) = error else {
                Issue.record("\(error)")
                continue
            }
            #expect(name == "Keychain service com.example.app")
            #expect(!reason.isEmpty && !error.description.contains("hunter2"))
        }
    }

    @Test func anotherKeychainFailureNamesTheKeyAndTheStatus() throws {
        let keychain = FakeKeychain()
        let store = Self.keychainStore(keychain)
        keychain.failure.withLock { $0 = -25293 }
        for attempt in Self.everyCall(store, data: Data("hunter2".utf8)) {
            let error = try #require(throws: StorableConfigError.self) { try attempt() }
            #expect(error.key == "k.token")
            #expect(error.description.contains("-25293"))
            #expect(!error.description.contains("hunter2"))
        }
    }

    /// A call of each of the store's four methods.
    static func everyCall(_ store: some SecretStore, data: Data) -> [() throws -> Void] {
        [
            { _ = try store.secret(forKey: "k.token") }, { try store.setSecret(data, forKey: "k.token") },
            { _ = try store.addSecret(data, forKey: "k.token") }, { try store.removeSecret(forKey: "k.token") },
        ]
    }

    @Test func setSecretAddsThenUpdatesAndAddSecretLeavesAHeldItem() throws {
        let keychain = FakeKeychain()
        let store = Self.keychainStore(keychain, accessibility: .afterFirstUnlock)
        try store.setSecret(Data("1".utf8), forKey: "k")
        let later = Self.keychainStore(keychain, accessibility: .whenUnlocked)
        try later.setSecret(Data("2".utf8), forKey: "k")
        let stored = keychain.items.withLock { Array($0.values) }
        #expect(stored == [FakeKeychain.Stored(data: Data("2".utf8), accessibility: .whenUnlocked)])
        #expect(try !later.addSecret(Data("3".utf8), forKey: "k"))
        #expect(try store.secret(forKey: "k") == Data("2".utf8))
    }

    // MARK: systemd credentials

    @Test func noCredentialsDirectoryWithoutTheVariable() {
        #expect(ConfigSource.credentialsDirectory(environment: [:]) == nil)
        #expect(ConfigSource.credentialsDirectory(environment: ["CREDENTIALS_DIRECTORY": ""]) == nil)
    }

    @Test func theCredentialsDirectoryIsASecretSourceThatAConfigReads() throws {
        let directory = TemporaryDirectory()
        try "hunter2".write(to: directory.file("SERVER_CONFIG_NAME"), atomically: true, encoding: .utf8)
        try "8443".write(to: directory.file("srv.ServerConfig.port"), atomically: true, encoding: .utf8)
        let source = try #require(
            ConfigSource.credentialsDirectory(environment: ["CREDENTIALS_DIRECTORY": directory.url.path]))
        #expect(source == .directory(directory.url.path, secret: true))
        let store = InMemoryStore()
        let config = ServerConfig(store: store, sources: ConfigSources(aboveStore: [source]))
        #expect(config.name == "hunter2")
        #expect(config.port == 8443)
        #expect(config.$name.isRedacted)
        #expect(!config.description.contains("hunter2"))
        config.name = "assigned"
        #expect(config.name == "hunter2", "a credential wins over an assignment")
        #expect(try String(contentsOf: directory.file("SERVER_CONFIG_NAME"), encoding: .utf8) == "hunter2")
    }
}

/// A secret store that breaks the contract: adds always win, and errors show the secret.
final class CarelessSecretStore: SecretStore {
    private let secrets = Locked<[String: Data]>([:])
    var description: String { "careless" }

    func secret(forKey key: String) throws -> Data? {
        secrets.withLock { $0[key] }
    }

    func setSecret(_ data: Data, forKey key: String) throws {
        guard !key.hasSuffix(".text") else {
            throw StorableConfigError.writeFailed(
                key: key, reason: "cannot write \(String(decoding: data, as: UTF8.self))")
        }
        secrets.withLock { $0[key] = data }
    }

    func addSecret(_ data: Data, forKey key: String) throws -> Bool {
        secrets.withLock { $0[key] = data }
        return true
    }

    func removeSecret(forKey key: String) throws {
        _ = secrets.withLock { $0.removeValue(forKey: key) }
    }
}

/// Whether the default secret stores are the Keychain (Apple platforms) rather than directories.
#if canImport(Security)
    let secretsGoToTheKeychain = true
#else
    let secretsGoToTheKeychain = false
#endif
