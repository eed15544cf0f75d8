import Foundation
import StorableConfigCloud

/// A simulated key-value cloud that several demo processes share: a directory holding one file per cloud key,
/// named by the key percent-encoded (every byte but letters, digits, `-`, `_` and a `.` that does not come first),
/// so that any key names a file and `ls` shows the usual ones as they are.
///
/// Every read goes to the directory, so this device's copy is the cloud itself, always in step; a write goes to a
/// hidden temporary file that is then renamed over the key's file, so that another device reads the old value or
/// the new one, never half of one. It tells of no change (`observeChanges` never calls): a demo run is short, and
/// ``CloudSync`` merges each synced key when a config is synced and at ``CloudSync/synchronize()``.
///
/// `offline`: the cloud cannot be reached. It holds nothing and takes nothing, so the device's writes are stamped
/// and kept in its settings file only, and go up at its first run with the cloud.
final class DirectoryCloud: KeyValueCloud {
    let directory: URL
    let isOffline: Bool

    init(directory: URL, offline: Bool = false) {
        self.directory = directory
        isOffline = offline
    }

    var name: String { "simulated iCloud" }

    func data(forKey key: String) -> Data? {
        guard !isOffline else { return nil }
        return try? Data(contentsOf: fileURL(forKey: key))
    }

    func setData(_ data: Data, forKey key: String) {
        guard !isOffline else { return }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
            try data.write(to: temporary)
            guard rename(temporary.path, fileURL(forKey: key).path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temporary)
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: reason])
            }
        } catch {
            // The service takes a value later, or never; the device's own settings file still holds it.
            let warning = "storable-config-demo: warning: the cloud at \(directory.path) did not take \(key): \(error)"
            FileHandle.standardError.write(Data((warning + "\n").utf8))
        }
    }

    var keys: [String] {
        guard !isOffline else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.compactMap(Self.key(fromFileName:))
    }

    /// Each read goes to the directory already: `true` when it is there to read, `false` offline.
    func synchronize() -> Bool {
        guard !isOffline else { return false }
        var isDirectory: ObjCBool = false
        return !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
            || isDirectory.boolValue
    }

    func observeChanges(_ handler: @escaping @Sendable (CloudChange) -> Void) -> CloudObservation {
        CloudObservation(cancel: {})
    }

    private func fileURL(forKey key: String) -> URL {
        directory.appendingPathComponent(Self.fileName(forKey: key))
    }

    /// The key percent-encoded; the empty key is `%`, which no other key gives.
    static func fileName(forKey key: String) -> String {
        guard !key.isEmpty else { return "%" }
        var name = ""
        for (index, byte) in key.utf8.enumerated() {
            let plain =
                [48...57, 65...90, 97...122].contains { $0.contains(byte) } || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || (byte == UInt8(ascii: ".") && index > 0)
            if plain {
                name.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                name += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return name
    }

    /// The key a file name gives; `nil` for a name that no key gives.
    static func key(fromFileName name: String) -> String? {
        if name == "%" { return "" }
        guard let key = name.removingPercentEncoding, fileName(forKey: key) == name else { return nil }
        return key
    }
}
