import Foundation
import StorableConfig

/// Where the values of secret settings (`@Setting(secret: true)`) are kept instead of the config's store: the
/// Keychain on Apple platforms (``KeychainSecretStore``), and elsewhere one file per secret, readable by its owner
/// only, in a directory beside the settings file (``FileSecretStore``).
///
/// A secret store holds bytes by key: the full key of the setting (`com.example.app.AppConfig.apiToken`). The
/// stores that keep secrets apart (``UserDefaultsStore``, ``JSONFileStore``) write a value as its compact JSON text,
/// and read bytes that are not JSON as a string.
///
/// Write your own for another vault (a hardware token, a platform's secret service), and check it with
/// `SecretStoreConformance` from the `StorableConfigTesting` library.
public protocol SecretStore: AnyObject, Sendable, CustomStringConvertible {
    /// The secret stored for `key`, or `nil` if there is none.
    /// - Throws: ``StorableConfigError/secretStoreUnavailable(store:reason:)`` when the store cannot be read now
    ///   (a device before its first unlock, a missing or unsafe directory); other errors for the key alone.
    func secret(forKey key: String) throws -> Data?
    /// Stores `data` for `key`, replacing what it held. Another reader sees the old bytes or the new ones, never
    /// a part of either, even when the process is killed while it writes.
    func setSecret(_ data: Data, forKey key: String) throws
    /// Stores `data` for `key` only if `key` holds no secret, and returns whether it did. Of several processes
    /// that add to one key at once, exactly one succeeds: the plain value of a secret is moved so, once.
    func addSecret(_ data: Data, forKey key: String) throws -> Bool
    /// Removes the secret for `key`; removing one that is not there is not an error.
    func removeSecret(forKey key: String) throws
}
