import Foundation
import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A last-known-good copy of an ``EtcdStore``'s values on local disk: what a store created while no member
/// answers starts from.
///
/// The file is a JSON document, so that a person can read it and see which cluster and prefix it is of:
///
/// ```json
/// {"cluster_id":"14841639068965178418","endpoints":["http://127.0.0.1:2379"],
///  "format":"storable-config-etcd-snapshot","prefix":"prod/","revision":"42",
///  "values":{"etcd.Limits.maxUploadMB":"80"},"version":1,"written":"2026-11-25T10:00:00.000Z"}
/// ```
///
/// `values` maps each setting key (without the prefix) to its JSON text exactly as etcd holds it; revisions and
/// the cluster id are decimal strings, as etcd's gateway sends them.
@available(watchOS, unavailable)
struct EtcdSnapshot: Equatable {
    /// The endpoints, as given to the store, sorted.
    var endpoints: [String]
    var prefix: String
    /// The `header.cluster_id` of the answer the values came from.
    var clusterID: String
    /// The revision the values are at.
    var revision: Int64
    /// When the file was written.
    var written: Date
    /// By setting key: the JSON text etcd holds.
    var values: [String: String]

    static let format = "storable-config-etcd-snapshot"
    static let version = 1

    /// Why a snapshot file cannot be used.
    struct Unusable: Error, CustomStringConvertible {
        let description: String
    }

    /// The document, as JSON text.
    func jsonText() -> String {
        StoredValue.dictionary([
            "format": .string(Self.format),
            "version": .int(Int64(Self.version)),
            "endpoints": .array(endpoints.map(StoredValue.string)),
            "prefix": .string(prefix),
            "cluster_id": .string(clusterID),
            "revision": .string(String(revision)),
            "written": .string(Self.timestamp(written)),
            "values": .dictionary(values.mapValues(StoredValue.string)),
        ]).jsonText()
    }

    /// Reads a snapshot document.
    /// - Throws: ``Unusable`` if `text` is not JSON text, not a snapshot, of another version, or has a field
    ///   missing or of the wrong kind.
    init(jsonText text: String) throws {
        let document: StoredValue
        do {
            document = try StoredValue(jsonText: text)
        } catch {
            throw Unusable(description: "it is not JSON text (\(error))")
        }
        guard case .dictionary(let fields) = document, fields["format"] == .string(Self.format) else {
            throw Unusable(description: "it is not a snapshot of an etcd store")
        }
        guard fields["version"] == .int(Int64(Self.version)) else {
            throw Unusable(description: "it is a snapshot of another version than \(Self.version)")
        }
        guard case .array(let endpoints) = fields["endpoints"],
            case .string(let prefix) = fields["prefix"],
            case .string(let clusterID) = fields["cluster_id"], !clusterID.isEmpty,
            case .string(let revisionText) = fields["revision"], let revision = Int64(revisionText), revision > 0,
            case .string(let writtenText) = fields["written"], let written = Self.date(writtenText),
            case .dictionary(let values) = fields["values"]
        else {
            throw Unusable(description: "a field is missing or is not what the store writes")
        }
        self.endpoints = try endpoints.map { endpoint in
            guard case .string(let text) = endpoint else { throw Unusable(description: "an endpoint is not text") }
            return text
        }
        self.prefix = prefix
        self.clusterID = clusterID
        self.revision = revision
        self.written = written
        self.values = try values.mapValues { value in
            guard case .string(let text) = value else {
                throw Unusable(description: "a value is not the JSON text etcd holds, as a string")
            }
            return text
        }
    }

    init(
        endpoints: [URL], prefix: String, clusterID: String, revision: Int64, written: Date,
        values: [String: String]
    ) {
        self.endpoints = Self.names(of: endpoints)
        self.prefix = prefix
        self.clusterID = clusterID
        self.revision = revision
        self.written = written
        self.values = values
    }

    /// The endpoints as the file names them: sorted, so that their order (which only says which is tried first)
    /// does not make a snapshot another store's.
    static func names(of endpoints: [URL]) -> [String] {
        endpoints.map(\.absoluteString).sorted()
    }

    /// Why this snapshot is of another store than one of `endpoints` and `prefix`, or `nil`.
    func mismatch(endpoints: [URL], prefix: String) -> String? {
        if prefix != self.prefix {
            return "it is of the prefix \"\(self.prefix)\", not \"\(prefix)\""
        }
        if Self.names(of: endpoints) != self.endpoints {
            return "it is of the endpoints \(self.endpoints.joined(separator: ", ")), not "
                + Self.names(of: endpoints).joined(separator: ", ")
        }
        return nil
    }

