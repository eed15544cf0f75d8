import Foundation
import StorableConfig

/// The secret stores that ``SecretRoutingStore/init(wrapping:)`` keeps secret settings in: the Keychain on Apple
/// platforms, and elsewhere a ``FileSecretStore`` beside the settings, where earlier versions of `JSONFileStore`
/// and `UserDefaultsStore` kept them.
public enum SecretStores {
    /// The secret store for `store`: ``besideFile(at:)`` for a `JSONFileStore`, ``forDefaults(_:suiteName:)`` for a
    /// `UserDefaultsStore`, an ``InMemorySecretStore`` for an `InMemoryStore` (one per store: nothing of it outlives
    /// the process), the same secret store for a ``SecretRoutingStore``, that of the store it wraps for another
    /// `WrappingConfigStore` (a synced store), and for any other store the one beside the default settings file of
    /// ``StorableConfig/defaultNamespace``.
    public static func forStore(_ store: any ConfigStore) -> any SecretStore {
        forStore(store, depth: 0)
    }

    private static func forStore(_ store: any ConfigStore, depth: Int) -> any SecretStore {
        switch store {
        case let file as JSONFileStore: besideFile(at: file.url)
        case let defaults as UserDefaultsStore: forDefaults(defaults.defaults, suiteName: defaults.suiteName)
        case let memory as InMemoryStore: inMemory(for: memory)
        case let routing as SecretRoutingStore: routing.secrets
        // A chain of wrappers that loops ends as any other store.
        case let wrapper as any WrappingConfigStore where depth < 16: forStore(wrapper.wrappedStore, depth: depth + 1)
        default: besideFile(at: JSONFileStore.defaultURL(namespace: StorableConfig.defaultNamespace))
        }
    }

    /// The in-memory secret stores of the `InMemoryStore`s alive, so that two wrappers of one share its secrets.
    private static let inMemoryStores = Locked<[ObjectIdentifier: (store: Weak, secrets: InMemorySecretStore)]>([:])

    private struct Weak {
        weak var object: InMemoryStore?
    }

    private static func inMemory(for store: InMemoryStore) -> InMemorySecretStore {
        inMemoryStores.withLock { stores in
            // The secrets of stores that are gone go with them.
            stores = stores.filter { $0.value.store.object != nil }
            if let entry = stores[ObjectIdentifier(store)], entry.store.object === store { return entry.secrets }
            let secrets = InMemorySecretStore()
            stores[ObjectIdentifier(store)] = (Weak(object: store), secrets)
            return secrets
        }
    }

    /// The secret store for the settings file at `url`: on Apple platforms the Keychain's items of
    /// ``StorableConfig/defaultNamespace``; elsewhere a ``FileSecretStore`` in the directory beside the file named
    /// after it, `settings.secrets` for `settings.json`. The directory is made when the first secret is written.
    public static func besideFile(at url: URL) -> any SecretStore {
        #if canImport(Security)
            KeychainSecretStore()
        #else
            let url = url.standardizedFileURL
            let name = url.deletingPathExtension().lastPathComponent
            return DeferredFileSecretStore(
                path: url.deletingLastPathComponent().appendingPathComponent("\(name).secrets").path)
        #endif
    }

    /// The secret store for a `UserDefaultsStore` over `defaults`: on Apple platforms the Keychain's items of
    /// ``StorableConfig/defaultNamespace``; elsewhere a ``FileSecretStore`` in the directory
    /// `<domain>.secrets` beside the defaults' property-list file (`$XDG_CONFIG_HOME`, else `~/.config`), where
    /// `<domain>` is the suite's name or, for `.standard` and other defaults, the process's name.
    public static func forDefaults(_ defaults: UserDefaults, suiteName: String? = nil) -> any SecretStore {
        #if canImport(Security)
            KeychainSecretStore()
        #else
            let domain = suiteName ?? ProcessInfo.processInfo.processName
            // `$XDG_CONFIG_HOME`, else `~/.config`: two levels above the default settings file of any namespace.
            let directory = JSONFileStore.defaultURL(namespace: domain).deletingLastPathComponent()
                .deletingLastPathComponent()
            return DeferredFileSecretStore(path: directory.appendingPathComponent("\(domain).secrets").path)
        #endif
    }
}

/// A ``FileSecretStore`` opened at its first use, so that a store whose configs declare no secret makes no
/// directory: reading from a directory that is not there finds nothing, and the first write makes it (and the
/// directories above it, as the settings file's own first write does). One that could not be opened is opened
/// again at the next use.
final class DeferredFileSecretStore: SecretStore {
    /// The directory's path, which tells two stores of one directory apart from others (``SecretRouter``).
    let path: String
    private let opened = Locked<FileSecretStore?>(nil)

    init(path: String) {
        self.path = path
    }

    var description: String { "directory \(path)" }

    private func store(creating: Bool = true) throws -> FileSecretStore? {
        if let store = opened.withLock({ $0 }) { return store }
        let directory = URL(fileURLWithPath: path, isDirectory: true)
        let parent = directory.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: path) {
            guard creating else { return nil }
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                throw StorableConfigError.secretStoreUnavailable(
                    store: description, reason: "its parent directory cannot be made: \(error)")
            }
        }
        // Opened without the lock: it reads and writes the file system.
        let store = try FileSecretStore(directory: directory)
        return opened.withLock { opened in
            if let existing = opened { return existing }
            opened = store
            return store
        }
    }

    func secret(forKey key: String) throws -> Data? { try store(creating: false)?.secret(forKey: key) }
    func setSecret(_ data: Data, forKey key: String) throws { try store()?.setSecret(data, forKey: key) }
    func addSecret(_ data: Data, forKey key: String) throws -> Bool {
        try store()?.addSecret(data, forKey: key) ?? false
    }
    func removeSecret(forKey key: String) throws { try store(creating: false)?.removeSecret(forKey: key) }
}
