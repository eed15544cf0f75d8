import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file watcher that live file sources rely on, against real files, renames, links and (on Linux) inotify:
/// every way operations change a deployed file or directory must call `onChange`. Calls may be spurious or
/// coalesced; a missed change is a failure. Each test runs with the kernel's watching and with polling.
@Suite(.timeLimit(.minutes(5)))
struct FileWatcherTests {
    /// Counts the calls of `onChange`.
    final class Calls: Sendable {
        private let count = Locked(0)

        func record() { count.withLock { $0 += 1 } }

        var value: Int { count.withLock { $0 } }

        /// Waits until no call has come for `quiet` seconds (late events of the step before), then returns the
        /// count.
        func settled(quiet: Double = 0.2) -> Int {
            var last = value
            while true {
                usleep(UInt32(quiet * 1_000_000))
                let now = value
                if now == last { return now }
                last = now
            }
        }

        /// Runs `step` once earlier calls have settled, and returns whether a call followed within `seconds`
        /// (generous: the machine is shared; the watcher itself reports within milliseconds, or an interval).
        func follow(seconds: Double = 20, _ step: () throws -> Void) rethrows -> Bool {
            let before = settled()
            try step()
            return waitUntil(seconds: seconds) { value > before }
        }
    }

    /// Throws the system's error if a POSIX call failed.
    static func check(_ result: Int32) throws {
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    static func watch(_ url: URL, polling: Bool, _ calls: Calls) throws -> FileWatcher {
        try FileWatcher(path: url.path, pollingInterval: 0.05, forcePolling: polling) { calls.record() }
    }

    /// Writes `text` into the existing file at `url` in place: same inode, truncated and rewritten.
    static func writeInPlace(_ url: URL, _ text: String) throws {
        let descriptor = open(url.path, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// Replaces the file at `url` as careful writers do: a temporary file beside it, renamed over it.
    static func replaceByRename(_ url: URL, _ text: String) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).tmp")
        try Data(text.utf8).write(to: temporary)
        try check(rename(temporary.path, url.path))
    }

    static func makeLink(_ url: URL, to text: String) throws {
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: text)
    }

