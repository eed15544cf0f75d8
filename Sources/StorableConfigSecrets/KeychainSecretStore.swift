import Foundation
import StorableConfig

/// A secret store that keeps each secret as a generic-password item of the Keychain: the secret store of Apple
/// platforms.
///
/// ```swift
/// let secrets = KeychainSecretStore(accessGroup: "TEAMID.com.example.shared", accessibility: .afterFirstUnlock)
/// ```
///
/// An item's service is the store's ``service`` (by default ``StorableConfig/defaultNamespace``, the bundle
/// identifier) and its account is the secret's key. Items are in the data protection keychain
/// (`kSecUseDataProtectionKeychain`, on macOS too), of the ``Accessibility`` class given, in the access group
/// given (an app group's, to share secrets with extensions), and synced through iCloud Keychain only when
/// `synchronizable` is set. A locked device, a program without a keychain-access-groups entitlement and a
/// missing keychain are ``StorableConfigError/secretStoreUnavailable(store:reason:)``; other failures name the
/// key and the `OSStatus`.
///
/// On platforms without Security.framework (Linux), the type exists for the library's own tests, with no
/// public initializer.
public final class KeychainSecretStore: SecretStore {
    /// When an item can be read: a `kSecAttrAccessible` value.
    public enum Accessibility: String, Sendable, CaseIterable {
        /// While the device is unlocked (`kSecAttrAccessibleWhenUnlocked`).
        case whenUnlocked
        /// While the device is unlocked, on this device only (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`).
        case whenUnlockedThisDeviceOnly
        /// After the first unlock since the device started, so that background work can read it
        /// (`kSecAttrAccessibleAfterFirstUnlock`): the default.
        case afterFirstUnlock
        /// After the first unlock, on this device only (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
        case afterFirstUnlockThisDeviceOnly
        /// While the device is unlocked and has a passcode, on this device only
        /// (`kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`).
        case whenPasscodeSetThisDeviceOnly
    }

    /// The items' service (`kSecAttrService`).
    public let service: String
    /// The items' access group (`kSecAttrAccessGroup`), or `nil` for the app's default one.
    public let accessGroup: String?
    /// When the items can be read.
    public let accessibility: Accessibility
    /// Whether the items are synced through iCloud Keychain (`kSecAttrSynchronizable`). An item of a class
    /// that is for this device only cannot be: the Keychain refuses to add it.
    public let synchronizable: Bool
    let backend: any KeychainBackend

    init(
        service: String, accessGroup: String?, accessibility: Accessibility, synchronizable: Bool,
        backend: any KeychainBackend
    ) {
        self.service = service
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.backend = backend
    }

    /// `Keychain service com.example.app`, with the access group when there is one.
    public var description: String {
        "Keychain service \(service)" + (accessGroup.map { " in access group \($0)" } ?? "")
    }

    func item(_ key: String) -> KeychainItem {
        KeychainItem(service: service, account: key, accessGroup: accessGroup, synchronizable: synchronizable)
    }

    /// The secret stored for `key`, or `nil` if there is none.
    public func secret(forKey key: String) throws -> Data? {
        let (status, data) = backend.copyData(item(key))
        switch status {
        case KeychainStatus.success: return data ?? Data()
        case KeychainStatus.itemNotFound: return nil
        default: throw KeychainStatus.error(status, key: key, operation: "SecItemCopyMatching", store: description)
        }
    }

    /// Stores `data` for `key`, replacing what it held.
    public func setSecret(_ data: Data, forKey key: String) throws {
        // Update first: the usual write replaces a secret. An item added meanwhile by another process is
        // updated after all.
        for _ in 0..<2 {
            let updated = backend.update(item(key), data: data, accessibility: accessibility)
            if updated == KeychainStatus.success { return }
            guard updated == KeychainStatus.itemNotFound else {
                throw KeychainStatus.error(updated, key: key, operation: "SecItemUpdate", store: description)
            }
            let added = backend.add(item(key), data: data, accessibility: accessibility)
            if added == KeychainStatus.success { return }
            guard added == KeychainStatus.duplicateItem else {
                throw KeychainStatus.error(added, key: key, operation: "SecItemAdd", store: description)
            }
        }
        throw KeychainStatus.error(KeychainStatus.duplicateItem, key: key, operation: "SecItemAdd", store: description)
    }

    /// Stores `data` for `key` only if `key` holds no secret, and returns whether it did.
    public func addSecret(_ data: Data, forKey key: String) throws -> Bool {
        let status = backend.add(item(key), data: data, accessibility: accessibility)
        switch status {
        case KeychainStatus.success: return true
        case KeychainStatus.duplicateItem: return false
        default: throw KeychainStatus.error(status, key: key, operation: "SecItemAdd", store: description)
        }
    }

    /// Removes the secret for `key`, if there is one.
    public func removeSecret(forKey key: String) throws {
        let status = backend.delete(item(key))
        guard status == KeychainStatus.success || status == KeychainStatus.itemNotFound else {
            throw KeychainStatus.error(status, key: key, operation: "SecItemDelete", store: description)
        }
    }
}
