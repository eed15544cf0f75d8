import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

final class FaultConfig: StorableConfig {
    override class var namespace: String { "fault" }
    @Setting var note = ""
}

final class FullDiskConfig: StorableConfig {
    override class var namespace: String { "fulldisk" }
    @Setting var note = ""
    @Setting var count = 0
}

final class BindMountConfig: StorableConfig {
    override class var namespace: String { "bindmount" }
    @Setting var note = ""
    @Setting var count = 0
}

/// The full-disk test's own, so that its reports name keys that no other test (they run at once) writes.
final class FullBindMountConfig: StorableConfig {
    override class var namespace: String { "fullbindmount" }
    @Setting var note = ""
    @Setting var count = 0
}

final class ReadOnlyDiskConfig: StorableConfig {
    override class var namespace: String { "readonlydisk" }
    @Setting var note = ""
    @Setting var count = 0
}

/// Bad environments for JSONFileStore, each in a child process so that limits and lost privileges stay there.
/// Each child prints what it reported to standard error and exits 0 only if nothing was lost.
struct FaultInjectionTests {
    /// A directory that the child (which cannot capture values) and this process can both name.
    static func sharedDirectory(_ name: String, parent: pid_t) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("StorableConfigTests-\(name)-\(parent)")
    }

    @Test func aFullDiskFailsTheWriteNamingThePathAndLosesNothing() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // A file-size limit makes write(2) fail with EFBIG past it, as a full disk fails with ENOSPC.
            signal(SIGXFSZ, SIG_IGN)
            let directory = FaultInjectionTests.sharedDirectory("full", parent: getppid())
            ExitTestChild.attempt(5, "creating \(directory.path)") {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            let url = directory.appendingPathComponent("settings.json")
            let config = FaultConfig(
                store: ExitTestChild.attempt(6, "opening \(url.path)") { try JSONFileStore(url: url) })
            config.note = "small"
            let before = ExitTestChild.attempt(7, "reading \(url.path)") { try Data(contentsOf: url) }
            var limit = rlimit(rlim_cur: 4096, rlim_max: rlim_t.max)
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
            let big = String(repeating: "x", count: 10_000)
            config.note = big
            guard config.note == big, (try? Data(contentsOf: url)) == before else { exit(1) }
            let leftovers = ExitTestChild.attempt(8, "listing \(directory.path)") {
                try FileManager.default.contentsOfDirectory(atPath: directory.path)
            }
            guard !leftovers.contains(where: { $0.hasSuffix(".tmp") }) else { exit(2) }
            exit(0)
        }
        try? FileManager.default.removeItem(at: Self.sharedDirectory("full", parent: getpid()))
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("fault.FaultConfig.note"))
        #expect(message.contains("settings.json"))
        #expect(message.contains("File too large"))
    }

    @Test(.nobodyCanEnterTheTemporaryDirectory) func anUnwritableDirectoryFailsTheWriteNamingThePathAndLosesNothing()
        async
    {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let directory = FaultInjectionTests.sharedDirectory("unwritable", parent: getppid())
            let locked = directory.appendingPathComponent("locked")
            ExitTestChild.attempt(5, "creating \(locked.path)") {
                try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
            }
            chmod(locked.path, 0o555)
            chmod(directory.path, 0o755)
            // Root ignores permissions; become nobody to be refused like any user.
            UserNobody.becomeIfRoot()
            let url = locked.appendingPathComponent("settings.json")
            let config = FaultConfig(
                store: ExitTestChild.attempt(6, "opening \(url.path)") { try JSONFileStore(url: url) })
            config.note = "kept in memory"
            guard config.note == "kept in memory", !FileManager.default.fileExists(atPath: url.path) else { exit(1) }
            exit(0)
        }
        let directory = Self.sharedDirectory("unwritable", parent: getpid())
        chmod(directory.appendingPathComponent("locked").path, 0o755)
        try? FileManager.default.removeItem(at: directory)
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("fault.FaultConfig.note"))
        #expect(message.contains("locked"))
        #expect(message.contains("Permission denied"))
    }

    @Test(.nobodyCanEnterTheTemporaryDirectory) func anUnreadableFileIsAnErrorNamingThePathAndIsLeftAsItIs()
        async throws
    {
        let directory = Self.sharedDirectory("unreadable", parent: getpid())
        let url = directory.appendingPathComponent("settings.json")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Data(#"{"fault.FaultConfig.note": "kept"}"#.utf8)
        try content.write(to: url)
        chmod(url.path, 0o000)
        // Writable by anyone, so that a store that moved the file aside or replaced it could.
        chmod(directory.path, 0o777)
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // Root reads any file; become nobody to be refused like any user.
            UserNobody.becomeIfRoot()
            let url = FaultInjectionTests.sharedDirectory("unreadable", parent: getppid())
                .appendingPathComponent("settings.json")
            do {
                _ = try JSONFileStore(url: url)
                exit(1)
            } catch StorableConfigError.fileUnusable(let path, let reason) {
                FileHandle.standardError.write(Data("\(path): \(reason)\n".utf8))
                exit(path == url.path ? 0 : 2)
            } catch {
                exit(4)
            }
        }
        chmod(url.path, 0o600)
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains(url.path))
        #expect(message.contains("Permission denied"))
        // Not moved aside, not replaced, not even locked: the directory is as it was.
        #expect(try Data(contentsOf: url) == content)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["settings.json"])
    }

    /// A file that does not parse, in a directory this user may not write, where no lock file can be made: the
    /// reason given is the file's, not the lock file's.
    @Test(.nobodyCanEnterTheTemporaryDirectory)
    func aCorruptFileInAnUnwritableDirectoryIsRefusedForItsContent() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        try Data("{ not json".utf8).write(to: url)
        chmod(url.path, 0o644)
        chmod(directory.url.path, 0o555)
        defer { chmod(directory.url.path, 0o755) }
        let path = url.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            // Root writes any directory; become nobody to be refused like any user.
            UserNobody.becomeIfRoot()
            do {
                _ = try JSONFileStore(url: URL(fileURLWithPath: path), refusingCorruptFile: true)
                ExitTestChild.fail(5, "the corrupt file was opened")
            } catch StorableConfigError.fileUnusable(let failedPath, let reason) {
                guard failedPath == path, reason.contains("not valid JSON") else {
                    ExitTestChild.fail(6, "refused for another reason: \(failedPath): \(reason)")
                }
                exit(0)
            } catch {
                ExitTestChild.fail(7, "\(error)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["settings.json"])
    }

    /// iOS data protection: before the first unlock a background launch cannot open a protected file (EPERM), as
    /// a process here cannot open a file of mode 000. A store already open must take that for an error, reported,
    /// and read the file again once it opens, never for an empty file that its next write would replace.
    @Test(.nobodyCanEnterTheTemporaryDirectory)
    func aFileThatCannotBeOpenedForAWhileIsReportedNotReplacedAndReadOnceItOpens() async throws {
        let directory = Self.sharedDirectory("protected", parent: getpid())
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Writable by anyone, so that the child, which gives up root, can make and replace files in it.
        chmod(directory.path, 0o777)
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // Root opens any file; become nobody to be refused like any user.
            UserNobody.becomeIfRoot()
            let directory = FaultInjectionTests.sharedDirectory("protected", parent: getppid())
            let url = directory.appendingPathComponent("settings.json")
            let config = FullDiskConfig(
                store: ExitTestChild.attempt(12, "opening \(url.path)") { try JSONFileStore(url: url) })
            config.note = "before"
            // Another process replaces the file, and it cannot be opened (the device locked, say).
            let outside = Data(#"{"fulldisk.FullDiskConfig.note": "before", "fulldisk.FullDiskConfig.count": 7}"#.utf8)
            let staged = directory.appendingPathComponent("staged.json")
            ExitTestChild.attempt(13, "writing \(staged.path)") { try outside.write(to: staged) }
            chmod(staged.path, 0)
            guard rename(staged.path, url.path) == 0 else { exit(4) }
            // A reload fails and keeps the values; a write fails, is kept in memory, and replaces nothing.
            if (try? config.reload()) != nil { exit(5) }
            guard config.note == "before", config.count == 0 else { exit(6) }
            config.note = "while locked"
            guard config.note == "while locked" else { exit(7) }
            chmod(url.path, 0o600)
            guard (try? Data(contentsOf: url)) == outside else { exit(8) }
            // Readable again: the next reload reads the other process's value, the next write keeps both.
            do { try config.reload() } catch { exit(9) }
            guard config.count == 7, config.note == "while locked" else { exit(10) }
            config.count = 8
            guard let data = try? Data(contentsOf: url),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                object["fulldisk.FullDiskConfig.note"] as? String == "while locked",
                object["fulldisk.FullDiskConfig.count"] as? Int == 8
            else { exit(11) }
            exit(0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains(directory.appendingPathComponent("settings.json").path))
        #expect(message.contains("Permission denied"))
        #expect(message.contains("fulldisk.FullDiskConfig.note"))
    }

    /// A Secret volume's file, then its directory, made unreadable under a running server: the setting keeps the
    /// secret it read, observers hear of no change, and each problem is one report in plain words (the directory's
    /// was `NSCocoaErrorDomain Code=257 … UserInfo={…}`).
    @Test(.nobodyCanEnterTheTemporaryDirectory)
    func aSourceMadeUnreadableKeepsItsValueAndSaysSoOnceInPlainWords() async throws {
        let base = TemporaryDirectory()
        // Writable by anyone, so that the child, which gives up root, can make the source in it.
        chmod(base.url.path, 0o777)
        let basePath = base.url.path
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [basePath = basePath as String] in
            // Root reads any file; become nobody to be refused like any user.
            UserNobody.becomeIfRoot()
            let secret = basePath + "/secret"
            let file = secret + "/SERVER_CONFIG_NAME"
            ExitTestChild.attempt(4, "making \(file)") {
                try FileManager.default.createDirectory(atPath: secret, withIntermediateDirectories: false)
                try "secret-v1".write(toFile: file, atomically: false, encoding: .utf8)
            }
            let config = ServerConfig(
                store: InMemoryStore(["srv.ServerConfig.name": .string("stored")]),
                sources: ConfigSources(aboveStore: [.directory(secret, secret: true)]))
            guard config.name == "secret-v1" else { ExitTestChild.fail(5, "the setting read \(config.name)") }
            let seen = Locked<[String]>([])
            let token = config.$name.observe { value in seen.withLock { $0.append(value) } }
            chmod(file, 0)
            StorableConfig.reloadSources()
            StorableConfig.reloadSources()
            guard config.name == "secret-v1" else {
                ExitTestChild.fail(6, "with the file unreadable the setting read \(config.name)")
            }
            chmod(secret, 0)
            StorableConfig.reloadSources()
            StorableConfig.reloadSources()
            guard config.name == "secret-v1" else {
                ExitTestChild.fail(7, "with the directory unreadable the setting read \(config.name)")
            }
            chmod(secret, 0o755)
            chmod(file, 0o644)
            ExitTestChild.attempt(8, "writing \(file)") {
                try "secret-v2".write(toFile: file, atomically: false, encoding: .utf8)
            }
            StorableConfig.reloadSources()
            guard waitUntil({ seen.withLock { $0 }.last == "secret-v2" }), seen.withLock({ $0 }) == ["secret-v2"] else {
                ExitTestChild.fail(9, "observers heard \(seen.withLock { $0 })")
            }
            token.cancel()
            exit(0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let reports = message.split(separator: "\n").filter { $0.contains("Permission denied") }
        #expect(!message.contains("NSCocoaErrorDomain"), "\(message)")
        #expect(reports.count == 2, "\(message)")
        #expect(reports.filter { $0.contains("file \(basePath)/secret/SERVER_CONFIG_NAME") }.count == 1, "\(message)")
        #expect(reports.filter { $0.contains("it cannot be listed (Permission denied)") }.count == 1, "\(message)")
        #expect(reports.allSatisfy { $0.contains("the values it gave before are kept") }, "\(message)")
    }

    /// Mounts a tmpfs of 64 KB on a new directory, runs `body` with that directory, and unmounts it, whether
    /// `body` returns or throws. Mounting needs root.
    static func withTmpfs(_ body: (URL) throws -> Void) throws {
        let directory = TemporaryDirectory()
        let disk = directory.file("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        guard mount("tmpfs", disk.path, "tmpfs", 0, "size=64k") == 0 else {
            Issue.record("mounting a tmpfs on \(disk.path) failed: \(String(cString: strerror(errno)))")
            return
        }
        defer {
            umount2(disk.path, Int32(MNT_DETACH))
            withExtendedLifetime(directory) {}
        }
        try body(disk)
    }

    /// Remounts the tmpfs at `disk` (made by ``withTmpfs(_:)``) read-only, or writable again.
    static func remount(_ disk: URL, readOnly: Bool) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        try #require(
            mount("tmpfs", disk.path, "tmpfs", flags, "size=64k") == 0,
            "remounting failed: \(String(cString: strerror(errno)))")
    }

    /// Fills the disk at `disk` with a file of its own, so that freeing the space is removing that file; returns it.
    static func fill(_ disk: URL) throws -> URL {
        let filler = disk.appendingPathComponent("filler")
        let descriptor = open(filler.path, O_WRONLY | O_CREAT, 0o600)
        try #require(descriptor >= 0)
        let block = [UInt8](repeating: 0, count: 1024)
        while write(descriptor, block, block.count) > 0 {}
        let fillError = errno
        close(descriptor)
        try #require(fillError == ENOSPC, "filling the tmpfs ended with \(String(cString: strerror(fillError)))")
        return filler
    }

    /// A real full disk: a 64 KB tmpfs, filled up.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs to fill up needs root; run the tests as root to include it"))
    func aFullDiskIsReportedKeepsTheOldFileAndTheNextWriteStoresThePendingValue() throws {
        ReportedErrors.install()
        try Self.withTmpfs { disk in
            let url = disk.appendingPathComponent("settings.json")
            let config = FullDiskConfig(store: try JSONFileStore(url: url))
            config.note = "small"
            let before = try Data(contentsOf: url)
            let filler = try Self.fill(disk)

            let big = String(repeating: "x", count: 16 * 1024)
            config.note = String(repeating: "y", count: 16 * 1024)
            // A second failed write of the key: one report per key until a write succeeds, not one per write.
            config.note = big
            #expect(config.note == big)
            let reported = ReportedErrors.mentioning("'fulldisk.FullDiskConfig.note'")
            #expect(reported.count == 1)
            #expect(reported.allSatisfy { $0.description.contains(url.path) })
            #expect(reported.allSatisfy { $0.description.contains("No space left on device") })
            #expect(try Data(contentsOf: url) == before)
            let names = try FileManager.default.contentsOfDirectory(atPath: disk.path).sorted()
            #expect(names == ["filler", "settings.json", "settings.json.lock"])

            try FileManager.default.removeItem(at: filler)
            config.count = 1
            let object = try jsonObject(at: url)
            #expect(object["fulldisk.FullDiskConfig.note"] as? String == big)
            #expect(object["fulldisk.FullDiskConfig.count"] as? Int == 1)
        }
    }

    /// Binds a file holding `contents` over `settings.json` in a directory of its own, as `docker run -v
    /// ./settings.json:/app/settings.json` or a Kubernetes `subPath` does, runs `body` with the bound file (the
    /// host's) and the mount point (the program's), and unmounts, whether `body` returns or throws. Needs root.
    static func withBindMount(
        holding contents: String, hostIn hostDirectory: URL? = nil, _ body: (_ host: URL, _ mounted: URL) throws -> Void
    ) throws {
        let directory = TemporaryDirectory()
        let host = (hostDirectory ?? directory.url).appendingPathComponent("host.json")
        let app = directory.file("app")
        let mounted = app.appendingPathComponent("settings.json")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: host)
        try Data().write(to: mounted)
        guard mount(host.path, mounted.path, nil, UInt(MS_BIND), nil) == 0 else {
            Issue.record("binding \(host.path) on \(mounted.path) failed: \(String(cString: strerror(errno)))")
            return
        }
        defer {
            umount2(mounted.path, Int32(MNT_DETACH))
            withExtendedLifetime(directory) {}
        }
        try body(host, mounted)
    }

    /// A settings file that is a single-file bind mount: rename cannot replace it ("rename failed: Device or
    /// resource busy", and the value lived in memory only), so each write rewrites it in place under the lock.
    @Test(.enabled(if: getuid() == 0, "a bind mount needs root; run the tests as root to include it"))
    func aSettingsFileThatIsABindMountIsRewrittenInPlace() throws {
        ReportedErrors.install()
        try Self.withBindMount(holding: #"{"bindmount.BindMountConfig.count": 1}"#) { host, mounted in
            let config = BindMountConfig(store: try JSONFileStore(url: mounted))
            #expect(config.count == 1)
            config.note = "through the mount"
            config.count = 2
            #expect(ReportedErrors.mentioning("bindmount.BindMountConfig").isEmpty)
            let object = try jsonObject(at: host)
            #expect(object["bindmount.BindMountConfig.note"] as? String == "through the mount")
            #expect(object["bindmount.BindMountConfig.count"] as? Int == 2)
            // Shorter contents leave no tail of the longer ones.
            config.note = ""
            #expect(try jsonObject(at: host)["bindmount.BindMountConfig.note"] as? String == "")
            let names = try FileManager.default.contentsOfDirectory(atPath: mounted.deletingLastPathComponent().path)
            #expect(names.sorted() == ["settings.json", "settings.json.lock"])
        }
    }

    /// A full disk under a bind-mounted settings file: a write that grows the file fails before a byte of it
    /// changes (a rewrite in place cut short by the disk would leave it torn), is reported, and the next write
    /// once there is space stores the pending value.
    @Test(.enabled(if: getuid() == 0, "a bind mount needs root; run the tests as root to include it"))
    func aFullDiskUnderABindMountedFileFailsTheWriteAndLeavesTheFileWhole() throws {
        ReportedErrors.install()
        try Self.withTmpfs { disk in
            try Self.withBindMount(holding: #"{"fullbindmount.FullBindMountConfig.count": 1}"#, hostIn: disk) {
                host, mounted in
                let config = FullBindMountConfig(store: try JSONFileStore(url: mounted))
                let before = try Data(contentsOf: host)
                let filler = try Self.fill(disk)
                let big = String(repeating: "x", count: 16 * 1024)
                config.note = big
                #expect(config.note == big)
                let reported = ReportedErrors.mentioning("'fullbindmount.FullBindMountConfig.note'")
                #expect(reported.count == 1)
                #expect(reported.allSatisfy { $0.description.contains("No space left on device") }, "\(reported)")
                #expect(try Data(contentsOf: host) == before)
                try FileManager.default.removeItem(at: filler)
                config.count = 2
                let object = try jsonObject(at: host)
                #expect(object["fullbindmount.FullBindMountConfig.note"] as? String == big)
                #expect(object["fullbindmount.FullBindMountConfig.count"] as? Int == 2)
            }
        }
    }

    /// A rewrite in place cut short leaves the file torn and the new contents whole beside it
    /// (`settings.json.rewrite`): the next open puts them in the file. A file that parses is kept and the copy
    /// removed: the rewrite never began, or someone wrote the file since.
    @Test(.enabled(if: getuid() == 0, "a bind mount needs root; run the tests as root to include it"))
    func aRewriteInPlaceCutShortIsFinishedByTheNextOpen() throws {
        try Self.withBindMount(holding: #"{"bindmount.BindMountConfig.count": 1}"#) { host, mounted in
            /// Writes the file in place, as a person editing it on the host, or a rewrite cut short, leaves it.
            func writeInPlace(_ url: URL, _ data: Data) throws {
                let handle = try FileHandle(forWritingTo: url)
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: data)
                try handle.close()
            }
            let copy = URL(fileURLWithPath: mounted.path + ".rewrite")
            let whole = Data(#"{"bindmount.BindMountConfig.count": 2, "bindmount.BindMountConfig.note": "whole"}"#.utf8)
            // What a crash halfway through the rewrite leaves.
            try whole.write(to: copy)
            try writeInPlace(mounted, whole.prefix(30))
            do {
                let config = BindMountConfig(store: try JSONFileStore(url: mounted))
                #expect(config.count == 2)
                #expect(config.note == "whole")
            }
            #expect(try Data(contentsOf: host) == whole)
            #expect(!FileManager.default.fileExists(atPath: copy.path))
            // A copy beside a file that parses, which a person edited on the host since: the file wins.
            try whole.write(to: copy)
            try writeInPlace(host, Data(#"{"bindmount.BindMountConfig.count": 3}"#.utf8))
            let store = try JSONFileStore(url: mounted)
            try store.setValue(.string("later"), forKey: "bindmount.BindMountConfig.note")
            #expect(store.value(forKey: "bindmount.BindMountConfig.count") == .int(3))
            #expect(!FileManager.default.fileExists(atPath: copy.path))
            #expect(try jsonObject(at: host)["bindmount.BindMountConfig.count"] as? Int == 3)
        }
    }

    /// A writer killed at random moments while it rewrites a bind-mounted file in place (about 20 KB each write):
    /// the next open finds every acknowledged write, in a file that parses.
    @Test(
        .enabled(if: getuid() == 0, "a bind mount needs root; run the tests as root to include it"),
        .timeLimit(.minutes(5)))
    func aWriterKilledWhileRewritingABindMountedFileLosesNoAcknowledgedWrite() throws {
        try Self.withBindMount(holding: "{}") { host, mounted in
            var acknowledged = 0
            for round in 0..<(isRunningUnderThreadSanitizer ? 20 : 100) {
                let acked = try ProcessTests.killCounterWriter(writing: mounted.path, afterAFirstWrite: round % 2 == 1)
                acknowledged = max(acknowledged, acked)
                let counter = try { () throws -> Int in
                    let store = try JSONFileStore(url: mounted)
                    guard case .int(let number)? = store.value(forKey: "counter") else { return 0 }
                    return Int(number)
                }()
                #expect(counter >= acked, "round \(round)")
                #expect((try? JSONText.parse(Data(contentsOf: host))) != nil, "round \(round): torn after an open")
                let siblings = try FileManager.default.contentsOfDirectory(
                    atPath: mounted.deletingLastPathComponent().path)
                #expect(!siblings.contains { $0.contains("corrupt") })
            }
            #expect(acknowledged > 0, "no writer got as far as one write")
        }
    }

    /// A file system mounted read-only under a running program, then writable again.
    @Test(.enabled(if: getuid() == 0, "remounting a tmpfs read-only needs root; run the tests as root to include it"))
    func aReadOnlyFileSystemIsReportedKeepsTheFileAndTheNextWriteStoresThePendingValue() throws {
        ReportedErrors.install()
        try Self.withTmpfs { disk in
            let url = disk.appendingPathComponent("settings.json")
            let config = ReadOnlyDiskConfig(store: try JSONFileStore(url: url))
            config.note = "before"
            let before = try Data(contentsOf: url)
            try FaultInjectionTests.remount(disk, readOnly: true)
            config.note = "during"
            #expect(config.note == "during")
            let reported = ReportedErrors.mentioning("'readonlydisk.ReadOnlyDiskConfig.note'")
            #expect(reported.count == 1)
            #expect(reported.allSatisfy { $0.description.contains(disk.path) })
            #expect(reported.allSatisfy { $0.description.contains("Read-only file system") })
            #expect(try Data(contentsOf: url) == before)

            try FaultInjectionTests.remount(disk, readOnly: false)
            config.count = 1
            let object = try jsonObject(at: url)
            #expect(object["readonlydisk.ReadOnlyDiskConfig.note"] as? String == "during")
            #expect(object["readonlydisk.ReadOnlyDiskConfig.count"] as? Int == 1)
        }
    }
}