    /// Points the link at `url` elsewhere atomically, as `ln -sfn` with a rename would.
    static func repoint(_ url: URL, to text: String) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).link")
        try makeLink(temporary, to: text)
        try check(rename(temporary.path, url.path))
    }

    /// A ConfigMap or Secret volume as the kubelet writes it: each key a symbolic link `name -> ..data/name`,
    /// `..data` a link to a timestamped directory holding the files.
    final class KubeletVolume {
        let directory: URL
        private var serial = 0
        private var current: String?

        init(at directory: URL, files: [String: String]) throws {
            self.directory = directory
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try update(files)
            for name in files.keys {
                try FileWatcherTests.makeLink(directory.appendingPathComponent(name), to: "..data/" + name)
            }
        }

        /// Updates the volume the kubelet's way: write a new timestamped directory, link `..data_tmp` to it,
        /// rename `..data_tmp` over `..data`, remove the old directory.
        func update(_ files: [String: String]) throws {
            serial += 1
            let name = "..2026_11_25_12_00_00.\(String(format: "%09d", serial))"
            let new = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: new, withIntermediateDirectories: false)
            for (key, text) in files { try Data(text.utf8).write(to: new.appendingPathComponent(key)) }
            let temporary = directory.appendingPathComponent("..data_tmp")
            try FileWatcherTests.makeLink(temporary, to: name)
            try FileWatcherTests.check(rename(temporary.path, directory.appendingPathComponent("..data").path))
            if let current { try FileManager.default.removeItem(at: directory.appendingPathComponent(current)) }
            current = name
        }
    }

    // MARK: A file path

    @Test(arguments: [false, true])
    func aFileWrittenInPlaceReplacedRemovedAndCreatedAgain(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let file = directory.file("settings.json")
        try Data("{}".utf8).write(to: file)
        let calls = Calls()
        let watcher = try Self.watch(file, polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try Self.writeInPlace(file, #"{"a": 1}"#) })
        #expect(try calls.follow { try Self.replaceByRename(file, #"{"a": 2}"#) })
        #expect(try calls.follow { try FileManager.default.removeItem(at: file) })
        #expect(try calls.follow { try Data(#"{"a": 3}"#.utf8).write(to: file) })
        // The watching goes on with the new file.
        #expect(try calls.follow { try Self.writeInPlace(file, #"{"a": 4}"#) })
    }

    /// The way the kubelet updates a ConfigMap mounted as a volume: `config.json -> ..data/config.json`, and
    /// `..data` renamed to lead to a new directory. `..data` is an entry on the way, so its rename is seen.
    @Test(arguments: [false, true])
    func aFileInAConfigMapVolumeSwappedByTheKubelet(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(at: directory.file("config"), files: ["config.json": "{}"])
        #expect(
            FileSystem.entriesOnTheWay(to: volume.directory.appendingPathComponent("config.json").path).entries
                .contains { $0.name == "..data" })
        let calls = Calls()
        let watcher = try Self.watch(volume.directory.appendingPathComponent("config.json"), polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try volume.update(["config.json": #"{"a": 1}"#]) })
        #expect(try calls.follow { try volume.update(["config.json": #"{"a": 2}"#]) })
    }

    /// A dotfile: `~/.config/app.json -> ~/dotfiles/app.json`.
    @Test(arguments: [false, true])
    func aLinkIntoAnotherDirectoryWhoseTargetIsReplacedOrWhichIsRepointed(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let config = directory.file("config")
        let dotfiles = directory.file("dotfiles")
        for folder in [config, dotfiles] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let target = dotfiles.appendingPathComponent("app.json")
        let other = dotfiles.appendingPathComponent("other.json")
        try Data("{}".utf8).write(to: target)
        try Data("{}".utf8).write(to: other)
        let link = config.appendingPathComponent("app.json")
        try Self.makeLink(link, to: target.path)
        let calls = Calls()
        let watcher = try Self.watch(link, polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try Self.replaceByRename(target, #"{"a": 1}"#) })
        #expect(try calls.follow { try Self.writeInPlace(target, #"{"a": 2}"#) })
        #expect(try calls.follow { try Self.repoint(link, to: "../dotfiles/other.json") })
        // Now the other file is the one watched.
        #expect(try calls.follow { try Self.writeInPlace(other, #"{"b": 1}"#) })
        #expect(try calls.follow { try FileManager.default.removeItem(at: link) })
        #expect(try calls.follow { try Self.makeLink(link, to: target.path) })
        #expect(try calls.follow { try Self.writeInPlace(target, #"{"a": 3}"#) })
    }

    // MARK: A directory path

    @Test(arguments: [false, true])
    func aFileInADirectoryAddedWrittenReplacedAndRemoved(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let settings = directory.file("settings")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        let file = settings.appendingPathComponent("SERVER_CONFIG_PORT")
        let calls = Calls()
        let watcher = try Self.watch(settings, polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try Data("80".utf8).write(to: file) })
        #expect(try calls.follow { try Self.writeInPlace(file, "8080") })
        #expect(try calls.follow { try Self.replaceByRename(file, "9090") })
        #expect(try calls.follow { try FileManager.default.removeItem(at: file) })
        // A hard link is whole when it is made, with no write after it.
        let elsewhere = directory.file("elsewhere")
        try Data("1".utf8).write(to: elsewhere)
        #expect(try calls.follow { try Self.check(link(elsewhere.path, file.path)) })
    }

    /// A ConfigMap or Secret volume as a directory of one file per setting.
    @Test(arguments: [false, true])
    func aConfigMapVolumeDirectorySwappedByTheKubelet(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(
            at: directory.file("config"), files: ["SERVER_CONFIG_PORT": "80", "SERVER_CONFIG_HOST": "a"])
        let calls = Calls()
        let watcher = try Self.watch(volume.directory, polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try volume.update(["SERVER_CONFIG_PORT": "8080", "SERVER_CONFIG_HOST": "a"]) })
        #expect(try calls.follow { try volume.update(["SERVER_CONFIG_PORT": "8080", "SERVER_CONFIG_HOST": "b"]) })
    }

    @Test(arguments: [false, true])
    func aDirectoryThatIsALinkRepointed(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let first = directory.file("first")
        let second = directory.file("second")
        for folder in [first, second] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("1".utf8).write(to: folder.appendingPathComponent("PORT"))
        }
        let settings = directory.file("settings")
        try Self.makeLink(settings, to: "first")
        let calls = Calls()
        let watcher = try Self.watch(settings, polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try Self.repoint(settings, to: "second") })
        // The directory now watched is the second one.
        #expect(try calls.follow { try Self.writeInPlace(second.appendingPathComponent("PORT"), "22") })
        #expect(try calls.follow { try Data("1".utf8).write(to: second.appendingPathComponent("HOST")) })
    }

    /// An optional source: the directory is not there at first (nor its parent), and appears later.
    @Test(arguments: [false, true])
    func aDirectoryThatAppearsLater(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let settings = directory.file("mount").appendingPathComponent("settings")
        let calls = Calls()
        let watcher = try Self.watch(settings, polling: polling, calls)
        defer { watcher.stop() }
        #expect(
            try calls.follow {
                try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
            })
        #expect(try calls.follow { try Data("80".utf8).write(to: settings.appendingPathComponent("PORT")) })
        #expect(try calls.follow { try Self.writeInPlace(settings.appendingPathComponent("PORT"), "8080") })
    }

    @Test(arguments: [false, true])
    func aDirectoryRemovedAndCreatedAgain(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let settings = directory.file("settings")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        try Data("80".utf8).write(to: settings.appendingPathComponent("PORT"))
        let calls = Calls()
        let watcher = try Self.watch(settings, polling: polling, calls)
        defer { watcher.stop() }
        #expect(try calls.follow { try FileManager.default.removeItem(at: settings) })
        #expect(
            try calls.follow {
                try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
            })
        #expect(try calls.follow { try Data("81".utf8).write(to: settings.appendingPathComponent("PORT")) })
        // A whole directory moved into place, as a deployment tool may do.
        let staged = directory.file("staged")
        try FileManager.default.createDirectory(at: staged, withIntermediateDirectories: true)
        try Data("82".utf8).write(to: staged.appendingPathComponent("PORT"))
        #expect(try calls.follow { try FileManager.default.removeItem(at: settings) })
        #expect(try calls.follow { try Self.check(rename(staged.path, settings.path)) })
        #expect(try calls.follow { try Self.writeInPlace(settings.appendingPathComponent("PORT"), "83") })
    }

    // MARK: Stopping

    @Test(arguments: [false, true])
    func noCallAfterStopReturns(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let file = directory.file("settings.json")
        let calls = Calls()
        let watcher = try Self.watch(file, polling: polling, calls)
        #expect(try calls.follow { try Data("1".utf8).write(to: file) })
        watcher.stop()
        let stopped = calls.value
        try Self.change(file, polling: polling) { try Self.replaceByRename(file, "2") }
        #expect(calls.value == stopped)
    }

    @Test(arguments: [false, true])
    func stopFromOnChangeEndsTheWatching(polling: Bool) throws {
        let directory = TemporaryDirectory()
        let file = directory.file("settings.json")
        let calls = Calls()
        let holder = Locked<FileWatcher?>(nil)
        let watcher = try FileWatcher(path: file.path, pollingInterval: 0.05, forcePolling: polling) {
            calls.record()
            holder.withLock { $0 }?.stop()
        }
        holder.withLock { $0 = watcher }
        #expect(try calls.follow { try Data("1".utf8).write(to: file) })
        try Self.change(file, polling: polling) { try Self.replaceByRename(file, "2") }
        #expect(calls.value == 1)
        watcher.stop()  // from another thread after the watching ended: returns at once
    }

    /// Makes `change`, which a stopped watcher must not report, then a later change, each followed by a watcher of
    /// the same file that runs meanwhile: once that one has reported the later change, a watcher that was still
    /// running would have reported the first. (A stopped watcher has no later call of its own to wait for.)
    static func change(_ file: URL, polling: Bool, whileAnotherWatches step: () throws -> Void) throws {
        let witness = Calls()
        let other = try watch(file, polling: polling, witness)
        defer { other.stop() }
        #expect(try witness.follow(step), "the change was not seen")
        #expect(try witness.follow { try replaceByRename(file, "later") }, "the later change was not seen")
    }

    /// Every watcher's thread and descriptors are gone once `stop()` returns (allowing for the
    /// other tests of this process, which open files meanwhile: a leak would be hundreds).
    @Test func startingAndStoppingManyWatchersLeavesNoDescriptorOrThread() throws {
        func count(_ folder: String) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: folder).count) ?? 0
        }
        let directory = TemporaryDirectory()
        let settings = directory.file("settings")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        try Data("1".utf8).write(to: settings.appendingPathComponent("PORT"))
        let descriptors = count("/proc/self/fd")
        let threads = count("/proc/self/task")
        for index in 0..<200 {
            let watcher = try FileWatcher(path: settings.path, pollingInterval: 0.05, forcePolling: index % 4 == 3) {}
            watcher.stop()
        }
        #if os(Linux)
            _ = waitUntil { count("/proc/self/fd") <= descriptors + 20 && count("/proc/self/task") <= threads + 8 }
            #expect(count("/proc/self/fd") <= descriptors + 20)
            #expect(count("/proc/self/task") <= threads + 8)
        #endif
    }
}

