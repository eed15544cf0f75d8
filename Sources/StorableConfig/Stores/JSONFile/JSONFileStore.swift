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
    /// Opens the settings file at `url`, which need not exist yet. Secret settings are kept in the file like any
    /// value: to keep them apart, wrap the store in `SecretRoutingStore` (the `StorableConfigSecrets` library).
    ///
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the path is a directory or cannot be
    ///   read. A file that does not parse is not an error: it is moved aside and reported.
    public convenience init(url: URL) throws {
        try self.init(url: url, ifCorrupt: .quarantine)
    }

    /// Opens the settings file at `url`, which need not exist yet, and refuses one that does not parse
    /// instead of moving it aside: for tools that must leave a damaged file exactly as it is.
    ///
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the path is a directory, cannot be read,
    ///   or does not parse.
    public convenience init(url: URL, refusingCorruptFile: Bool) throws {
        try self.init(url: url, ifCorrupt: refusingCorruptFile ? .fail : .quarantine)
    }

    private init(url: URL, ifCorrupt: JSONFile.CorruptFileAction) throws {
        self.url = url.standardizedFileURL
        file = try JSONFile.open(path: self.url.path, ifCorrupt: ifCorrupt)
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

    /// Every key and value in the file, as last read or written.
    ///
    /// Where the file spells one key in several canonically equivalent ways, which `String` takes for one key,
    /// this holds the first spelling in the file; ``value(forKey:)`` reads each of them.
    public var allValues: [String: StoredValue] {
        file.allValues
    }

    /// Returns the value stored for `key`, from memory: that of the member spelled with `key`'s very bytes, or,
    /// if the file has none, of the first member whose key is canonically equivalent to `key`.
    public func value(forKey key: String) -> StoredValue? {
        values(forKeys: [key])[key]
    }

    /// Returns the values stored for `keys`, from memory.
    public func values(forKeys keys: [String]) -> [String: StoredValue] {
        file.values(forKeys: keys)
    }

    /// Stores `value` for `key` and writes the file before returning.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written.
    public func setValue(_ value: StoredValue, forKey key: String) throws {
        try setValues([key: value], removingValuesForKeys: [])
    }

    /// Removes `key` and writes the file before returning.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written.
    public func removeValue(forKey key: String) throws {
        try setValues([:], removingValuesForKeys: [key])
    }

    /// Stores `values` and removes `keysToRemove` in one write: one lock, one rename.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written (the
    ///   changes are then kept in memory and written with the next write that succeeds).
    public func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        try file.apply(values, removing: keysToRemove)
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
        try file.updateValues(forKeys: keys, transform)
    }

    /// ``ConfigStoreAtomicity/acrossProcesses``: every write holds an advisory lock on the file.
    public var updateAtomicity: ConfigStoreAtomicity { .acrossProcesses }

    /// Re-reads the file if another process or a person changed it.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be read.
    public func reload() throws {
        try file.reload()
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
