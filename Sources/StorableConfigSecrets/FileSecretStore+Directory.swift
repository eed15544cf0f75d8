import Foundation
import StorableConfig

/// The directory of a ``FileSecretStore``: opened, created and checked before every use, and cleaned of the
/// temporary files of writers that were killed.
extension FileSecretStore {
    /// Opens the directory (following a symbolic link to it), creating it with mode 0700 when it is missing and its
    /// parent exists, and checks that only the process's user may use it.
    /// - Returns: A descriptor of the directory, which the caller closes; the checks hold for the directory it
    ///   opened, even if the path is re-pointed meanwhile.
    func openDirectory() throws -> Int32 {
        let path = directory.path
        var descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0, errno == ENOENT {
            let created = mkdir(path, 0o700) == 0
            guard created || errno == EEXIST else {
                let code = errno
                throw unavailable(
                    code == ENOENT
                        ? "it does not exist, nor does its parent directory; create the parent first"
                        : "creating it failed: \(Self.text(code))")
            }
            descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            // The mode given to mkdir is masked by the umask: the directory this made gets all of 0700.
            if created, descriptor >= 0 { fchmod(descriptor, 0o700) }
        }
        guard descriptor >= 0 else {
            let code = errno
            throw unavailable(
                code == ENOTDIR
                    ? "it is not a directory"
                    : "opening it failed: \(Self.text(code))"
                        + (code == EACCES || code == EPERM ? "; check the permissions of it and its parent" : ""))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw unavailable("its status cannot be read: \(Self.text(code))")
        }
        if let problem = Self.problem(owner: info.st_uid, mode: info.st_mode, path: path) {
            close(descriptor)
            throw unavailable(problem)
        }
        return descriptor
    }

    /// Why a directory of `owner` and `mode` cannot keep secrets, or `nil` if it can.
    static func problem(owner: uid_t, mode: mode_t, path: String) -> String? {
        let user = geteuid()
        if owner != user {
            return "it belongs to the user of id \(owner), not to this process's user (id \(user)), so that user "
                + "could read the secrets; give it to this user (chown \(user) \(path)) or choose another directory"
        }
        let permissions = mode & 0o777
        if permissions & 0o077 != 0 {
            return "its mode is \(String(permissions, radix: 8)), so users other than its owner may list or enter "
                + "it; make it private (chmod 700 \(path)) or choose another directory"
        }
        return nil
    }

    func unavailable(_ reason: String) -> StorableConfigError {
        .secretStoreUnavailable(store: description, reason: reason)
    }

    /// Removes the temporary files in `directory` whose writer's process is gone: a writer killed while it wrote.
    /// A process id that a new process reuses keeps its file until that process ends too.
    func removeStaleTemporaryFiles(in directory: Int32) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: self.directory.path) else { return }
        var removed = false
        for name in names where name.hasPrefix(Self.temporaryPrefix) && name.hasSuffix(".tmp") {
            let parts = name.dropFirst(Self.temporaryPrefix.count).split(separator: ".")
            guard let process = parts.first.flatMap({ pid_t($0) }), process > 0 else { continue }
            guard kill(process, 0) != 0, errno == ESRCH else { continue }
            removed = unlinkat(directory, name, 0) == 0 || removed
        }
        if removed { fsync(directory) }
    }
}
