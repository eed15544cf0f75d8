import Foundation
import StorableConfig
import StorableConfigSecrets
import Testing

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
        let memory = InMemoryStore()
        _ = KeptSecretConfig(store: memory)
        let fromMemory = ReportedErrors.mentioning("keeps its value in plain form").filter {
            !$0.description.contains("/")
        }
        #expect(fromMemory.isEmpty, "\(fromMemory)")
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

final class RoutedCountConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "routed" }
    @Setting var scores: [String: Int] = [:]
}
