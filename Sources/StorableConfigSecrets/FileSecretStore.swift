import Foundation
import StorableConfig

/// A secret store that keeps each secret in a file of its own, readable and writable by its owner only (mode
/// 0600), in a directory that only its owner may enter (mode 0700): the secret store of Linux and servers.
///
/// ```swift
/// let secrets = try FileSecretStore(directory: URL(fileURLWithPath: "/var/lib/example/secrets"))
/// try secrets.setSecret(Data("s3cr3t".utf8), forKey: "com.example.app.AppConfig.apiToken")
/// ```
///
/// The directory is created, with mode 0700, when it is missing and its parent exists. A directory that others
/// may read, write or enter (any group or other permission bit), or that belongs to another user than the
/// process's effective user, is refused with ``StorableConfigError/secretStoreUnavailable(store:reason:)``, by
/// this initializer and by every later call: it is never "fixed" silently, since its owner may have a reason,
/// and the message says how to fix it. A directory path that is a symbolic link is followed, and the directory
/// it leads to must pass the same checks; a secret's file that is a symbolic link is never followed, and is an
/// error naming the file.
///
/// Each key is a file named after it (see Docs/Secrets.md): keys may hold `/`, `..`, any Unicode, and be of any
/// length, and no two keys share a file. A write goes to a temporary file that is flushed to the disk and then
/// renamed over the secret's file, so that a reader sees the old bytes or the new ones, even if the writer is
/// killed. A writer killed meanwhile leaves its temporary file, named after its process id: the next store
/// made for the directory, in any process, removes those whose process is gone.
///
/// Who can read the secrets: the directory's owner and root. Backups that copy the directory copy the secrets.
public final class FileSecretStore: SecretStore {
    /// The directory that holds the secrets' files.
    public let directory: URL
    private let path: String
    private static let temporarySerial = Locked<UInt64>(0)
    static let temporaryPrefix = ".secret."

    /// Opens the secret store in `directory`, creating the directory if it is missing and its parent exists, and
    /// removes the temporary files that writers killed while writing left there.
    ///
    /// - Parameter directory: A directory of the process's user, of mode 0700 (or one to create).
    /// - Throws: ``StorableConfigError/secretStoreUnavailable(store:reason:)`` naming the directory and why it
    ///   cannot be used: its parent is missing, it is not a directory, others may use it, or another user owns it.
    public init(directory: URL) throws {
        self.directory = directory
        path = directory.path
        let descriptor = try openDirectory()
        defer { close(descriptor) }
        removeStaleTemporaryFiles(in: descriptor)
    }

    /// `directory /var/lib/example/secrets`.
    public var description: String { "directory \(path)" }

    /// The secret stored for `key`, or `nil` if there is none.
    public func secret(forKey key: String) throws -> Data? {
        let directory = try openDirectory()
        defer { close(directory) }
        let name = SecretFileName.name(forKey: key)
        // Not blocking, so that a FIFO put in place of the file cannot hang the read.
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw StorableConfigError.readFailed(key: key, reason: problem(code, opening: name))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw StorableConfigError.readFailed(
                key: key, reason: "the secret file \(file(name)) is not a regular file; remove it")
        }
        do {
            return try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd() ?? Data()
        } catch {
            throw StorableConfigError.readFailed(key: key, reason: "reading \(file(name)) failed: \(error)")
        }
    }

    /// Stores `data` for `key`, replacing what it held.
    public func setSecret(_ data: Data, forKey key: String) throws {
        let directory = try openDirectory()
        defer { close(directory) }
        let name = SecretFileName.name(forKey: key)
        try refuseLink(named: name, in: directory, key: key)
        let temporary = try writeTemporaryFile(data, in: directory, key: key)
        guard renameat(directory, temporary, directory, name) == 0 else {
            let code = errno
            unlinkat(directory, temporary, 0)
            throw StorableConfigError.writeFailed(
                key: key, reason: "renaming a temporary file to \(file(name)) failed: \(Self.text(code))")
        }
        _ = Self.flushToDisk(directory)
    }

    /// Stores `data` for `key` only if `key` holds no secret, and returns whether it did.
    public func addSecret(_ data: Data, forKey key: String) throws -> Bool {
        let directory = try openDirectory()
        defer { close(directory) }
        let name = SecretFileName.name(forKey: key)
        let temporary = try writeTemporaryFile(data, in: directory, key: key)
        defer { unlinkat(directory, temporary, 0) }
        // A link to a complete file: of several processes that link to the name, exactly one succeeds, and
        // readers never see the file before its bytes.
        guard linkat(directory, temporary, directory, name, 0) == 0 else {
            let code = errno
            guard code == EEXIST else {
                throw StorableConfigError.writeFailed(
                    key: key, reason: "linking a temporary file to \(file(name)) failed: \(Self.text(code))")
            }
            try refuseLink(named: name, in: directory, key: key)
            return false
        }
        _ = Self.flushToDisk(directory)
        return true
    }

    /// Removes the secret for `key`, if there is one.
    public func removeSecret(forKey key: String) throws {
        let directory = try openDirectory()
        defer { close(directory) }
        let name = SecretFileName.name(forKey: key)
        guard unlinkat(directory, name, 0) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw StorableConfigError.writeFailed(key: key, reason: "removing \(file(name)) failed: \(Self.text(code))")
        }
        _ = Self.flushToDisk(directory)
    }

    // MARK: Files

    private func file(_ name: String) -> String {
        path.hasSuffix("/") ? path + name : path + "/" + name
    }

    private func problem(_ code: Int32, opening name: String) -> String {
        code == ELOOP
            ? "the secret file \(file(name)) is a symbolic link, which a secret store never follows; remove it"
            : "opening \(file(name)) failed: \(Self.text(code))"
    }

    /// Throws if the secret's file is a symbolic link, which a write would replace without a word.
    private func refuseLink(named name: String, in directory: Int32, key: String) throws {
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFLNK else {
            return
        }
        throw StorableConfigError.writeFailed(key: key, reason: problem(ELOOP, opening: name))
    }

    /// Writes `data` to a new temporary file of mode 0600 in `directory`, flushed to the disk, and returns its name.
    private func writeTemporaryFile(_ data: Data, in directory: Int32, key: String) throws -> String {
        while true {
            let serial = Self.temporarySerial.withLock { serial in
                serial += 1
                return serial
            }
            let name = "\(Self.temporaryPrefix)\(getpid()).\(serial).tmp"
            let descriptor = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                let code = errno
                // A process of the same id in another container sharing the directory.
                if code == EEXIST { continue }
                throw StorableConfigError.writeFailed(
                    key: key, reason: "creating a temporary file in \(path) failed: \(Self.text(code))")
            }
            defer { close(descriptor) }
            do {
                // The mode given to openat is masked by the umask: set it whole.
                guard fchmod(descriptor, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EPERM) }
                try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: data)
                guard Self.flushToDisk(descriptor) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            } catch {
                unlinkat(directory, name, 0)
                throw StorableConfigError.writeFailed(key: key, reason: "writing a temporary file in \(path): \(error)")
            }
            return name
        }
    }

    /// `fsync`, or on Apple platforms `fcntl(F_FULLFSYNC)`, whose `fsync` only hands the data to the drive
    /// (falling back to `fsync` on file systems that refuse it).
    static func flushToDisk(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }

    static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
