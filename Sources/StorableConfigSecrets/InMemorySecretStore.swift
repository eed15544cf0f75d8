import Foundation
import StorableConfig

/// A secret store that keeps secrets in memory only, for tests and previews.
///
/// ```swift
/// let secrets = InMemorySecretStore(["com.example.app.AppConfig.apiToken": Data("preview".utf8)])
/// ```
public final class InMemorySecretStore: SecretStore {
    private let secrets: Locked<[String: Data]>

    /// Creates a store holding `secrets`.
    public init(_ secrets: [String: Data] = [:]) {
        self.secrets = Locked(secrets)
    }

    /// `memory`.
    public var description: String { "memory" }

    /// The secret stored for `key`, or `nil` if there is none.
    public func secret(forKey key: String) -> Data? {
        secrets.withLock { $0[key] }
    }

    /// Stores `data` for `key`, replacing what it held.
    public func setSecret(_ data: Data, forKey key: String) {
        secrets.withLock { $0[key] = data }
    }

    /// Stores `data` for `key` only if `key` holds no secret, and returns whether it did.
    public func addSecret(_ data: Data, forKey key: String) -> Bool {
        secrets.withLock { secrets in
            guard secrets[key] == nil else { return false }
            secrets[key] = data
            return true
        }
    }

    /// Removes the secret for `key`, if there is one.
    public func removeSecret(forKey key: String) {
        _ = secrets.withLock { $0.removeValue(forKey: key) }
    }
}
