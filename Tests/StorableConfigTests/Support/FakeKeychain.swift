import Foundation

@testable import StorableConfig
@testable import StorableConfigSecrets

/// A Keychain in memory that answers as SecItemAdd, SecItemCopyMatching, SecItemUpdate and SecItemDelete do,
/// for the tests of ``KeychainSecretStore`` where Security.framework does not exist.
final class FakeKeychain: KeychainBackend {
    struct Stored: Equatable {
        var data: Data
        var accessibility: KeychainSecretStore.Accessibility
    }

    /// The items, by every attribute that tells them apart.
    let items = Locked<[KeychainItem: Stored]>([:])
    /// A status every call returns instead of doing its work: a locked device, a missing entitlement.
    let failure = Locked<Int32?>(nil)

    func add(_ item: KeychainItem, data: Data, accessibility: KeychainSecretStore.Accessibility) -> Int32 {
        if let failure = failure.withLock({ $0 }) { return failure }
        return items.withLock { items in
            guard items[item] == nil else { return KeychainStatus.duplicateItem }
            items[item] = Stored(data: data, accessibility: accessibility)
            return KeychainStatus.success
        }
    }

    func copyData(_ item: KeychainItem) -> (status: Int32, data: Data?) {
        if let failure = failure.withLock({ $0 }) { return (failure, nil) }
        guard let stored = items.withLock({ $0[item] }) else { return (KeychainStatus.itemNotFound, nil) }
        return (KeychainStatus.success, stored.data)
    }

    func update(_ item: KeychainItem, data: Data, accessibility: KeychainSecretStore.Accessibility) -> Int32 {
        if let failure = failure.withLock({ $0 }) { return failure }
        return items.withLock { items in
            guard items[item] != nil else { return KeychainStatus.itemNotFound }
            items[item] = Stored(data: data, accessibility: accessibility)
            return KeychainStatus.success
        }
    }

    func delete(_ item: KeychainItem) -> Int32 {
        if let failure = failure.withLock({ $0 }) { return failure }
        return items.withLock { $0.removeValue(forKey: item) } == nil ? KeychainStatus.itemNotFound : 0
    }
}
