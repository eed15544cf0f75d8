// Docs/WritingAStore.md's DirectoryStore, reduced to what its section 5 adds to: the stored properties and
// helpers that the section names ("`seen`, the files' modification dates, guarded by `lock`").
import Foundation
import StorableConfig

final class DirectoryStore: ConfigStore, @unchecked Sendable {
    let directory: URL
    let lock = NSLock()
    var seen: [String: Date] = [:]
    private let memory = InMemoryStore()

    init(directory: URL) { self.directory = directory }

    func value(forKey key: String) throws -> StoredValue? { memory.value(forKey: key) }
    func setValue(_ value: StoredValue, forKey key: String) throws { memory.setValue(value, forKey: key) }
    func removeValue(forKey key: String) throws { memory.removeValue(forKey: key) }

    /// The modification date of each key's file.
    func modificationDates() throws -> [String: Date] { [:] }

    /// The directory's identity (reduced: the guide's store keeps one object per directory).
    static func identity(for directory: URL) -> AnyObject { directory as NSURL }
}

// example
