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
/// and renamed over it, so a crash leaves the old file or the new one, never a torn one. Writes from several
/// processes are serialized by an advisory lock on a side file (`settings.json.lock`), and each merges its
/// change into the file as it is on disk, so no process overwrites another's keys with stale values. Keys
/// that no config declares are kept as they are.
///
/// A file that does not parse is moved aside to `settings.json.corrupt-<date>` and reported, so its bytes
/// can be recovered, and the store starts empty. A write that fails (a full disk, a read-only file) throws an
/// error naming the path; the change stays in memory and is written with the next write that succeeds.
public final class JSONFileStore: ConfigStore, CustomStringConvertible {
    /// The file's location.
    public let url: URL
    private let file: JSONFile

    /// Opens the settings file at `url`, which need not exist yet.
    ///
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the path is a directory or cannot be
    ///   read. A file that does not parse is not an error: it is moved aside and reported.
    public init(url: URL) throws {
        self.url = url.standardizedFileURL
        file = try JSONFile.open(path: self.url.path, ifCorrupt: .quarantine)
    }

    /// Opens the settings file at `url`, which need not exist yet, and refuses one that does not parse
    /// instead of moving it aside: for tools that must leave a damaged file exactly as it is.
    ///
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the path is a directory, cannot be read,
    ///   or does not parse.
    public init(url: URL, refusingCorruptFile: Bool) throws {
        self.url = url.standardizedFileURL
        file = try JSONFile.open(path: self.url.path, ifCorrupt: refusingCorruptFile ? .fail : .quarantine)
    }

    /// Opens the settings file at the platform's place for `namespace`: see ``defaultURL(namespace:)``.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` as ``init(url:)`` does.
    public convenience init(namespace: String) throws {
        try self.init(url: JSONFileStore.defaultURL(namespace: namespace))
    }

    /// Where settings files live on this platform: `$XDG_CONFIG_HOME/<namespace>/settings.json`, or
    /// `~/.config/<namespace>/settings.json` when `XDG_CONFIG_HOME` is not set, on Linux; Application
    /// Support on Apple platforms.
    public static func defaultURL(namespace: String) -> URL {
        #if canImport(Darwin)
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        #else
        let base = FileSystem.userConfigDirectory()
        #endif
        return base.appendingPathComponent(namespace, isDirectory: true).appendingPathComponent("settings.json")
    }

    /// Every key and value in the file, as last read or written.
    public var allValues: [String: StoredValue] {
        file.allValues
    }

    /// Returns the value stored for `key`, from memory.
    public func value(forKey key: String) -> StoredValue? {
        file.value(forKey: key)
    }

    /// Returns the values stored for `keys`, from memory.
    public func values(forKeys keys: [String]) -> [String: StoredValue] {
        file.values(forKeys: keys)
    }

    /// Stores `value` for `key` and writes the file before returning.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written.
    public func setValue(_ value: StoredValue, forKey key: String) throws {
        try file.apply([key: value])
    }

    /// Removes `key` and writes the file before returning.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written.
    public func removeValue(forKey key: String) throws {
        try file.apply([key: StoredValue?.none])
    }

    /// Replaces the value of `key` by `transform` of its value in the file as it is now, as one write under
    /// the file's lock, so that another process's change to the same key in the meantime is not lost.
    /// - Returns: The new value.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written (the change
    ///   is then kept in memory), or what `transform` throws (nothing is changed).
    public func update(_ key: String, _ transform: (StoredValue?) throws -> StoredValue?) throws -> StoredValue? {
        try file.update(key, transform)
    }

    /// Applies all `changes` in one write: one lock, one rename.
    /// - Throws: ``StorableConfigError/fileUnusable(path:reason:)`` if the file cannot be written.
    public func apply(_ changes: [String: StoredValue?]) throws {
        try file.apply(changes)
    }

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

    /// Returns, and forgets, the keys that the last reads of the file found changed by someone else.
    public func externallyChangedKeys() -> Set<String> {
        file.takeExternallyChangedKeys()
    }

    /// The state shared by every store for this file in the process.
    public var storageIdentity: AnyObject { file }

    /// "JSON file <path>".
    public var description: String { "JSON file \(url.path)" }
}

/// The in-process state of one settings file, shared by every ``JSONFileStore`` for its path.
final class JSONFile: @unchecked Sendable {
    let path: String
    private let lockPath: String
    // Guarded by `lock`: the file's content as last read or written, with changes not yet written on top.
    private let lock = Lock()
    private var values: [String: StoredValue] = [:]
    private var unwritten: [String: StoredValue?] = [:]
    /// The text, as read, of members whose numbers a ``StoredValue`` cannot hold exactly; written back as
    /// they were until this process changes them.
    private var rawMembers: [String: String] = [:]
    private var stamp: FileSystem.Stamp?
    /// Keys whose values a read of the file found changed by someone else, until they are taken.
    private var externallyChanged: Set<String> = []

