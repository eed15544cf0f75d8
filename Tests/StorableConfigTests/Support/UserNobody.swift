import Foundation
import Testing

/// User and group nobody (65534), which a test running as root becomes in an exit test's child so that file
/// permissions refuse it as they refuse any user. A test running as another user stays that user.
///
/// Whatever the child needs is resolved in the parent, before it gives up root: the child of a test in a clone
/// inside a private directory (a container's `/root`, a `mktemp -d` folder) cannot reach the build folder as
/// nobody.
enum UserNobody {
    static let id: UInt32 = 65534

    /// Whether the tests that become nobody can run here: they keep their files in the temporary directory,
    /// which nobody must be able to enter. Always so for a user other than root, who stays itself.
    static let canUseTemporaryDirectory =
        getuid() != 0 || canReach(FileManager.default.temporaryDirectory.path)

    /// Whether nobody, with no other group, may enter every directory on the way to `path` and, when `executing`,
    /// run the file there; else enter the directory at `path` itself.
    static func canReach(_ path: String, executing: Bool = false) -> Bool {
        var reached = ""
        var info = stat()
        for component in URL(fileURLWithPath: path).resolvingSymlinksInPath().pathComponents {
            reached += reached.isEmpty || reached == "/" ? component : "/" + component
            guard stat(reached, &info) == 0 else { return false }
            // Search permission on a directory, execute permission on the file.
            let bit = info.st_uid == id ? S_IXUSR : info.st_gid == id ? S_IXGRP : S_IXOTH
            guard info.st_mode & bit != 0 else { return false }
        }
        return (info.st_mode & S_IFMT) == (executing ? S_IFREG : S_IFDIR)
    }

    /// The path of the built executable `name` that the child can run once it is nobody: where it was built if
    /// nobody can run it there, else a copy in `directory`, which this makes enterable by anyone.
    ///
    /// The copy is written through a descriptor closed on exec: a child that another test starts meanwhile
    /// would otherwise keep the copy open for writing, and running it would fail with ETXTBSY ("Text file busy").
    static func runnablePath(ofProduct name: String, copyingInto directory: URL) throws -> String {
        let built = try builtProduct(name)
        if getuid() != 0 || canReach(built.path, executing: true) { return built.path }
        chmod(directory.path, 0o755)
        let copy = directory.appendingPathComponent(name).path
        let contents = try Data(contentsOf: built)
        let descriptor = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: contents)
        fchmod(descriptor, 0o755)
        return copy
    }

    /// In an exit test's child: runs the executable at `path` with `arguments` in place of the child, or ends the
    /// child with status 4 saying why. A copy that another process still has open for writing for a moment (a
    /// child started by another test, between its fork and its exec) is tried again.
    static func exec(_ path: String, _ arguments: [String]) -> Never {
        var pointers: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        for _ in 0..<500 {
            execv(path, &pointers)
            guard errno == ETXTBSY else { break }
            usleep(10_000)
        }
        ExitTestChild.fail(4, "starting \(path) failed: \(String(cString: strerror(errno)))")
    }

    /// In an exit test's child running as root: becomes nobody, root's supplementary groups dropped too (group
    /// root could otherwise still read a file of mode 0640), or ends the child with status 3 saying why.
    static func becomeIfRoot() {
        guard getuid() == 0 else { return }
        guard setgroups(0, nil) == 0, setgid(id) == 0, setuid(id) == 0 else {
            ExitTestChild.fail(3, "becoming nobody failed: \(String(cString: strerror(errno)))")
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// For a test that becomes nobody when run as root: skipped, saying why, where nobody cannot enter the
    /// temporary directory in which the test keeps its files.
    static var nobodyCanEnterTheTemporaryDirectory: Self {
        .enabled(
            if: UserNobody.canUseTemporaryDirectory,
            "as root this test becomes nobody, who cannot enter the temporary directory here (TMPDIR)")
    }
}
