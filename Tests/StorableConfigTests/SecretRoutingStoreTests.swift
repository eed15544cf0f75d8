import Foundation
import StorableConfigSecrets
import Testing

@testable import StorableConfig

/// `SecretRoutingStore`, the store of the `StorableConfigSecrets` module that keeps secrets apart, on the core's
/// public API: what earlier versions of the core's stores kept apart reads back through it, a config straight over
/// those stores says its secrets are kept in plain form, and what the core offers a JSON file reaches one wrapped.
struct SecretRoutingStoreTests {
    static let planted = "PLANTED-ROUTED-5e7d"

    /// A secret that the store of an earlier version kept in `settings.secrets/` beside the file (as its compact
    /// JSON text, in a file named by `FileSecretStore`), read back through `SecretRoutingStore(wrapping:)`, whose
    /// default secret store is that directory; a new write lands there too, never in the file.
    @Test func whatAnEarlierVersionKeptBesideTheFileReadsBackThroughTheWrapper() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data(#"{"secretkeep.KeptSecretConfig.userName": "kept"}"#.utf8).write(to: url)
        let earlier = try FileSecretStore(directory: directory.file("settings.secrets"))
        try earlier.setSecret(Data("\"\(Self.planted)\"".utf8), forKey: "secretkeep.KeptSecretConfig.apiToken")
        try earlier.setSecret(Data("31".utf8), forKey: "secretkeep.KeptSecretConfig.pin")

        let config = KeptSecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        #expect(config.userName == "kept")
        #expect(config.apiToken == Self.planted)
        #expect(config.pin == 31)
        config.apiToken = "new-\(Self.planted)"
        #expect(try earlier.secret(forKey: config.$apiToken.key) == Data("\"new-\(Self.planted)\"".utf8))
        #expect(try Data(contentsOf: url).range(of: Data(Self.planted.utf8)) == nil)
    }

    /// A config with secret settings created straight over a `JSONFileStore` reports each secret key once for the
    /// storage (not again for a second config, nor for a second store on the file), naming the key, the file and
    /// the fix, and the value is stored in the file as any value is; over the wrapper, and over an `InMemoryStore`,
    /// nothing is reported.
    @Test func aSecretOverAPlainFileIsReportedOnceAndKeptInTheFile() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = KeptSecretConfig(store: try JSONFileStore(url: url))
        _ = KeptSecretConfig(store: try JSONFileStore(url: url))
        let reports = ReportedErrors.mentioning(url.path)
        #expect(reports.count == 2, "\(reports)")
        #expect(Set(reports.compactMap(\.key)) == [config.$apiToken.key, config.$pin.key])
        for report in reports {
            guard case .secretKeptInPlainForm = report else {
                Issue.record("not secretKeptInPlainForm: \(report)")
                continue
            }
            #expect(report.description.contains("SecretRoutingStore(wrapping:)"))
        }
        config.apiToken = Self.planted
        #expect(try Data(contentsOf: url).range(of: Data(Self.planted.utf8)) != nil)