/// The process's one inotify instance (the deployment-faults issue, item 12): a user has 128 by default, shared by
/// all of the user's processes, so a process never takes more than one, and running out is reported.
@Suite(.serialized) struct SharedInotifyTests {
    /// The inotify instances this process holds.
    static func inotifyInstances() -> Int {
        let folder = "/proc/self/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)) == "anon_inode:inotify"
        }.count
    }

    static let limitFile = "/proc/sys/fs/inotify/max_user_instances"

    /// Whether this process may lower the user's inotify instances for a moment (root, with /proc/sys writable).
    static let canLowerTheLimit = getuid() == 0 && access(limitFile, W_OK) == 0

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs Linux's inotify"))
    func everyWatcherOfTheProcessSharesOneInotifyInstance() throws {
        let directory = TemporaryDirectory()
        let calls = FileWatcherTests.Calls()
        var watchers: [FileWatcher] = []
        for index in 0..<20 {
            let folder = directory.file("d\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            watchers.append(try FileWatcherTests.watch(folder, polling: false, calls))
        }
        defer { for watcher in watchers { watcher.stop() } }
        #expect(Self.inotifyInstances() == 1)
        // Each still sees its own directory's changes.
        for index in [0, 19] {
            #expect(
                try calls.follow {
                    try Data("x".utf8).write(to: directory.file("d\(index)").appendingPathComponent("f"))
                })
        }
    }

    /// With no inotify instance left to the user (the limit lowered to 0 for a moment, in a child process), sources
    /// and stores are polled, and that is reported once, in plain words, naming the limit; changes are still seen.
    @Test(.enabled(if: canLowerTheLimit, "needs root and a writable /proc/sys/fs/inotify"))
    func runningOutOfInotifyInstancesIsReportedOnceAndChangesAreStillSeen() async throws {
        let original = try String(contentsOfFile: Self.limitFile, encoding: .utf8)
        // The child restores it as soon as its watchers are made; this is in case it dies before.
        defer { try? original.write(toFile: Self.limitFile, atomically: false, encoding: .utf8) }
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StorableConfig.errorHandler = { error in
                FileHandle.standardError.write(Data("reported: \(error)\n".utf8))
            }
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("inotify-\(getpid())")
            let first = base.appendingPathComponent("first").path
            let second = base.appendingPathComponent("second").path
            let store = base.appendingPathComponent("settings.json")
            ExitTestChild.attempt(5, "creating \(base.path)") {
                for path in [first, second] {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                    try "1".write(toFile: path + "/SERVER_CONFIG_PORT", atomically: true, encoding: .utf8)
                }
            }
            defer { try? FileManager.default.removeItem(at: base) }
            let limitFile = "/proc/sys/fs/inotify/max_user_instances"
            let original = ExitTestChild.attempt(6, "reading \(limitFile)") {
                try String(contentsOfFile: limitFile, encoding: .utf8)
            }
            ExitTestChild.attempt(7, "lowering \(limitFile)") {
                try "0".write(toFile: limitFile, atomically: false, encoding: .utf8)
            }
            let config = ServerConfig(
                store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(first), .directory(second)]))
            let file = ExitTestChild.attempt(8, "opening \(store.path)") { try JSONFileStore(url: store) }
            ExitTestChild.attempt(9, "watching \(store.path)") { try file.startWatching() }
            ExitTestChild.attempt(10, "restoring \(limitFile)") {
                try original.write(toFile: limitFile, atomically: false, encoding: .utf8)
            }
            guard config.port == 1 else { ExitTestChild.fail(11, "the source was not read") }
            try? "2".write(toFile: first + "/SERVER_CONFIG_PORT", atomically: true, encoding: .utf8)
            let deadline = Date().addingTimeInterval(20)
            while config.port != 2 {
                guard Date() < deadline else { ExitTestChild.fail(12, "the change was not seen by polling") }
                usleep(10_000)
            }
            exit(0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.components(separatedBy: "fs.inotify.max_user_instances").count == 2, "\(message)")
        #expect(message.contains("every 0.25 s"), "\(message)")
    }
}
