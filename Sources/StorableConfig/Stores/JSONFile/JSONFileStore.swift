import Foundation

/// A store that keeps settings in a JSON file that people can read and edit.
///
/// The file holds one flat object, keys sorted, pretty-printed; values are natural JSON (a struct is an
/// object, a date is ISO 8601 text, data is base64):
///
/// ```json
/// {
///   "storable-config-demo.AppConfig.isFirstLaunch": false,
///   "storable-config-demo.TwitterConfig.userName": "nkysu1"
/// }
/// ```
///
/// ```swift
/// let store = try JSONFileStore(url: URL(fileURLWithPath: "/etc/myapp/settings.json"))
/// let config = AppConfig(store: store)
/// ```
///
/// Every write is durable and atomic when it returns: the new file is written beside the old one, flushed
/// and renamed over it, so a crash leaves the old file or the new one, never a torn one. (A file that is a mount
/// point, a single-file bind mount, cannot be renamed over: it is rewritten in place under the lock, its new
/// contents kept whole beside it until the rewrite ends, and the next open finishes a rewrite that a crash cut
/// short.) Writes from several processes are serialized by an advisory lock on a side file
/// (`settings.json.lock`), and each merges its change into the file as it is on disk, so no process overwrites
/// another's keys with stale values. Keys that no config declares are kept as they are.
///
/// A file that does not parse is moved aside to `settings.json.corrupt-<date>` and reported, so its bytes
/// can be recovered, and the store starts empty. A write that fails (a full disk, a read-only file) throws an
/// error naming the path; the change stays in memory and is written with the next write that succeeds.
///
/// A settings file that is a symbolic link (a dotfile manager's, a mounted configuration's) stays one: each
/// write follows the link anew and replaces the file it leads to, locking the side file beside that file.
/// Keys are told apart by their bytes, so a file that spells one key in two canonically equivalent ways ("é"
/// precomposed, and as "e" with a combining accent) keeps both members. Docs/Stores.md has the details, and
/// what size of file the store is meant for: some thousands of keys, a megabyte or two.
public final class JSONFileStore: IdentifiedConfigStore, CustomStringConvertible {
    /// The file's location.
    public let url: URL
    private let file: JSONFile
    /// Where the values of secret settings go instead of the file; `nil` when they are kept in the file.
    let secretRouter: SecretRouter?

    /// The store that keeps the values of secret settings (`@Setting(secret: true)`) instead of the file, or `nil`
    /// when the file keeps them like any value: see ``init(url:secrets:)``.
    public var secrets: (any SecretStore)? { secretRouter?.secrets }

    /// Opens the settings file at `url`, which need not exist yet; secret settings are kept in the platform's
    /// secret store (``SecretStores/besideFile(at:)``): the Keychain, or files beside this one.
    ///
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the path is a directory or cannot be
    ///   read. A file that does not parse is not an error: it is moved aside and reported.
    public convenience init(url: URL) throws {
        try self.init(url: url, ifCorrupt: .quarantine, secrets: SecretStores.besideFile(at: url))
    }

    /// Opens the settings file at `url`, which need not exist yet, keeping the values of secret settings in
    /// `secrets` (`nil`: in the file, like any value, as earlier versions did).
    ///
    /// A value that the file holds for a secret setting is moved to `secrets` when the first config that
    /// declares the setting is created over the store, and removed from the file: once, under the file's lock,
    /// so that processes starting together move it once. Docs/Secrets.md has the details.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` as ``init(url:)`` does.
    public convenience init(url: URL, secrets: (any SecretStore)?) throws {
        try self.init(url: url, ifCorrupt: .quarantine, secrets: secrets)
    }

    /// Opens the settings file at `url`, which need not exist yet, and refuses one that does not parse
    /// instead of moving it aside: for tools that must leave a damaged file exactly as it is.
    ///
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the path is a directory, cannot be read,
    ///   or does not parse.
    public convenience init(url: URL, refusingCorruptFile: Bool) throws {
        try self.init(
            url: url, ifCorrupt: refusingCorruptFile ? .fail : .quarantine, secrets: SecretStores.besideFile(at: url))
    }

    private init(url: URL, ifCorrupt: JSONFile.CorruptFileAction, secrets: (any SecretStore)?) throws {
        self.url = url.standardizedFileURL
        let file = try JSONFile.open(path: self.url.path, ifCorrupt: ifCorrupt)
        self.file = file
        secretRouter = secrets.map { SecretRouter.shared(storage: file, secrets: $0) }
    }