        let otherURL = directory.file("other.json")
        _ = KeptSecretConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: otherURL)))
        #expect(ReportedErrors.mentioning(otherURL.path).isEmpty)
        _ = OnlyInMemorySecretConfig(store: InMemoryStore())
        #expect(ReportedErrors.mentioning("'routedonlymemory.").isEmpty)
    }

    /// A config over a wrapper that keeps no secrets itself (a synced store, a user's own) reaches the
    /// `SecretRoutingStore` below it, whose secret store keeps the secret; over a wrapper of a plain file it reports
    /// the secret kept in plain form, naming the file.
    @Test func aWrapperAboveTheRoutingStorePassesTheSecretsOnAndOneAboveAPlainFileReportsThem() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = InMemorySecretStore()
        let routed = RoutedSecretConfig(
            store: PassingStore(SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets)))
        routed.token = Self.planted
        routed.name = "plain"
        #expect(secrets.secret(forKey: routed.$token.key) == Data("\"\(Self.planted)\"".utf8))
        #expect(try Data(contentsOf: url).range(of: Data(Self.planted.utf8)) == nil)
        #expect(ReportedErrors.mentioning(url.path).isEmpty)

        let plainURL = directory.file("plain.json")
        _ = RoutedSecretConfig(store: PassingStore(try JSONFileStore(url: plainURL)))
        let reports = ReportedErrors.mentioning(plainURL.path)
        #expect(reports.count == 1, "\(reports)")
        #expect(reports.first?.key == routed.$token.key)
    }

    /// Two wrappers of one `InMemoryStore`, each with the default secret store, share its secrets, as two wrappers
    /// of one file share the directory beside it.
    @Test func twoWrappersOfOneMemoryStoreShareItsSecrets() {
        let memory = InMemoryStore()
        let first = RoutedSecretConfig(store: SecretRoutingStore(wrapping: memory))
        let second = RoutedSecretConfig(store: SecretRoutingStore(wrapping: memory))
        first.token = Self.planted
        #expect(second.token == Self.planted)
        // Created afterwards, so that it reads the secret store rather than hearing the write.
        let third = RoutedSecretConfig(store: SecretRoutingStore(wrapping: memory))
        #expect(third.token == Self.planted)
        #expect(memory.value(forKey: first.$token.key) == nil)
        let other = RoutedSecretConfig(store: SecretRoutingStore(wrapping: InMemoryStore()))
        #expect(other.token == "")
    }

    /// The wrapper keeps failed writes as the wrapped store does: a plain value that `UserDefaultsStore` refuses
    /// (over its size limit) reads as assigned, as over the store itself; a secret whose secret store fails keeps
    /// its last good value (`WriteNotKept`); both are reported naming the key.
    @Test func aFailedPlainWriteIsKeptAsTheWrappedStoreKeepsItAndAFailedSecretWriteIsNot() throws {
        ReportedErrors.install()
        let suite = "SecretRoutingStoreTests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer {
            defaults.removePersistentDomain(forName: suite)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suite))
        }
        let secrets = FailingSecretStore()
        let limited = UserDefaultsStore(defaults, saving: .onEveryWrite, valueSizeLimit: 16)
        let config = RoutedSecretConfig(store: SecretRoutingStore(wrapping: limited, secrets: secrets))
        config.name = "before"
        config.token = "good"
        let big = String(repeating: "x", count: 64)
        config.name = big
        #expect(config.name == big)
        #expect(defaults.string(forKey: config.$name.key) == "before")
        #expect(Self.writeFailures(of: config.$name.key) == 1)
        secrets.isLocked = true
        config.token = "lost-\(Self.planted)"
        #expect(config.token == "good")
        #expect(Self.writeFailures(of: config.$token.key) == 1)
    }

    /// A write of a plain and a secret value (a batch) whose plain part fails writes no secret, and no config
    /// believes the secret: the setting keeps its last good value, as a config created later reads it, whatever
    /// the wrapped store keeps of its failed writes (a JSON file keeps the plain one).
    @Test func aBatchWhosePlainPartFailsBelievesNoSecret() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let secrets = InMemorySecretStore()
        let store = SecretRoutingStore(wrapping: try JSONFileStore(url: url), secrets: secrets)
        let config = BatchSecretConfig(store: store)
        config.batch {
            config.name = "before"
            config.token = "good"
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path) }
        config.batch {
            config.name = "after"
            config.token = "never-\(Self.planted)"
        }
        #expect(config.token == "good")
        #expect(secrets.secret(forKey: config.$token.key) == Data("\"good\"".utf8))
        #expect(BatchSecretConfig(store: store).token == "good")
        #expect(config.name == "after")
        #expect(ReportedErrors.mentioning(url.path).contains { $0.description.contains("read-only") })
    }

    /// The write failures reported for `key`.
    private static func writeFailures(of key: String) -> Int {
        ReportedErrors.mentioning("'\(key)'").filter { error in
            if case .writeFailed = error { return true }
            return false
        }.count
    }

    /// The secret store `SecretRoutingStore(wrapping:)` takes for each kind of store: beside a JSON file, beside a
    /// suite's property list, in memory for memory, and the same one for a wrapper of a wrapper.
    @Test func theDefaultSecretStoreFollowsTheWrappedStore() throws {
        let directory = TemporaryDirectory()
        let file = try JSONFileStore(url: directory.file("app.json"))
        #expect("\(SecretStores.forStore(file))" == "directory \(directory.file("app.secrets").path)")
        #expect(SecretStores.forStore(InMemoryStore()) is InMemorySecretStore)
        let routing = SecretRoutingStore(wrapping: file)
        #expect(ObjectIdentifier(SecretStores.forStore(routing)) == ObjectIdentifier(routing.secrets))
        #expect(ObjectIdentifier(routing.wrappedStore) == ObjectIdentifier(file))
        #expect(ObjectIdentifier(routing.storageIdentity) == ObjectIdentifier(file.storageIdentity))
        let suite = "SecretRoutingStoreTests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaultsStore(suiteName: suite))
        defer { defaults.defaults.removePersistentDomain(forName: suite) }
        #expect(defaults.suiteName == suite)
        #expect("\(SecretStores.forStore(defaults))".hasSuffix("/\(suite).secrets"))
    }

    /// What the core does for a JSON file reaches one that is wrapped (`WrappingConfigStore`): a stored value that
    /// does not fit the setting is quoted as the file spells it (`{"a": [1,…]}`), not as the value read.
    @Test func aWrappedFileStillQuotesTheTextOfAValueThatDoesNotFit() throws {
        ReportedErrors.install()
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let stored = """
            {
              "routed.RoutedCountConfig.scores": {"a": [1,
                 99999999999999999999999]}
            }
            """
        try Data(stored.utf8).write(to: url)
        let config = RoutedCountConfig(store: SecretRoutingStore(wrapping: try JSONFileStore(url: url)))
        #expect(config.scores.isEmpty)
        let reports = ReportedErrors.mentioning("'routed.RoutedCountConfig.scores'").map(\.description)
        #expect(reports.count == 1, "\(reports)")
        #expect(
            reports.first?.contains(#"stored value {"a": [1,99999999999999999999999]} is left"#) == true, "\(reports)")
    }
}

