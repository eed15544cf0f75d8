import Foundation

/// Symbolic links on the way to a settings file or a source: where a chain of links ends, and every entry a
/// watcher must watch for a re-pointed link to be a change.
extension FileSystem {
    /// How many symbolic links a path may lead through, as Linux allows (`MAXSYMLINKS`).
    static let maximumLinks = 40

    /// Where the symbolic link at `path` leads: the end of its chain of links, each relative one resolved
    /// against the directory of the link that holds it, with that directory's own links resolved; or `nil` if
    /// `path` is not a symbolic link (one `lstat`). The end need not exist (a dangling link), but its directory
    /// must.
    /// - Throws: ``Failure`` naming `path` and the link's end if the links loop or run longer than
    ///   ``maximumLinks``, or if the end's directory does not exist: nothing is created along a link, whose
    ///   directory may be a volume that is not mounted yet.
    static func endOfLinks(from path: String) throws -> String? {
        var current = path
        for hop in 0...maximumLinks {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                let code = errno
                guard hop > 0 else {
                    if code == ENOENT { return nil }
                    throw Failure(path: path, operation: "lstat", errno: code)
                }
                let directory = parentDirectory(of: current)
                if code == ENOENT, case .directory = try kind(ofPath: directory) {
                    return try physicalPath(of: current)
                }
                throw Failure(
                    path: path,
                    reason: "it is a symbolic link to \(current), whose directory \(directory) does not exist or is "
                        + "not a directory; create it, or point the link at a file in an existing directory")
            }
            guard info.st_mode & S_IFMT == S_IFLNK else {
                return hop == 0 ? nil : try physicalPath(of: current)
            }
            guard let target = linkText(ofPath: current) else {
                throw Failure(path: current, operation: "readlink", errno: errno)
            }
            current = target.hasPrefix("/") ? target : parentDirectory(of: current) + "/" + target
        }
        throw Failure(
            path: path,
            reason: "it is a symbolic link that leads through more than \(maximumLinks) links, or round in a loop; "
                + "point it at a file")
    }

    /// `path` with its directory as `realpath` gives it: no link, `.` or `..` left in it, so that messages and
    /// side files name the place plainly.
    private static func physicalPath(of path: String) throws -> String {
        let directory = parentDirectory(of: path)
        guard let resolved = realpath(directory, nil) else {
            throw Failure(path: directory, operation: "realpath", errno: errno)
        }
        defer { free(resolved) }
        let name =
            path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[path.utf8.index(after: $0)...]) } ?? path
        return FileSystem.joined(String(cString: resolved), name)
    }

    /// The text of the symbolic link at `path`, or `nil` (with `errno` set) if it is not a link or cannot be read.
    static func linkText(ofPath path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { readlink(path, $0.baseAddress!, $0.count - 1) }
        }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// The directory part of `path` as written (no `..` is undone, so that the kernel resolves it from where
    /// the path leads, as it resolves a link's text), or `.` for a bare name.
    private static func parentDirectory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        guard slash != path.utf8.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// A name in a directory.
    typealias DirectoryEntry = (directory: String, name: String)

    /// Every directory entry whose replacement changes what `path` leads to: each symbolic link on the way
    /// (in the path's directories too, as the `..data` link of a mounted Kubernetes volume), then the file at
    /// the end, each as the directory holding it (with no link left in it) and its name.
    /// - Returns: The entries, and whether the walk reached the end of the path (`false` when a directory on
    ///   the way is missing or a link loops: what follows it cannot be watched yet).
    static func entriesOnTheWay(to path: String) -> (entries: [DirectoryEntry], reachedTheEnd: Bool) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        // A stack of the components still to walk, the next on top.
        var pending = absolute.split(separator: "/").reversed().map(String.init)
        var resolved = ""
        var entries: [DirectoryEntry] = []
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                resolved = resolved.isEmpty ? "" : parentDirectory(of: resolved)
                if resolved == "/" { resolved = "" }
                continue
            }
            let directory = resolved.isEmpty ? "/" : resolved
            let candidate = resolved + "/" + component
            var info = stat()
            guard lstat(candidate, &info) == 0 else {
                entries.append((directory, component))
                return (entries, pending.isEmpty)
            }
            if info.st_mode & S_IFMT == S_IFLNK {
                entries.append((directory, component))
                links += 1
                guard links <= maximumLinks, let target = linkText(ofPath: candidate) else {
                    return (entries, false)
                }
                if target.hasPrefix("/") { resolved = "" }
                pending.append(contentsOf: target.split(separator: "/").reversed().map(String.init))
            } else {
                if pending.isEmpty { entries.append((directory, component)) }
                resolved = candidate
            }
        }
        return (entries, true)
    }
}
