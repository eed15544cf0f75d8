import Foundation

extension FileSystem.Failure {
    init(path: String, operation: String, errno code: Int32) {
        self.init(
            path: path,
            reason: "\(operation) failed: \(String(cString: strerror(code)))" + FileSystem.advice(for: code))
    }
}

/// The POSIX file operations behind ``JSONFileStore``: atomic replacement, advisory locks, identity stamps.
enum FileSystem {
    /// An operation on a path that failed, with the system's reason.
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { reason }
    }

    /// What a person can do about an error number, as a clause to append to the reason.
    static func advice(for code: Int32) -> String {
        switch code {
        case EACCES, EPERM: "; check the permissions of the file and its directory, or choose another path"
        case EROFS: "; the file system is read-only, so choose a path on a writable one"
        case ENOSPC, EDQUOT: "; free some disk space, then assign the setting again"
        case EFBIG: "; the file would exceed the process's file-size limit (ulimit -f) or the file system's"
        case ENOTDIR: "; a component of the path is a file, not a directory"
        case EISDIR: "; give the path of a file, not of a directory"
        default: ""
        }
    }

    /// Where Linux programs keep settings: `$XDG_CONFIG_HOME` if it is an absolute path, else `$HOME/.config`.
    /// (`NSHomeDirectory()` ignores `$HOME` on Linux; people expect `HOME=/tmp/x` to move their settings.)
    /// A relative `$HOME` is taken from the working directory now, as `URL(fileURLWithPath:)` takes it.
    static func userConfigDirectory() -> URL {
        if let configHome = getenv("XDG_CONFIG_HOME").map({ String(cString: $0) }), configHome.hasPrefix("/") {
            return URL(fileURLWithPath: configHome, isDirectory: true)
        }
        let home = getenv("HOME").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config", isDirectory: true)
    }

    /// `name` in `directory`, joined as text.
    static func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Identifies one version of a file: a rename or an edit changes it.
    struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64
    }

    enum Kind {
        case missing
        case file(Stamp, permissions: mode_t)
        case directory
        case other
    }

    static func kind(ofPath path: String) throws -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else {
            guard errno != ENOENT else { return .missing }
            throw Failure(path: path, operation: "stat", errno: errno)
        }
        return kind(of: info)
    }

    private static func kind(of info: stat) -> Kind {
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .file(stamp(of: info), permissions: info.st_mode & 0o777)
        default: return .other
        }
    }

    /// The identity stamp of what `stat` or `lstat` described, whatever its kind (the file watcher's polling
    /// stamps directories and links too).
    static func stamp(of info: stat) -> Stamp {
        #if canImport(Darwin)
            let modified = info.st_mtimespec
        #else
            let modified = info.st_mtim
        #endif
        return Stamp(
            device: UInt64(bitPattern: Int64(info.st_dev)), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modifiedSeconds: Int64(modified.tv_sec), modifiedNanoseconds: Int64(modified.tv_nsec))
    }

    /// Reads a whole file, or returns `nil` if it does not exist.
    static func contents(ofPath path: String) throws -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            guard errno != ENOENT else { return nil }
            throw Failure(path: path, operation: "open for reading", errno: errno)
        }
        defer { close(descriptor) }
        return try readToEnd(of: descriptor, path: path)
    }

    /// Reads the open file `descriptor` to its end, or until more than `limit` bytes are read: the data then
    /// holds more than `limit` bytes, and the caller refuses it.
    /// - Throws: ``Failure`` naming `path` and the read that failed.
    static func readToEnd(of descriptor: Int32, path: String, limit: Int = .max) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while data.count <= limit {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, operation: "read", errno: errno)
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Creates `path` and its missing parents as directories, for the settings file `file`.
    ///
    /// - Throws: ``Failure`` for `file`, whose reason names the directory that could not be made: the message
    ///   is about the settings file, and a directory is not one.
    static func createDirectory(atPath path: String, for file: String) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            if case .directory = try kind(ofPath: path) { return }
            // The system's reason ("No such file or directory"), not Foundation's "The operation could not be
            // completed", which the message would wrap.
            if let cause = (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error,
                (cause as NSError).domain == NSPOSIXErrorDomain
            {
                throw Failure(
                    path: file, operation: "creating its directory \(path)", errno: Int32((cause as NSError).code))
            }
            throw Failure(path: file, reason: "creating its directory \(path) failed: \(error.localizedDescription)")
        }
    }

    private static let temporaryCounter = Locked<UInt64>(0)

    /// A file that ``replaceFile(at:with:permissions:)`` replaces, with its directory and the start of its
    /// temporary files' paths worked out once (`NSString`'s path methods cost about 13,000 instructions a
    /// write on Linux).
    struct Destination {
        let path: String
        let directory: String
        /// The temporary file's path up to the process id.
        let temporaryPrefix: String
        /// Where the new contents wait while a file that is a mount point is rewritten in place
        /// (`settings.json.rewrite`): see ``rewriteInPlace(at:with:from:)``.
        let rewriteCopy: String
        /// The side file that writers lock (`settings.json.lock`): see ``withExclusiveLock(on:_:)``.
        let lockPath: String

        init(path: String) {
            self.path = path
            directory = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            temporaryPrefix = (directory as NSString).appendingPathComponent(".\(name).")
            rewriteCopy = path + ".rewrite"
            lockPath = path + ".lock"
        }
    }

    /// Replaces the file at `destination` with `data` so that a crash at any instant leaves either the old or the
    /// new file: write a temporary file in the same directory, flush it, rename it over the old one, and flush the
    /// directory. A file that is a mount point (a single-file bind mount), which rename cannot replace, is
    /// rewritten in place instead: see ``rewriteInPlace(at:with:from:)``.
    /// - Returns: The stamp of the new file, taken from its descriptor (no second look at the path).
    @discardableResult
    static func replaceFile(at destination: Destination, with data: Data, permissions: mode_t) throws -> Stamp? {
        let path = destination.path
        let serial = temporaryCounter.withLock { counter in
            counter += 1
            return counter
        }
        let temporary = "\(destination.temporaryPrefix)\(getpid()).\(serial).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw Failure(path: path, operation: "creating a temporary file", errno: errno) }
        var succeeded = false
        var stamp: Stamp?
        defer {
            if !succeeded { unlink(temporary) }
        }
        do {
            defer { close(descriptor) }
            // The mode given to open() is masked by the umask; settings files keep the mode asked for.
            fchmod(descriptor, permissions)
            try writeAll(data, to: descriptor, path: path)
            guard flushData(descriptor) == 0 else { throw Failure(path: path, operation: "fsync", errno: errno) }
            stamp = stampOfOpenFile(descriptor)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            guard code == EBUSY else { throw Failure(path: path, operation: "rename", errno: code) }
            succeeded = true
            return try rewriteInPlace(at: destination, with: data, from: temporary)
        }
        succeeded = true
        flushDirectory(destination.directory)
        return stamp
    }

    /// Rewrites a file that is a mount point in place (a single-file bind mount: `docker run -v
    /// ./settings.json:/app/settings.json`, a Kubernetes `subPath`), which rename cannot replace (EBUSY).
    ///
    /// The new contents, written and flushed to `temporary`, are first renamed to the copy beside the file
    /// (`settings.json.rewrite`), so that they are whole on disk before the file is touched; then the file is
    /// overwritten, cut to their length and flushed, and the copy removed. A crash in between leaves the copy,
    /// which the next write (or a read that finds the file torn) puts back under the lock. Called under the side
    /// file's lock.
    private static func rewriteInPlace(at destination: Destination, with data: Data, from temporary: String) throws
        -> Stamp?
    {
        guard rename(temporary, destination.rewriteCopy) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(
                path: destination.path,
                operation: "the file is a mount point, and keeping its new contents beside it", errno: code)
        }
        flushDirectory(destination.directory)
        let stamp = try overwrite(atPath: destination.path, with: data)
        unlink(destination.rewriteCopy)
        flushDirectory(destination.directory)
        return stamp
    }

    /// Writes `data` over the file at `path` from its start, cuts the file to that length and flushes it: a
    /// rewrite in place, which a crash can leave torn (see ``rewriteInPlace(at:with:from:)``).
    /// - Returns: The stamp of the file, taken from its descriptor.
    static func overwrite(atPath path: String, with data: Data) throws -> Stamp? {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Failure(path: path, operation: "opening the file to rewrite it in place", errno: errno)
        }
        defer { close(descriptor) }
        #if canImport(Glibc) || canImport(Musl)
            // The blocks for the new length first, so that a full disk fails the write before a byte of the file
            // changes; a file system that cannot reserve them (an error other than these) is written as it is.
            let code = posix_fallocate(descriptor, 0, off_t(data.count))
            if code == ENOSPC || code == EDQUOT || code == EFBIG {
                throw Failure(path: path, operation: "reserving space for the new contents", errno: code)
            }
        #endif
        try writeAll(data, to: descriptor, path: path)
        guard ftruncate(descriptor, off_t(data.count)) == 0 else {
            throw Failure(path: path, operation: "truncate", errno: errno)
        }
        guard flushData(descriptor) == 0 else { throw Failure(path: path, operation: "fsync", errno: errno) }
        return stampOfOpenFile(descriptor)
    }

    /// Writes all of `data` at the descriptor's offset.
    static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(path: path, operation: "write", errno: errno)
                }
                offset += written
            }
        }
    }

    private static func stampOfOpenFile(_ descriptor: Int32) -> Stamp? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, case .file(let stamp, _) = kind(of: info) else { return nil }
        return stamp
    }

    /// Flushes a directory's entries (a rename or an unlink in it) to the disk, as far as it can.
    private static func flushDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = flushToDisk(descriptor)
        close(descriptor)
    }

    /// Flushes a new file's contents, and the metadata needed to read them back, to the disk: `fdatasync`
    /// on Linux (it skips timestamps); on Apple platforms `fcntl(F_FULLFSYNC)`, because their `fsync` only
    /// hands the data to the drive, whose cache may lose it on power loss.
    private static func flushData(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc) || canImport(Musl)
            return fdatasync(descriptor)
        #else
            return flushToDisk(descriptor)
        #endif
    }

    /// `fsync`, or on Apple platforms `fcntl(F_FULLFSYNC)` (falling back to `fsync` on file systems that
    /// refuse it, as Apple's own code does).
    static func flushToDisk(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }

    /// Runs `body` holding an exclusive advisory lock on the side file of `destination` (its `lockPath`), which is
    /// never replaced (a lock on the data file itself would not survive the rename that replaces it).
    ///
    /// A missing directory is created (and only then looked at), so the usual write makes no extra call.
    static func withExclusiveLock<Result>(on destination: Destination, _ body: () throws -> Result) throws -> Result {
        let lockPath = destination.lockPath
        var descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor < 0, errno == ENOENT {
            try createDirectory(atPath: destination.directory, for: destination.path)
            descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        }
        guard descriptor >= 0 else { throw Failure(path: lockPath, operation: "opening the lock file", errno: errno) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Failure(path: lockPath, operation: "flock", errno: errno) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// Returns a path beside `path` that does not exist yet: `<path>.<suffix>-<UTC date>`, numbered if taken.
    static func unusedSiblingPath(for path: String, suffix: String) -> String {
        let wholeSeconds = Date(timeIntervalSinceReferenceDate: Date().timeIntervalSinceReferenceDate.rounded(.down))
        let stamp = ISO8601Timestamp.string(from: wholeSeconds)
            .replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let base = "\(path).\(suffix)-\(stamp)"
        return (1...).lazy.map { $0 == 1 ? base : "\(base)-\($0)" }.first { access($0, F_OK) != 0 }!
    }

    /// Moves a file aside to a dated name beside it and returns the new path.
    static func quarantine(path: String) throws -> String {
        let destination = unusedSiblingPath(for: path, suffix: "corrupt")
        guard rename(path, destination) == 0 else {
            throw Failure(path: path, operation: "moving the corrupt file aside", errno: errno)
        }
        return destination
    }
}
