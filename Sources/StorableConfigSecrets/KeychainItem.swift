import Foundation
import StorableConfig

/// A generic-password item of the Keychain as plain Swift values: what a ``KeychainSecretStore`` asks the
/// Keychain for, without Security.framework, so that its logic is tested on every platform.
struct KeychainItem: Hashable, Sendable {
    /// `kSecAttrService`.
    var service: String
    /// `kSecAttrAccount`: the secret's key.
    var account: String
    /// `kSecAttrAccessGroup`, or `nil` for the app's default group.
    var accessGroup: String?
    /// `kSecAttrSynchronizable`: whether the item is synced through iCloud Keychain.
    var synchronizable: Bool
}

/// The Keychain calls that a ``KeychainSecretStore`` makes, returning their `OSStatus` as SecItem's functions do:
/// 0, or an error such as ``KeychainStatus/itemNotFound``.
protocol KeychainBackend: Sendable {
    /// `SecItemAdd` of `item` holding `data`, with `kSecAttrAccessible` set to `accessibility`.
    func add(_ item: KeychainItem, data: Data, accessibility: KeychainSecretStore.Accessibility) -> Int32
    /// `SecItemCopyMatching` of `item`, returning its data (`kSecReturnData`, `kSecMatchLimitOne`).
    func copyData(_ item: KeychainItem) -> (status: Int32, data: Data?)
    /// `SecItemUpdate` of `item` to hold `data` and be of `accessibility`.
    func update(_ item: KeychainItem, data: Data, accessibility: KeychainSecretStore.Accessibility) -> Int32
    /// `SecItemDelete` of `item`.
    func delete(_ item: KeychainItem) -> Int32
}

/// The `OSStatus` values a ``KeychainSecretStore`` tells apart, and what the others mean to it.
enum KeychainStatus {
    static let success: Int32 = 0
    /// `errSecItemNotFound`: no such item.
    static let itemNotFound: Int32 = -25300
    /// `errSecDuplicateItem`: the item is there already.
    static let duplicateItem: Int32 = -25299
    /// `errSecInteractionNotAllowed`: the device is locked, or has not been unlocked since it started.
    static let interactionNotAllowed: Int32 = -25308
    /// `errSecMissingEntitlement`: the program is not signed with a keychain-access-groups entitlement (or not
    /// with the access group asked for).
    static let missingEntitlement: Int32 = -34018
    /// `errSecNotAvailable`: no keychain is available.
    static let notAvailable: Int32 = -25291

    /// Why the Keychain cannot be used now, for a status that says so, or `nil` for a status about one item.
    static func unavailability(_ status: Int32) -> String? {
        switch status {
        case interactionNotAllowed:
            "the device is locked, or has not been unlocked since it started (errSecInteractionNotAllowed); "
                + "the item is read once the device is unlocked, or choose an accessibility class that allows it"
        case missingEntitlement:
            "the program lacks the keychain-access-groups entitlement for the item's access group "
                + "(errSecMissingEntitlement); sign it with one, or use a FileSecretStore"
        case notAvailable:
            "no keychain is available (errSecNotAvailable)"
        default:
            nil
        }
    }

    /// The error for a status that is neither success nor one the caller expects, naming the key and the status.
    static func error(_ status: Int32, key: String, operation: String, store: String) -> StorableConfigError {
        if let reason = unavailability(status) {
            return .secretStoreUnavailable(store: store, reason: reason)
        }
        let reason = "the Keychain's \(operation) returned OSStatus \(status)"
        return operation == "SecItemCopyMatching"
            ? .readFailed(key: key, reason: reason) : .writeFailed(key: key, reason: reason)
    }
}
