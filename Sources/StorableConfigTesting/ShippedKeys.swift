import Foundation
import StorableConfig

/// The keys an app has shipped, checked against the keys its configs read today, so that a rename that would
/// lose users' values fails the app's own tests before it ships.
///
/// Commit the list once (``listing(_:)`` prints it: one key per line), add to it with every release, and
/// check it in a test:
///
/// ```swift
/// import StorableConfigTesting
/// import Testing
///
/// @Test func everyShippedKeyIsStillRead() throws {
///     let shipped = try ShippedKeys(contentsOf: URL(fileURLWithPath: #filePath)
///         .deletingLastPathComponent().appendingPathComponent("shipped-keys.txt"))
///     try shipped.check([AppConfig(store: InMemoryStore()), TwitterConfig(store: InMemoryStore())])
/// }
/// ```
///
/// A shipped key is read when it is a setting's key, one of its ``StorableConfig/AnySetting/previousKeys``
/// (from `previousKeys`, `previousNames`, `previousConfigNames` or `previousNamespaces`), or a config's
/// ``StorableConfig/StorableConfig/schemaVersionKey``. A key that a migration reads by name is not known to the
/// check: list it in `retired`.
public struct ShippedKeys: Sendable, Equatable {
    /// The keys shipped, in the order listed.
    public let keys: [String]

    /// The shipped `keys`.
    public init(_ keys: [String]) {
        self.keys = keys
    }

    /// The keys listed in a text file: one per line; blank lines and lines starting with `#` are skipped.
    /// - Throws: If the file cannot be read.
    public init(contentsOf url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        keys = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// The keys of `configs`' settings, one per line, sorted: the text to commit as the list.
    public static func listing(_ configs: [StorableConfig]) -> String {
        configs.flatMap(\.keys).sorted().joined(separator: "\n") + "\n"
    }

    /// Every key that `configs` read: settings' keys, their earlier keys, and the schema version keys.
    public static func keysRead(by configs: [StorableConfig]) -> Set<String> {
        var read: Set<String> = []
        for config in configs {
            read.formUnion(config.keys)
            for setting in config.allSettings { read.formUnion(setting.previousKeys) }
            read.insert(type(of: config).schemaVersionKey)
        }
        return read
    }

    /// The shipped keys that no setting of `configs` reads any more, in the order listed, leaving out `retired`
    /// (keys dropped on purpose, or read by a migration).
    public func unreadKeys(by configs: [StorableConfig], retired: Set<String> = []) -> [String] {
        let read = Self.keysRead(by: configs)
        return keys.filter { !read.contains($0) && !retired.contains($0) }
    }

    /// Throws ``Failure`` naming each shipped key that no setting of `configs` reads any more.
    public func check(_ configs: [StorableConfig], retired: Set<String> = []) throws {
        let unread = unreadKeys(by: configs, retired: retired)
        if !unread.isEmpty { throw Failure(unreadKeys: unread) }
    }

    /// Shipped keys that no setting reads any more: users' values stored under them would be lost.
    public struct Failure: Error, CustomStringConvertible {
        /// The keys, in the order listed.
        public let unreadKeys: [String]

        /// A message naming each key and what to do about it.
        public var description: String {
            "\(unreadKeys.count) shipped key(s) are no longer read by any setting, so the values users stored "
                + "under them would be lost. Add each to the renamed setting's previousNames or previousKeys (or "
                + "the class's previousConfigNames or previousNamespaces), or list it as retired:\n"
                + unreadKeys.map { "- " + $0 }.joined(separator: "\n")
        }
    }
}