    /// Opens the settings file at the platform's place for `namespace`: see ``defaultURL(namespace:)``.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` as ``init(url:)`` does, and for a namespace
    ///   that is not a single path component (empty, `.`, `..`, or holding a `/`), which would put the file
    ///   somewhere else than in a directory of its own under the configuration directory.
    public convenience init(namespace: String) throws {
        let url = JSONFileStore.defaultURL(namespace: namespace)
        guard !namespace.isEmpty, namespace != ".", namespace != "..", !namespace.contains("/"),
            !namespace.contains("\0")
        else {
            throw StorableConfigError.fileUnusable(
                path: url.path,
                reason: "the namespace \"\(namespace)\" names its directory, and is not a single path component "
                    + "(a name without '/', other than '.' and '..'); set StorableConfig.defaultNamespace to one, "
                    + "such as com.example.app")
        }
        try self.init(url: url)
    }

    /// Where settings files live on this platform: `$XDG_CONFIG_HOME/<namespace>/settings.json`, or
    /// `~/.config/<namespace>/settings.json` when `XDG_CONFIG_HOME` is not set, on Linux; Application
    /// Support on Apple platforms.
    ///
    /// The namespace is used as a path component as it is: ``init(namespace:)`` refuses one that is not a single
    /// path component (`..`, `a/b`).
    public static func defaultURL(namespace: String) -> URL {
        #if canImport(Darwin)
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        #else
            let base = FileSystem.userConfigDirectory()
        #endif
        return base.appendingPathComponent(namespace, isDirectory: true).appendingPathComponent("settings.json")
    }

    /// Every key and value in the file, as last read or written: the values of secret settings, which are kept
    /// in ``secrets``, are not among them.
    ///
    /// Where the file spells one key in several canonically equivalent ways, which `String` takes for one key,
    /// this holds the first spelling in the file; ``value(forKey:)`` reads each of them.
    public var allValues: [String: StoredValue] {
        file.allValues
    }

    /// Returns the value stored for `key`, from memory: that of the member spelled with `key`'s very bytes, or,
    /// if the file has none, of the first member whose key is canonically equivalent to `key`.
    ///
    /// A secret setting's value is read from ``secrets`` the first time, and afterwards from memory, until
    /// ``reload()``; one that cannot be read is reported and reads as `nil`.
    public func value(forKey key: String) -> StoredValue? {
        values(forKeys: [key])[key]
    }

    /// Returns the values stored for `keys`, from memory.
    public func values(forKeys keys: [String]) -> [String: StoredValue] {
        guard let secretRouter else { return file.values(forKeys: keys) }
        let (plain, secret) = secretRouter.split(keys)
        guard !secret.isEmpty else { return file.values(forKeys: keys) }
        return file.values(forKeys: plain).merging(secretRouter.values(forKeys: secret)) { current, _ in current }
    }

    /// Stores `value` for `key` and writes the file (or the secret store, for a secret setting) before returning.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written, and
    ///   ``StorableConfigError/writeFailed(key:reason:)`` if the secret store fails.
    public func setValue(_ value: StoredValue, forKey key: String) throws {
        try setValues([key: value], removingValuesForKeys: [])
    }

    /// Removes `key` and writes the file (or the secret store) before returning.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written, and
    ///   ``StorableConfigError/writeFailed(key:reason:)`` if the secret store fails.
    public func removeValue(forKey key: String) throws {
        try setValues([:], removingValuesForKeys: [key])
    }

