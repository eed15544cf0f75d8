import Foundation

/// The in-process state of one settings file, shared by every ``JSONFileStore`` for its path.
///
/// The path may be a symbolic link: each write follows it (see ``FileSystem/endOfLinks(from:)``) and replaces
/// the file at its end, locking the side file beside that file, so that a store opened on the link and one
/// opened on the file it leads to agree.
///
/// Keys are told apart by their bytes. `values` holds one member for each key as `String` compares keys
/// (canonically equivalent texts are one key), spelled as the file spells it first; `respellings` holds the
/// file's other spellings of those keys. A key reads and writes the member spelled with its very bytes, or,
/// if the file has none, the first spelling in the file.
final class JSONFile: @unchecked Sendable {
    let path: String
    private let destination: FileSystem.Destination
    // Guarded by `lock`: the file's content as last read or written, with changes not yet written on top.
    private let lock = Lock()
    var values: [String: StoredValue] = [:]
    /// Members whose keys are other spellings of keys in `values`; empty unless a person or another program
    /// wrote such keys.
    var respellings: [ExactKey: FileText.Respelling] = [:]
    /// This process's changes not yet written, by the member they went to: one that `values` holds (by `String`
    /// equality, which is how its spellings route to it) or one of `respellings`.
    private(set) var unwritten: [String: StoredValue?] = [:]
    private(set) var unwrittenRespellings: [ExactKey: StoredValue?] = [:]
    /// The text, as read, of members whose numbers a ``StoredValue`` cannot hold exactly; written back as
    /// they were until this process changes them.
    var rawMembers: [String: String] = [:]
    var stamp: FileSystem.Stamp?
    /// Keys whose values a read of the file found changed by someone else, until they are taken.
    var externallyChanged: Set<String> = []

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
                if case .missing = try FileSystem.kind(ofPath: destination.directory) {
                    try FileSystem.createDirectory(atPath: destination.directory, for: path)
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
            try reload(ifCorrupt: .keep)
        } catch {
            StorableConfig.report(.reloadFailed(store: "JSON file \(path)", reason: "\(error)"))
        }
    }

    private static let openFiles = Locked<[String: WeakFile]>([:])

    static func open(path: String, ifCorrupt action: CorruptFileAction) throws -> JSONFile {
        try OutsideLocks.deferring {
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
        destination = FileSystem.Destination(path: path)
        try failing(on: path) { _ = try readFromDisk(ifCorrupt: action) }
        externallyChanged = []
    }

    var allValues: [String: StoredValue] {
        lock.withLock { values }
    }

    func values(forKeys keys: [String]) -> [String: StoredValue] {
        lock.withLock { keys.reduce(into: [:]) { $0[$1] = storedValue(forKey: $1) } }
    }

    /// The text, as read, of the value of `key`, if it holds a number that ``StoredValue`` holds only
    /// approximately.
    func originalText(forKey key: String) -> String? {
        lock.withLock { rawMembers[key] }
    }

    /// The value of the member spelled with `key`'s very bytes, or, if there is none, of the first spelling of
    /// `key` in the file. Called with `lock` held.
    private func storedValue(forKey key: String) -> StoredValue? {
        if !respellings.isEmpty, let respelling = respellings[ExactKey(key)] { return respelling.value }
        return values[key]
    }

    /// Sets the member that ``storedValue(forKey:)`` reads to `value` (`nil`: removes it). Called with `lock`
    /// held.
    /// - Returns: Whether that member is one of `respellings`.
    @discardableResult
    func setStoredValue(_ value: StoredValue?, forKey key: String) -> Bool {
        if !respellings.isEmpty, respellings[ExactKey(key)] != nil {
            respellings[ExactKey(key)] = value.map { FileText.Respelling(value: $0, raw: nil) }
            return true
        }
        values[key] = value
        rawMembers[key] = nil
        if value == nil, !respellings.isEmpty { promoteRespelling(of: key) }
        return false
    }

    /// After the first spelling of `key` was removed, makes the next one in the file (the first by its bytes)
    /// the one that `values` holds.
    private func promoteRespelling(of key: String) {
        let others = respellings.keys.filter { $0.string == key }
        guard let next = others.min(by: { ExactKey.bytesPrecede($0.string, $1.string) }) else { return }
        let respelling = respellings.removeValue(forKey: next)!
        values[next.string] = respelling.value
        rawMembers[next.string] = respelling.raw
    }

    /// Refuses a value that nests deeper than the file's reader reads: written, it would make the whole file
    /// unreadable at the next start. (A setting's value is refused before it gets here; this is for code that
    /// calls the store itself.)
    private static func refuseTooDeep(_ values: [String: StoredValue]) throws {
        for (key, value) in values where value.nests(deeperThan: StoredValue.maximumDepth) {
            throw StorableConfigError.encodingFailed(
                key: key,
                reason: "the value nests more than \(StoredValue.maximumDepth) arrays and dictionaries, deeper than "
                    + "a settings file is read back; nothing was written")
        }
    }

    /// Stores `values` and removes `keysToRemove` in one write.
    func apply(_ values: [String: StoredValue], removing keysToRemove: [String]) throws {
        try Self.refuseTooDeep(values)
        try write { (values, keysToRemove) }
    }

    /// Replaces the values of `keys` by `transform` of the values in the file as it is now, under the file's
    /// lock, so that no other process's write comes between.
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        var updated: [String: StoredValue] = [:]
        // Not remembered as unwritten on failure: values computed from a stale file would overwrite what
        // others write meanwhile. The caller keeps its change and applies it again later.
        try write(remembering: false) { [self] in
            let current = keys.reduce(into: [String: StoredValue]()) { $0[$1] = storedValue(forKey: $1) }
            let (changed, removed) = try ConfigStoreUpdate.apply(transform, to: current, keys: keys)
            updated = changed
            try Self.refuseTooDeep(changed)
            return (changed, removed)
        }
        return updated
    }

    /// Runs `body` with `lock` held, then, without it, tells the configs bound to the file of the keys that its
    /// reads found changed by someone else; what they do, and what is reported meanwhile, waits until `body` has
    /// returned (inside a config's write, until the write ends).
    private func withLockAnnouncing<Result>(_ body: () throws -> Result) throws -> Result {
        try OutsideLocks.deferring {
            defer {
                let keys = lock.withLock {
                    defer { externallyChanged = [] }
                    return externallyChanged
                }
                if !keys.isEmpty { StoreHub.existingHub(for: self)?.storageChanged(keys: keys) }
            }
            return try lock.withLock(body)
        }
    }

    /// Writes the changes that `changes` computes from the freshest values: those in the file, read under
    /// its lock, or, if the file cannot be reached, those in memory (the changes are then kept in memory and
    /// written with the next write that succeeds).
    private func write(
        remembering: Bool = true, changes: () throws -> (values: [String: StoredValue], removed: [String])
    ) throws {
        try withLockAnnouncing {
            var applied = false
            func applyChanges() throws {
                let (assigned, removed) = try changes()
                var changes = assigned.mapValues(Optional.some)
                for key in removed { changes[key] = .some(nil) }
                for (key, value) in changes {
                    let isRespelling = setStoredValue(value, forKey: key)
                    guard remembering else { continue }
                    if isRespelling {
                        unwrittenRespellings[ExactKey(key)] = .some(value)
                    } else {
                        unwritten[key] = .some(value)
                    }
                }
                applied = true
            }
            do {
                try failing(on: path) {
                    // A symbolic link is followed anew at each write (someone may have pointed it elsewhere), and
                    // the lock taken is the one beside the file it leads to, which a store opened on that file
                    // takes too.
                    let linkEnd = try FileSystem.endOfLinks(from: path)
                    let target = destination(at: linkEnd)
                    do {
                        try underLock(of: target) { try writeLocked(to: target, applyChanges) }
                    } catch var failure as FileSystem.Failure where linkEnd != nil && failure.path == target.path {
                        failure.reason += " (the settings file \(path) is a symbolic link to it)"
                        throw failure
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

    /// The part of a write done under the file's lock: merge into the file at `target` (`path`, or the end of its
    /// symbolic links) as it is now, so that other processes' writes survive, apply the changes, and replace the
    /// file. Called with `lock` held.
    private func writeLocked(to target: FileSystem.Destination, _ applyChanges: () throws -> Void) throws {
        // The one look at the path, which also gives the mode to keep.
        let kind = try readFromDisk(at: target.path, holdingLock: true)
        try applyChanges()
        var permissions: mode_t = 0o600
        if case .file(_, let existing) = kind {
            // The mode bits say what the user meant, also for root, whom access(2) lets write.
            guard existing & 0o222 != 0, access(target.path, W_OK) == 0 else {
                throw FileSystem.Failure(
                    path: target.path, reason: "the file is read-only; make it writable to change settings")
            }
            permissions = existing
        }
        let data = FileText.data(members: values, rawMembers: rawMembers, respellings: respellings)
        stamp = try FileSystem.replaceFile(at: target, with: data, permissions: permissions)
        unwritten = [:]
        if !unwrittenRespellings.isEmpty { unwrittenRespellings = [:] }
    }

    /// Where the file at `linkEnd`, the end of `path`'s symbolic links, is written; `path`'s own when `nil`. Through
    /// a link, worked out at each write (a few microseconds, against the write's milliseconds).
    func destination(at linkEnd: String?) -> FileSystem.Destination {
        linkEnd.map { FileSystem.Destination(path: $0) } ?? destination
    }

    func reload(ifCorrupt action: CorruptFileAction = .quarantine) throws {
        try withLockAnnouncing {
            try failing(on: path) { _ = try readFromDisk(ifCorrupt: action) }
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