final class RoutedSecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "routedmemory" }
    @Setting var name = ""
    @Setting(secret: true) var token = ""
}

/// Written in batches of a plain and a secret value.
final class BatchSecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "routedbatch" }
    @Setting var name = ""
    @Setting(secret: true) var token = ""
}

/// Created over an `InMemoryStore` only.
final class OnlyInMemorySecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "routedonlymemory" }
    @Setting(secret: true) var token = ""
}

/// A store that passes every call on to another, as a synced store does, keeping no secrets itself.
final class PassingStore: IdentifiedConfigStore, WrappingConfigStore {
    let wrappedStore: any ConfigStore

    init(_ store: any ConfigStore) {
        wrappedStore = store
    }

    var storageIdentity: AnyObject { (wrappedStore as? any IdentifiedConfigStore)?.storageIdentity ?? wrappedStore }
    func value(forKey key: String) throws -> StoredValue? { try wrappedStore.value(forKey: key) }
    func values(forKeys keys: [String]) throws -> [String: StoredValue] { try wrappedStore.values(forKeys: keys) }
    func setValue(_ value: StoredValue, forKey key: String) throws { try wrappedStore.setValue(value, forKey: key) }
    func removeValue(forKey key: String) throws { try wrappedStore.removeValue(forKey: key) }
    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        try wrappedStore.setValues(values, removingValuesForKeys: keysToRemove)
    }
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try wrappedStore.updateValues(forKeys: keys, transform)
    }
    var updateAtomicity: ConfigStoreAtomicity { wrappedStore.updateAtomicity }
    var keepsFailedWrites: Bool { wrappedStore.keepsFailedWrites }
}

final class RoutedCountConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "routed" }
    @Setting var scores: [String: Int] = [:]
}
