import Foundation
import StorableConfig

/// A store that keeps each setting in a file of its own, named after its key and holding the value's JSON
/// text: the store that Docs/WritingAStore.md builds, step by step. The tests run the conformance suite on it.
// `@unchecked`: `seen`, its only mutable state, is guarded by `lock`.
final class DirectoryStore: IdentifiedConfigStore, @unchecked Sendable {
    let directory: URL
    private let lock = NSLock()
    // Guarded by `lock`: when each file was last seen changed, to find the files others changed.
    private var seen: [String: Date] = [:]

    /// Opens the store over `directory`, creating it if needed.
    init(directory: URL) throws {
        self.directory = directory.standardizedFileURL
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        seen = try modificationDates()
    }

    // MARK: The three methods that make a store

    func value(forKey key: String) throws -> StoredValue? {
        let data: Data
        do {
            data = try Data(contentsOf: file(for: key))
        } catch CocoaError.fileReadNoSuchFile {
            return nil
        }
        return try StoredValue(jsonText: String(decoding: data, as: UTF8.self))
    }

    func setValue(_ value: StoredValue, forKey key: String) throws {
        // Written to a temporary file and renamed: a reader sees the old value or the new one, never half.
        try Data(value.jsonText(pretty: true).utf8).write(to: file(for: key), options: .atomic)
        try remember(key)
    }

    func removeValue(forKey key: String) throws {
        do {
            try FileManager.default.removeItem(at: file(for: key))
        } catch CocoaError.fileNoSuchFile {
            // Already gone: removing is not an error.
        }
        try remember(key)
    }

    // MARK: Sharing the storage

    /// Every store for one directory shares one identity, so configs over two of them see each other's
    /// writes at once.
    var storageIdentity: AnyObject { Self.identity(for: directory) }

    /// Looks for files that others changed since this store last looked, and tells the configs.
    func reload() throws {
        let current = try modificationDates()
        let changed = lock.withLock {
            defer { seen = current }
            return Set(current.keys.filter { current[$0] != seen[$0] }).union(seen.keys.filter { current[$0] == nil })
        }
        storageDidChange(forKeys: changed)
    }

    // MARK: Files

    private func file(for key: String) -> URL {
        let name = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", "_", "."]))!
        return directory.appendingPathComponent(name + ".json")
    }

    private func remember(_ key: String) throws {
        let date = try? file(for: key).resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate
        lock.withLock { seen[key] = date }
    }

    private func modificationDates() throws -> [String: Date] {
        var dates: [String: Date] = [:]
        let files = try FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: [.contentModificationDateKey])
        for file in files where file.pathExtension == "json" {
            guard let key = file.deletingPathExtension().lastPathComponent.removingPercentEncoding else { continue }
            dates[key] = try file.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate
        }
        return dates
    }

    private static let identities = NSLock()
    nonisolated(unsafe) private static var identityByPath: [String: AnyObject] = [:]

    private static func identity(for directory: URL) -> AnyObject {
        identities.withLock {
            if let identity = identityByPath[directory.path] { return identity }
            let identity = NSObject()
            identityByPath[directory.path] = identity
            return identity
        }
    }
}
