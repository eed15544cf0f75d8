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
            try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let url = directory.appendingPathComponent("settings.json")
            let config = FaultConfig(store: try! JSONFileStore(url: url))
            config.note = "small"
            let before = try! Data(contentsOf: url)
            var limit = rlimit(rlim_cur: 4096, rlim_max: rlim_t.max)
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
            let big = String(repeating: "x", count: 10_000)
            config.note = big
            guard config.note == big, (try? Data(contentsOf: url)) == before else { exit(1) }
            let leftovers = try! FileManager.default.contentsOfDirectory(atPath: directory.path)
            guard !leftovers.contains(where: { $0.hasSuffix(".tmp") }) else { exit(2) }
            exit(0)
        }
        try? FileManager.default.removeItem(at: Self.sharedDirectory("full", parent: getpid()))
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("fault.FaultConfig.note"))
        #expect(message.contains("settings.json"))
        #expect(message.contains("File too large"))
    }

    @Test func anUnwritableDirectoryFailsTheWriteNamingThePathAndLosesNothing() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let directory = FaultInjectionTests.sharedDirectory("unwritable", parent: getppid())
            let locked = directory.appendingPathComponent("locked")
            try! FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
            chmod(locked.path, 0o555)
            // Root ignores permissions; become nobody to be refused like any user.
            if getuid() == 0 {
                chmod(directory.path, 0o755)
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(3) }
            }
            let url = locked.appendingPathComponent("settings.json")
            let config = FaultConfig(store: try! JSONFileStore(url: url))
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
}
