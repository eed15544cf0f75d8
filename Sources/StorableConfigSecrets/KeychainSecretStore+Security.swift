#if canImport(Security)
    import Foundation
    import StorableConfig
    import Security

    extension KeychainSecretStore {
        /// Creates a store of the Keychain's generic-password items of `service`.
        ///
        /// - Parameters:
        ///   - service: The items' service; by default ``StorableConfig/defaultNamespace``, the bundle identifier.
        ///   - accessGroup: An access group the app is entitled to (an app group's, to share the secrets with its
        ///     extensions), or `nil` for the app's default one.
        ///   - accessibility: When the items can be read.
        ///   - synchronizable: Whether the items are synced through iCloud Keychain.
        public convenience init(
            service: String = StorableConfig.defaultNamespace, accessGroup: String? = nil,
            accessibility: Accessibility = .afterFirstUnlock, synchronizable: Bool = false
        ) {
            self.init(
                service: service, accessGroup: accessGroup, accessibility: accessibility,
                synchronizable: synchronizable, backend: SecurityKeychain())
        }
    }

    /// The Keychain through Security.framework's SecItem functions.
    struct SecurityKeychain: KeychainBackend {
        func query(_ item: KeychainItem) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: item.service,
                kSecAttrAccount as String: item.account,
                kSecUseDataProtectionKeychain as String: true,
                kSecAttrSynchronizable as String: item.synchronizable,
            ]
            if let group = item.accessGroup { query[kSecAttrAccessGroup as String] = group }
            return query
        }

        func accessible(_ accessibility: KeychainSecretStore.Accessibility) -> CFString {
            switch accessibility {
            case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
            case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
            case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
            }
        }

        func add(_ item: KeychainItem, data: Data, accessibility: KeychainSecretStore.Accessibility) -> Int32 {
            var attributes = query(item)
            attributes[kSecValueData as String] = data
            attributes[kSecAttrAccessible as String] = accessible(accessibility)
            return SecItemAdd(attributes as CFDictionary, nil)
        }

        func copyData(_ item: KeychainItem) -> (status: Int32, data: Data?) {
            var search = query(item)
            search[kSecReturnData as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(search as CFDictionary, &result)
            return (status, result as? Data)
        }

        func update(_ item: KeychainItem, data: Data, accessibility: KeychainSecretStore.Accessibility) -> Int32 {
            let changes: [String: Any] = [
                kSecValueData as String: data, kSecAttrAccessible as String: accessible(accessibility),
            ]
            return SecItemUpdate(query(item) as CFDictionary, changes as CFDictionary)
        }

        func delete(_ item: KeychainItem) -> Int32 {
            SecItemDelete(query(item) as CFDictionary)
        }
    }
#endif