    private struct WeakFile {
        weak var file: JSONFile?
    }

    private let watcher = Locked<FileWatcher?>(nil)

    deinit {
        watcher.withLock { $0 }?.stop()
    }

    var isWatching: Bool {
        watcher.withLock { $0 != nil }
    }

    func startWatching(forcePolling: Bool, pollingInterval: Double = 0.25) throws {
        try watcher.withLock { watcher in
            guard watcher == nil else { return }
            try failing(on: path) {
                let directory = (path as NSString).deletingLastPathComponent
                if case .missing = try FileSystem.kind(ofPath: directory) {
                    try FileSystem.createDirectory(atPath: directory)
                }
                watcher = try FileWatcher(path: path, pollingInterval: pollingInterval, forcePolling: forcePolling) {
                    [weak self] in self?.changedOnDisk()
                }
            }
        }
    }

    func stopWatching() {
        watcher.withLock { watcher in
            defer { watcher = nil }
            return watcher
        }?.stop()
    }

    /// Reads the file again after the watcher saw it change, and tells the configs bound to it. A file that
    /// does not parse is left alone: someone may be writing it in place, and the next event reads it again.
    private func changedOnDisk() {
        do {
            try ProblemReports.deferring {
                try lock.withLock {
                    try failing(on: path) { try readFromDisk(ifCorrupt: .keep) }
                }
            }
        } catch {
            StorableConfig.report(.reloadFailed(store: "JSON file \(path)", reason: "\(error)"))
            return
        }
        let keys = takeExternallyChangedKeys()
        StoreHub.existingHub(for: self)?.storageChanged(keys: keys)
    }

    private static let openFiles = Locked<[String: WeakFile]>([:])

    static func open(path: String, ifCorrupt action: CorruptFileAction) throws -> JSONFile {
        try ProblemReports.deferring {
            try openFiles.withLock { files in
            if let file = files[path]?.file { return file }
                let file = try JSONFile(path: path, ifCorrupt: action)
                files = files.filter { $0.value.file != nil }
                files[path] = WeakFile(file: file)
                return file
            }
        }
    }

    private init(path: String, ifCorrupt action: CorruptFileAction) throws {
        self.path = path
        lockPath = path + ".lock"
        try failing(on: path) {
            switch try FileSystem.kind(ofPath: path) {
            case .directory:
                throw FileSystem.Failure(path: path, reason: "it is a directory; give the path of a file")
            case .other:
                throw FileSystem.Failure(path: path, reason: "it is not a regular file")
            case .missing, .file:
                try readFromDisk(ifCorrupt: action)
            }
        }
        externallyChanged = []
    }

    var allValues: [String: StoredValue] {
        lock.withLock { values }
    }

    func value(forKey key: String) -> StoredValue? {
        lock.withLock { values[key] }
    }

    func values(forKeys keys: [String]) -> [String: StoredValue] {
        lock.withLock {
            var result: [String: StoredValue] = [:]
            for key in keys {
                if let value = values[key] { result[key] = value }
            }
            return result
        }
    }

    func apply(_ changes: [String: StoredValue?]) throws {
        try ProblemReports.deferring { try write(changes: { changes }) }
    }

    /// Replaces the value of `key` by `transform` of the value in the file as it is now, under the file's
    /// lock, so that another process's change to the same key is not overwritten.
    func update(_ key: String, _ transform: (StoredValue?) throws -> StoredValue?) throws -> StoredValue? {
        try ProblemReports.deferring {
            var updated: StoredValue?
            // Not remembered as unwritten on failure: a whole value computed from a stale file would overwrite
            // what others write meanwhile. The caller keeps its change and applies it again later.
            try write(remembering: false) { [self] in
                updated = try transform(values[key])
                return [key: updated]
            }
            return updated
        }
    }