    private static func formatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }

    static func timestamp(_ date: Date) -> String { formatter().string(from: date) }
    static func date(_ text: String) -> Date? { formatter().date(from: text) }

    // MARK: The file

    /// The snapshot in the file at `url`; `nil` if there is no file. `notices` gets what to report about a
    /// snapshot that is used all the same: one that its group may write.
    /// - Throws: ``Unusable`` if the file cannot be read, is not a regular file, is not a snapshot, or is not to be
    ///   trusted (``checkTrust(_:of:notices:)``).
    static func read(from url: URL, notices: inout [String]) throws -> EtcdSnapshot? {
        // Not blocking: a FIFO is opened, seen for what it is and refused, not waited on.
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Unusable(description: "it cannot be opened (\(String(cString: strerror(errno))))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        // The status of the file that is read, not of a path someone may swap meanwhile.
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw Unusable(description: "its status cannot be read (\(String(cString: strerror(errno))))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Unusable(description: "it is not a regular file") }
        try checkTrust(info, of: url, notices: &notices)
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw Unusable(description: "it cannot be read (\(error))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Unusable(description: "it is not UTF-8 text")
        }
        return try EtcdSnapshot(jsonText: text)
    }

    /// Refuses a snapshot that someone other than this process's user may have written, as ssh refuses its files:
    /// a snapshot sets the program's values while no member answers. The file (status `info`, reached through
    /// `url`) must be owned by the effective user or root, and not writable by every user; its directory (and the
    /// directory of `url`, when that is a symbolic link) must not be writable by every user unless it has the
    /// sticky bit (`/tmp`), where only a file's owner may replace it. A file its group may write is used, and
    /// `notices` says so: a Kubernetes `fsGroup` volume makes files group-writable.
    /// - Throws: ``Unusable`` saying which rule the file breaks.
    static func checkTrust(_ info: stat, of url: URL, notices: inout [String]) throws {
        let user = geteuid()
        let mode = "0" + String(UInt32(info.st_mode) & 0o7777, radix: 8)
        if info.st_uid != user && info.st_uid != 0 {
            throw Unusable(
                description: "it is owned by the user \(info.st_uid), not by this process's user (\(user)) or root, "
                    + "and whoever wrote it would set this program's values")
        }
        if info.st_mode & 0o002 != 0 {
            throw Unusable(description: "every user may write it (mode \(mode)), and so set this program's values")
        }
        let file = (try? endOfLinks(from: url)) ?? url
        var directories = [url.deletingLastPathComponent().path]
        if file.path != url.path { directories.append(file.deletingLastPathComponent().path) }
        for directory in directories {
            var status = stat()
            guard stat(directory, &status) == 0, status.st_mode & 0o002 != 0, status.st_mode & 0o1000 == 0 else {
                continue
            }
            throw Unusable(
                description: "its directory \(directory) may be written by every user and has no sticky bit (mode "
                    + "0\(String(UInt32(status.st_mode) & 0o7777, radix: 8))), so anyone may replace it")
        }
        if info.st_mode & 0o020 != 0 {
            notices.append(
                "the snapshot \(url.path) may be written by its group (group \(info.st_gid), mode \(mode)), as on a "
                    + "volume that Kubernetes' fsGroup makes group-writable: it is used, and anyone in that group "
                    + "can set this program's values while no member answers; the store's own snapshots are 0600")
        }
    }

    /// How many symbolic links a snapshot path may lead through, as Linux allows (`MAXSYMLINKS`).
    static let maximumLinks = 40

    /// Where the snapshot at `url` is: the end of its chain of symbolic links (each relative one resolved against
    /// the directory of the link that holds it, and that directory named as `realpath` gives it, so that messages
    /// name the place plainly), or `url` itself if it is not a link. The end need not exist.
    /// - Throws: ``Unusable`` if the links loop or run longer than ``maximumLinks``.
    static func endOfLinks(from url: URL) throws -> URL {
        var path = url.path
        for hop in 0...maximumLinks {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else {
                let end = URL(fileURLWithPath: path)
                guard hop > 0, let directory = realpath(end.deletingLastPathComponent().path, nil) else { return end }
                defer { free(directory) }
                return URL(fileURLWithPath: String(cString: directory)).appendingPathComponent(end.lastPathComponent)
            }
            let target: String
            do {
                target = try FileManager.default.destinationOfSymbolicLink(atPath: path)
            } catch {
                throw Unusable(description: "reading the symbolic link \(path) failed: \(error)")
            }
            path = target.hasPrefix("/") ? target : (path as NSString).deletingLastPathComponent + "/" + target
        }
        throw Unusable(
            description: "\(url.path) is a symbolic link that leads through more than \(maximumLinks) links, or round "
                + "in a loop")
    }

    /// Writes the snapshot to `url` atomically: a temporary file in the same directory (mode 0600), written and
    /// flushed, renamed over `url`, then the directory flushed, so that a crash leaves the old file or the new
    /// one, never a torn one. A missing directory is created with mode 0700.
    ///
    /// A `url` that is a symbolic link (to a persistent volume, say) stays one: the write goes to the file it leads
    /// to, replaced in that file's directory, as ``StorableConfig/JSONFileStore`` writes through a link. Nothing
    /// is created along a link: a missing directory at its end (a volume not mounted yet) is an error.
    /// - Throws: ``Unusable`` naming the step and the path.
    func write(to url: URL) throws {
        let file = try Self.endOfLinks(from: url)
        let isLink = file.path != url.path
        let directory = file.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            if isLink {
                throw Unusable(
                    description: "\(url.path) is a symbolic link to \(file.path), whose directory does not exist; "
                        + "create it, or point the link at a file in an existing directory")
            }
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw Unusable(description: "creating the directory \(directory.path) failed: \(error)")
            }
        }
        let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("creating", temporary) }
        var closed = false
        defer {
            if !closed { close(descriptor) }
        }
        do {
            // Exactly 0600, whatever the umask did to open's mode: the file holds secrets in clear.
            guard fchmod(descriptor, 0o600) == 0 else { throw Self.failure("setting the mode of", temporary) }
            let bytes = Array(jsonText().utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { writeBytes(descriptor, $0) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure("writing", temporary)
                }
                written += count
            }
            guard fsync(descriptor) == 0 else { throw Self.failure("flushing", temporary) }
            closed = true
            guard close(descriptor) == 0 else { throw Self.failure("closing", temporary) }
            guard rename(temporary.path, file.path) == 0 else { throw Self.failure("renaming it to", file) }
        } catch {
            unlink(temporary.path)
            throw error
        }
        let directoryDescriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    private static func failure(_ step: String, _ url: URL) -> Unusable {
        Unusable(description: "\(step) \(url.path) failed: \(String(cString: strerror(errno)))")
    }

    /// How many snapshots set aside are kept beside a snapshot file: the newest ones. Processes of different
    /// prefixes given one snapshot path set each other's snapshot aside at every start, without end.
    static let setAsideKept = 3

    /// Renames the snapshot at `url` out of the way, kept beside it with the time in its name, and reports why
    /// it is not used and, in `outcome`, what the store does instead. Through a symbolic link, the file it leads
    /// to is set aside beside that file, and the link stays. Only the ``setAsideKept`` newest set aside beside
    /// that file are kept: older ones are removed, and the report names them.
    static func setAside(_ url: URL, because reason: String, store: String, outcome: String) {
        let file = (try? endOfLinks(from: url)) ?? url
        let kept = file.deletingLastPathComponent().appendingPathComponent(
            file.lastPathComponent + ".unused-" + timestamp(Date()).replacingOccurrences(of: ":", with: "-"))
        let moved = rename(file.path, kept.path) == 0
        let cause = moved ? "" : String(cString: strerror(errno))
        let removed = moved ? removeOldSetAside(beside: file) : []
        StorableConfig.report(
            .reloadFailed(
                store: store,
                reason: "the snapshot \(url.path) was not used: \(reason); "
                    + (moved
                        ? "it was set aside as \(file.path == url.path ? kept.lastPathComponent : kept.path)"
                        : "setting it aside failed (\(cause)), so the next snapshot "
                            + "replaces it")
                    + (removed.isEmpty
                        ? ""
                        : " (only the \(setAsideKept) newest set aside are kept: \(removed.joined(separator: ", ")) "
                            + "removed)")
                    + "; \(outcome)"))
    }

    /// Removes the snapshots set aside beside `file` (`<name>.unused-<time>`) but the ``setAsideKept`` newest, and
    /// returns the names of those removed. The times in the names are UTC, of one width: their order is the
    /// names' order.
    private static func removeOldSetAside(beside file: URL) -> [String] {
        let directory = file.deletingLastPathComponent()
        let prefix = file.lastPathComponent + ".unused-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        let setAside = names.filter { $0.hasPrefix(prefix) }.sorted(by: >)
        return setAside.dropFirst(setAsideKept).filter { name in
            unlink(directory.appendingPathComponent(name).path) == 0
        }
    }
}

/// `write(2)`, out of the reach of ``EtcdSnapshot/write(to:)``'s name.
@available(watchOS, unavailable)
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    write(descriptor, bytes.baseAddress, bytes.count)
}
