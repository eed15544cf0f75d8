// Tests of stores one writes (Docs/WritingAStore.md, Docs/Secrets.md): the stores, reduced to their shape.
import Foundation
import StorableConfig
import StorableConfigSecrets

final class DirectoryStore: ConfigStore, @unchecked Sendable {
    private let memory = InMemoryStore()
    init(directory: URL) throws {}
    func value(forKey key: String) throws -> StoredValue? { memory.value(forKey: key) }
    func setValue(_ value: StoredValue, forKey key: String) throws { memory.setValue(value, forKey: key) }
    func removeValue(forKey key: String) throws { memory.removeValue(forKey: key) }
}

final class MyVaultStore: SecretStore {
    private let files: FileSecretStore
    init(name: String) throws {
        files = try FileSecretStore(directory: FileManager.default.temporaryDirectory.appendingPathComponent(name))
    }
    var description: String { "MyVaultStore" }
    func secret(forKey key: String) throws -> Data? { try files.secret(forKey: key) }
    func setSecret(_ data: Data, forKey key: String) throws { try files.setSecret(data, forKey: key) }
    func addSecret(_ data: Data, forKey key: String) throws -> Bool { try files.addSecret(data, forKey: key) }
    func removeSecret(forKey key: String) throws { try files.removeSecret(forKey: key) }
}

// example