    /// Writes the changes that `changes` computes from the freshest values: those in the file, read under
    /// its lock, or, if the file cannot be reached, those in memory (the changes are then kept in memory and
    /// written with the next write that succeeds).
    private func write(remembering: Bool = true, changes: () throws -> [String: StoredValue?]) throws {
        try lock.withLock {
            var applied = false
            func applyChanges() throws {
                let changes = try changes()
                for (key, value) in changes {
                    values[key] = value
                    if remembering { unwritten[key] = .some(value) }
                    rawMembers[key] = nil
                }
                applied = true
            }
            do {
                try failing(on: path) {
                    let directory = (path as NSString).deletingLastPathComponent
                    if case .missing = try FileSystem.kind(ofPath: directory) {
                        try FileSystem.createDirectory(atPath: directory)
                    }
                    try FileSystem.withExclusiveLock(onPath: lockPath) {
                        // Merge into the file as it is now, so that other processes' writes survive.
                        try readFromDisk()
                        try applyChanges()
                        var permissions: mode_t = 0o600
                        if case .file(_, let existing) = try FileSystem.kind(ofPath: path) {
                            // The mode bits say what the user meant, also for root, whom access(2) lets write.
                            guard existing & 0o222 != 0, access(path, W_OK) == 0 else {
                                throw FileSystem.Failure(
                                    path: path, reason: "the file is read-only; make it writable to change settings")
                            }
                            permissions = existing
                        }
                        var text = Data(
                            JSONText.string(from: .dictionary(values), pretty: true, rawMembers: rawMembers).utf8)
                        text.append(0x0A)
                        try FileSystem.replaceFile(atPath: path, with: text, permissions: permissions)
                        unwritten = [:]
                        if case .file(let newStamp, _) = try FileSystem.kind(ofPath: path) { stamp = newStamp }
                    }
                }
            } catch let error as StorableConfigError {
                // The file could not be written: keep the change in memory, computed from what is known.
                if !applied { try applyChanges() }
                if !remembering {
                    // Forget the unwritten value at the next read, so that the file's content wins.
                    stamp = nil
                }
                throw error
            }
        }
    }

    func takeExternallyChangedKeys() -> Set<String> {
        lock.withLock {
            defer { externallyChanged = [] }
            return externallyChanged
        }
    }

    func reload() throws {
        try ProblemReports.deferring {
            try lock.withLock {
                try failing(on: path) { try readFromDisk() }
            }
        }
    }

    /// Reads the file if it changed since it was last read or written, then lays the unwritten changes on
    /// top. Called with `lock` held.
    /// What to do with a file that does not parse.
    enum CorruptFileAction {
        /// Move it aside, report it, and go on from the values last known.
        case quarantine
        /// Leave it and keep the values last known: it may be half written by someone else.
        case keep
        /// Throw, leaving it in place.
        case fail
    }

    private func readFromDisk(ifCorrupt action: CorruptFileAction = .quarantine) throws {
        let previous = values
        defer { noteExternalChanges(from: previous) }
        let kind = try FileSystem.kind(ofPath: path)
        switch kind {
        case .file(let current, _) where current == stamp:
            return
        case .missing:
            stamp = nil
            values = [:]
            rawMembers = [:]
        case .file(let current, _):
            guard let data = try FileSystem.contents(ofPath: path) else {
                stamp = nil
                values = [:]
                rawMembers = [:]
                break
            }
            do {
                (values, rawMembers) = try JSONText.parseObject(data)
                stamp = current
            } catch let error as JSONText.SyntaxError {
                let reason = data.isEmpty ? "the file is empty" : error.description
                switch action {
                case .quarantine:
                    let movedTo = try FileSystem.quarantine(path: path)
                    StorableConfig.report(.corruptFileQuarantined(path: path, movedTo: movedTo, reason: reason))
                case .keep:
                    break
                case .fail:
                    throw FileSystem.Failure(
                        path: path, reason: "it is not valid JSON (\(reason)); repair or remove it")
                }
                // Keep what this process last knew; the next write puts it back on disk, the next read retries.
                stamp = nil
            }
        default:
            throw FileSystem.Failure(path: path, reason: "it is no longer a regular file")
        }
        for (key, value) in unwritten {
            values[key] = value
            rawMembers[key] = nil
        }
    }
}

extension JSONFile {
    /// Records the keys whose values differ from `previous`, other than this process's own changes.
    /// Called with `lock` held.
    fileprivate func noteExternalChanges(from previous: [String: StoredValue]) {
        guard previous != values else { return }
        for (key, value) in values where previous[key] != value && unwritten[key] == nil {
            externallyChanged.insert(key)
        }
        for key in previous.keys where values[key] == nil && unwritten[key] == nil {
            externallyChanged.insert(key)
        }
    }
}

/// Runs `body`, turning a file-system failure into the package's error for `path`.
private func failing<Result>(on path: String, _ body: () throws -> Result) throws -> Result {
    do {
        return try body()
    } catch let failure as FileSystem.Failure {
        throw StorableConfigError.fileUnusable(path: failure.path, reason: failure.reason)
    }
}
