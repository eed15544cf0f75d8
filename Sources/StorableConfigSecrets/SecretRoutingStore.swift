import Foundation
import StorableConfig

/// A store that keeps the values of secret settings (`@Setting(secret: true)`) in a ``SecretStore`` and every
/// other value in the store it wraps, so that a `UserDefaults` domain or a settings file never holds a secret.
///
/// ```swift
/// import StorableConfigSecrets
///
/// let file = try JSONFileStore(url: URL(fileURLWithPath: "/var/lib/example/settings.json"))
/// StorableConfig.defaultStore = SecretRoutingStore(wrapping: file)  // secrets in settings.secrets/ beside it
/// ```
///
/// A key becomes secret when the first config that declares it secret is created over this store, before the
/// config reads its values: a value the wrapped store holds for it in plain form (written before the setting was
/// secret, or by a version that kept secrets in the store) is moved to the secret store then (see
/// ``keepSecrets(forKeys:)``). It stays secret for the storage's life: every store that wraps the same storage
/// with the same secret store routes it, so create every config of the storage over one of them.
///
/// A write of plain and secret values writes the plain ones first. A secret write that fails, or one whose plain
/// part failed, throws `WriteNotKept`, a ``StorableConfigError/writeFailed(key:reason:)`` naming the key, and the
/// setting keeps its last good value. A secret is read from the secret store once, then from memory until
/// ``reload()``; one that cannot be read is reported once, and reads as no value. Docs/Secrets.md has the details.
public final class SecretRoutingStore: IdentifiedConfigStore, WrappingConfigStore, SecretKeepingStore,
    CustomStringConvertible
{
    /// The store that keeps every value but the secrets.
    public let wrappedStore: any ConfigStore
    private let router: SecretRouter

    /// The store that keeps the secrets.
    public var secrets: any SecretStore { router.secrets }

    /// Wraps `base`, keeping the values of secret settings in `secrets`.
    public init(wrapping base: any ConfigStore, secrets: any SecretStore) {
        wrappedStore = base
        router = SecretRouter.shared(storage: Self.storage(of: base), secrets: secrets)
    }

    /// Wraps `base`, keeping the values of secret settings in the platform's secret store for it
    /// (``SecretStores/forStore(_:)``): the Keychain on Apple platforms; elsewhere files beside a
    /// ``JSONFileStore``'s file or a ``UserDefaultsStore``'s domain, as earlier versions of those stores kept them.
    public convenience init(wrapping base: any ConfigStore) {
        self.init(wrapping: base, secrets: SecretStores.forStore(base))
    }

    private static func storage(of store: any ConfigStore) -> AnyObject {
        (store as? any IdentifiedConfigStore)?.storageIdentity ?? store
    }

    /// The wrapped store's storage: configs over this store and over the wrapped one share their writes.
    public var storageIdentity: AnyObject { Self.storage(of: wrappedStore) }

    /// `JSON file <path>, secrets in directory <path>`.
    public var description: String { "\(wrappedStore), secrets in \(router.secrets)" }

    /// The value of `key`: from the secret store for a secret key, else from the wrapped store.
    public func value(forKey key: String) throws -> StoredValue? {
        try values(forKeys: [key])[key]
    }

    /// The values of `keys`, each read as ``value(forKey:)`` reads it.
    public func values(forKeys keys: [String]) throws -> [String: StoredValue] {
        let (plain, secret) = router.split(keys)
        guard !secret.isEmpty else { return try wrappedStore.values(forKeys: keys) }
        let values = plain.isEmpty ? [:] : try wrappedStore.values(forKeys: plain)
        return values.merging(router.values(forKeys: secret)) { current, _ in current }
    }

    /// Stores `value` for `key`, in the secret store if the key is secret.
    public func setValue(_ value: StoredValue, forKey key: String) throws {
        try setValues([key: value], removingValuesForKeys: [])
    }

    /// Removes the value of `key`, from the secret store if the key is secret.
    public func removeValue(forKey key: String) throws {
        try setValues([:], removingValuesForKeys: [key])
    }

    /// Stores `values` and removes `keysToRemove`: the plain ones in one call of the wrapped store, first, then
    /// the secret ones, one at a time.
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        try router.applySecretChanges(values, removing: keysToRemove) { values, keysToRemove in
            if values.count == 1, keysToRemove.isEmpty, let (key, value) = values.first {
                try wrappedStore.setValue(value, forKey: key)
            } else if values.isEmpty, keysToRemove.count == 1 {
                try wrappedStore.removeValue(forKey: keysToRemove[0])
            } else {
                try wrappedStore.setValues(values, removingValuesForKeys: keysToRemove)
            }
        }
    }

    /// Runs `transform` over the values of `keys` and writes back what it changed: the plain part inside one
    /// `updateValues` of the wrapped store, as atomic as that store makes it; the secret part is not atomic.
    @discardableResult
    public func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try router.update(forKeys: keys, transform) { try wrappedStore.updateValues(forKeys: $0, $1) }
    }

    /// The wrapped store's: the secret part of an update is never atomic.
    public var updateAtomicity: ConfigStoreAtomicity { wrappedStore.updateAtomicity }

    /// The wrapped store's: a secret write that fails is thrown as `WriteNotKept`, which no config believes.
    public var keepsFailedWrites: Bool { wrappedStore.keepsFailedWrites }

    /// Reloads the wrapped store, then reads every secret again.
    /// - Throws: What the wrapped store's `reload()` throws, and ``StorableConfigError/reloadFailed(store:reason:)``
    ///   when a secret cannot be read (it keeps its value; the others are read all the same).
    public func reload() throws {
        try wrappedStore.reload()
        let changed = try router.reload()
        if !changed.isEmpty { storageDidChange(forKeys: changed) }
    }

    /// The secret store's description for a secret key, the wrapped store's origin for the others.
    public func origin(forKey key: String) -> String? {
        router.split([key]).secret.isEmpty ? wrappedStore.origin(forKey: key) : "the secret store \(router.secrets)"
    }

    /// Moves the values the wrapped store holds for `keys` to the secret store, and removes them from it. A value
    /// the wrapped store holds is always newer than the secret store's (this store never writes a secret to it;
    /// an older version, or a config over the wrapped store, may), so it replaces what the secret store holds.
    ///
    /// On a store whose updates are atomic across processes (a JSON file), the values are moved inside one
    /// `updateValues` of it, so that processes that start together move each once. On another (`UserDefaults`),
    /// each is read again after it is written to the secret store, and removed only if it is still what was
    /// written; one rewritten meanwhile is moved again.
    public func keepSecrets(forKeys keys: [String]) -> [StorableConfigError] {
        let newKeys = Set(router.notSecret(keys))
        // The keys the wrapped store holds in plain form: new ones, or secret ones written there since they were
        // moved. Those it holds none of are left alone, and the store is not written.
        let plain: [String: StoredValue]
        do {
            plain = try wrappedStore.values(forKeys: keys)
        } catch {
            return [error as? StorableConfigError ?? .reloadFailed(store: "\(wrappedStore)", reason: "\(error)")]
        }
        let moving = keys.filter { plain[$0] != nil }.sorted()
        guard !moving.isEmpty else {
            router.add(Array(newKeys))
            return []
        }
        let (left, written, problems) =
            wrappedStore.updateAtomicity == .acrossProcesses ? moveInOneUpdate(moving) : moveOneByOne(moving, plain)
        router.add(newKeys.filter { !left.contains($0) })
        // The configs alive read the secret store's new values of keys that were secret already, moved or not.
        let changed = written.subtracting(newKeys)
        if !changed.isEmpty { storageDidChange(forKeys: changed) }
        return problems
    }

    /// What a move did: the keys it left in the wrapped store, those it wrote to the secret store, the problems.
    private typealias Move = (left: Set<String>, written: Set<String>, problems: [StorableConfigError])

    /// Moves `keys` inside one update of the wrapped store.
    private func moveInOneUpdate(_ keys: [String]) -> Move {
        var failures: [String: StorableConfigError] = [:]
        var written: Set<String> = []
        do {
            _ = try wrappedStore.updateValues(forKeys: keys) { values in
                failures = [:]
                for key in keys {
                    guard let plain = values[key] else { continue }
                    // Inside the wrapped store's update (under a JSON file's lock), so that no other process moves
                    // it at once: a secret store must not write to the wrapped store (Docs/Secrets.md).
                    do {
                        try router.write(plain, forKey: key)
                        written.insert(key)
                        values[key] = nil
                    } catch {
                        failures[key] = notMoved(key, error)
                    }
                }
            }
        } catch {
            // Not written: the values moved are in both places, and are moved again next time.
            let problem = error as? StorableConfigError ?? .writeFailed(key: keys[0], reason: "\(error)")
            return (Set(keys), written, [problem])
        }
        return (Set(failures.keys), written, keys.compactMap { failures[$0] })
    }

    /// Moves `keys`, whose values are `plain`, one at a time, each removed from the wrapped store only while it
    /// still holds what was moved (a few rounds at most: a writer goes on). A key that cannot be read or removed
    /// is left, and reported.
    private func moveOneByOne(_ keys: [String], _ plain: [String: StoredValue]) -> Move {
        var left: Set<String> = []
        var written: Set<String> = []
        var problems: [StorableConfigError] = []
        func problem(_ key: String, _ error: any Error) -> StorableConfigError {
            error as? StorableConfigError ?? .writeFailed(key: key, reason: "\(error)")
        }
        for key in keys {
            var value = plain[key]
            let reported = problems.count
            do {
                for _ in 0..<3 {
                    guard let current = value else { break }
                    do {
                        try router.write(current, forKey: key)
                    } catch {
                        problems.append(notMoved(key, error))
                        break
                    }
                    written.insert(key)
                    value = try wrappedStore.value(forKey: key)
                    guard value == current else { continue }
                    do {
                        try wrappedStore.removeValue(forKey: key)
                    } catch {
                        // What the store holds now decides (UserDefaults removes it in memory even when it cannot
                        // save); either way it is not tried again.
                        problems.append(problem(key, error))
                        value = try wrappedStore.value(forKey: key)
                        break
                    }
                    value = try wrappedStore.value(forKey: key)
                }
            } catch {
                problems.append(problem(key, error))
            }
            guard value != nil else { continue }
            left.insert(key)
            if problems.count == reported {
                problems.append(
                    .secretNotMoved(
                        key: key, store: router.secrets.description,
                        reason: "it was written again each time it was moved, three times"))
            }
        }
        return (left, written, problems)
    }

    private func notMoved(_ key: String, _ error: any Error) -> StorableConfigError {
        .secretNotMoved(key: key, store: router.secrets.description, reason: SecretRouter.reason(error))
    }
}

extension SecretRoutingStore: CustomReflectable {
    /// What the store is, without its values: `dump` of a config shows no stored value, secret or not.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description])
    }
}