    /// Stores `values` and removes `keysToRemove` in one write: one lock, one rename. Secret settings' values go
    /// to the secret store first.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written (the
    ///   changes are then kept in memory and written with the next write that succeeds).
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        guard let secretRouter else { return try file.apply(values, removing: keysToRemove) }
        try secretRouter.applySecretChanges(values, removing: keysToRemove, plainWrite: file.apply)
    }

    /// Replaces the values of `keys` by `transform` of their values in the file as it is now, as one write
    /// under the file's lock, so that no other process's write comes between the read and the write.
    /// - Returns: The values of `keys` after the write.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written (the result
    ///   then shows in memory until the file is next read, and is never written later: values computed from
    ///   a file that could not be read must not overwrite what others write meanwhile), or what `transform`
    ///   throws (nothing is changed).
    @discardableResult
    public func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        guard let secretRouter else { return try file.updateValues(forKeys: keys, transform) }
        return try secretRouter.update(forKeys: keys, transform) { try file.updateValues(forKeys: $0, $1) }
    }

    /// ``ConfigStoreAtomicity/acrossProcesses``: every write holds an advisory lock on the file.
    public var updateAtomicity: ConfigStoreAtomicity { .acrossProcesses }

    /// Re-reads the file if another process or a person changed it, and the secret settings' values from the
    /// secret store.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be read, and
    ///   ``StorableConfigError/reloadFailed(store:reason:)`` if a secret cannot be read (it keeps its value).
    public func reload() throws {
        try file.reload()
        guard let secretRouter else { return }
        let changed = try secretRouter.reload()
        if !changed.isEmpty { storageDidChange(forKeys: changed) }
    }

    /// Starts watching the file, so that changes other processes or people make to it reach every config
    /// bound to it by themselves, without ``StorableConfig/reload()``.
    ///
    /// On Linux the kernel reports the change (inotify), and configs see it within milliseconds; elsewhere the
    /// file is checked four times a second. Watching goes on until ``stopWatching()`` or until the last store
    /// for the file is released. Calling it again does nothing.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file's directory cannot be created
    ///   or watched.
    public func startWatching() throws {
        try file.startWatching(forcePolling: false)
    }

    /// Stops watching the file; see ``startWatching()``.
    public func stopWatching() {
        file.stopWatching()
    }

    /// Whether the file is being watched.
    public var isWatching: Bool {
        file.isWatching
    }

    /// The state shared by every store for this file in the process.
    public var storageIdentity: AnyObject { file }

    /// "JSON file <path>".
    public var description: String { "JSON file \(url.path)" }
}

extension JSONFileStore: SecretKeepingStore {
    /// Moves the values the file holds for `keys` to the secret store and removes them from the file, under the
    /// file's lock: a process that starts at the same moment finds them moved, and moves nothing. A value the
    /// file holds is always newer than the secret store's (this version never writes a secret to the file; an
    /// older one, run after it, may), so it replaces what the secret store holds.
    public func keepSecrets(forKeys keys: [String]) -> [StorableConfigError] {
        guard let secretRouter else { return [] }
        let newKeys = secretRouter.notSecret(keys)
        // The keys the file, as last read, holds in plain form: new ones, or secret ones that an older version
        // wrote since they were moved. Those it holds none of are left alone, and the file is not rewritten.
        let holding = Set(file.values(forKeys: keys).keys)
        let moving = keys.filter(holding.contains)
        guard !moving.isEmpty else {
            secretRouter.add(newKeys)
            return []
        }
        var failures: [String: StorableConfigError] = [:]
        do {
            _ = try file.updateValues(forKeys: moving) { values in
                failures = [:]
                for key in moving.sorted() {
                    guard let plain = values[key] else { continue }
                    // Under the file's lock, so that no other process moves it at once: the one place where a
                    // lock of the library is held while a store (the secret store) runs. A secret store must not
                    // write to this settings file (Docs/Secrets.md).
                    do {
                        try secretRouter.write(plain, forKey: key)
                        values[key] = nil
                    } catch {
                        failures[key] = .secretNotMoved(
                            key: key, store: secretRouter.secrets.description, reason: SecretRouter.reason(error))
                    }
                }
            }
        } catch {
            // The file was not written: the values moved are in both places, and are moved again next time.
            secretRouter.add(newKeys.filter { !holding.contains($0) })
            return [error as? StorableConfigError ?? .fileUnusable(path: url.path, reason: "\(error)")]
        }
        secretRouter.add(newKeys.filter { failures[$0] == nil })
        // The configs alive read what was moved for keys that were secret already.
        let moved = Set(moving.filter { failures[$0] == nil && !newKeys.contains($0) })
        if !moved.isEmpty { storageDidChange(forKeys: moved) }
        return failures.keys.sorted().compactMap { failures[$0] }
    }
}

extension JSONFileStore: OriginalTextSource {
    func originalText(forKey key: String) -> String? {
        file.originalText(forKey: key)
    }
}

extension JSONFileStore: CustomReflectable {
    /// What the store is, without its values: `dump` of a config shows no stored value, secret or not.
    public var customMirror: Mirror {
        Mirror(self, children: ["url": url])
    }
}
