import Foundation
import Testing

@testable import StorableConfig
@testable import StorableConfigSecrets

// Review of the simplifications merged in f1ec065..b6e56b0 (#30). A test named `held…` documents a check that
// held; the others showed a regression, failed on main as merged (see the comment in each), and pass since the
// fixes that follow it.

/// Runs a test's hook on the reports whose description contains the hook's text, before they reach the handler
/// the tests share. Installed once, on top of `ReportedErrors`, and never removed.
enum Review30Reports {
    static let hooks = Locked<[String: @Sendable (StorableConfigError) -> Void]>([:])
    private static let installed: Bool = {
        ReportedErrors.install()
        let previous = StorableConfig.errorHandler
        StorableConfig.errorHandler = { error in
            let description = error.description
            let matching = hooks.withLock { hooks in hooks.filter { description.contains($0.key) }.map(\.value) }
            for hook in matching { hook(error) }
            previous(error)
        }
        return true
    }()

    static func install() { _ = installed }
}

/// A config whose file sources are the same for every instance made while `sources` holds them: two threads
/// may create instances at once (ServerConfig serialises its creation).
final class Review30SourceConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "review30" }
    override class var sources: ConfigSources { Review30SourceConfig.current.withLock { $0 } }
    @Setting var port = 0

    static let current = Locked(ConfigSources.none)
}

final class Review30HubConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "review30" }
    @Setting var port = 0
    @Setting var name = ""
}

@Suite(.serialized) struct Review30Tests {
    init() { Review30Reports.install() }

    // MARK: JSONText.isNumber (53db1ba)

    /// 53db1ba dropped `parser.position == 0` from `JSONText.isNumber`, but `Parser(bytes:)` skips a leading UTF-8
    /// byte order mark, so `.number("\u{FEFF}1")` now counts as a JSON number and is written raw. StoredValue's
    /// documentation says "text that is not a JSON number is written as a string". What the user sees: after
    /// `store.setValue(.number("\u{FEFF}1"), forKey:)` the settings file is not valid JSON any more, so the next
    /// process that opens it quarantines the whole file (every other setting in it is lost to that program).
    @Test func numberTextStartingWithAByteOrderMarkIsWrittenAsAStringNotRaw() throws {
        let text = JSONText.string(from: .dictionary(["k": .number("\u{FEFF}1")]), pretty: false)
        #expect((try? JSONText.parseObject(Data(text.utf8))) != nil, "written as \(text.debugDescription)")

        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        try store.setValue(.int(7), forKey: "review30.other")
        try store.setValue(.number("\u{FEFF}1"), forKey: "review30.odd")
        let data = try Data(contentsOf: url)
        #expect(
            (try? JSONSerialization.jsonObject(with: data)) != nil,
            "the settings file is no longer JSON: \(String(decoding: data, as: UTF8.self).debugDescription)")
    }

    // MARK: SourceRegistry.refresh reports outside the readings lock (c98037d)

    /// c98037d moved the reports of a reading out of the `readings` lock. A reading with two problems that is
    /// slow to report them (the error handler takes time: it logs, or posts to a server) now reports its second
    /// problem after a newer reading of the fixed files was installed. What the user sees: an error saying a file
    /// of the source is unusable, delivered after `reloadSources()` returned with that file fixed, and never
    /// withdrawn. Before, the newer reading waited for the older one's reports.
    @Test func aProblemOfAnOlderReadingIsNotReportedAfterANewerReadingOfTheFixedFiles() throws {
        let base = TemporaryDirectory()
        let root = base.url.path
        func makeDirectory(_ name: String, port: Int, broken: Bool) throws {
            let directory = root + "/" + name
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            try "\(port)".write(toFile: directory + "/SERVER_CONFIG_PORT", atomically: true, encoding: .utf8)
            if broken {
                // Two files that are not UTF-8 text: two problems in one reading.
                try Data([0x66, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: directory + "/SERVER_CONFIG_HOST"))
                try Data([0x66, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: directory + "/SERVER_CONFIG_NAME"))
            } else {
                try "h".write(toFile: directory + "/SERVER_CONFIG_HOST", atomically: true, encoding: .utf8)
                try "n".write(toFile: directory + "/SERVER_CONFIG_NAME", atomically: true, encoding: .utf8)
            }
        }
        // The source is a link swapped at once to a whole directory, so that one reading sees both problems.
        func point(to name: String) throws {
            #expect(symlink(name, root + "/next") == 0)
            #expect(rename(root + "/next", root + "/source") == 0)
        }
        try makeDirectory("a", port: 1, broken: false)
        #expect(symlink("a", root + "/source") == 0)
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(root + "/source")]))
        #expect(config.port == 1)

        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let blockedOnce = Locked(false)
        let fixedReadingInstalled = Locked(false)
        let late = Locked<[String]>([])
        Review30Reports.hooks.withLock {
            $0[root] = { error in
                if fixedReadingInstalled.withLock({ $0 }) { late.withLock { $0.append(error.description) } }
                let first = blockedOnce.withLock { blocked in
                    defer { blocked = true }
                    return !blocked
                }
                // A slow handler: the first report of the broken reading takes until the test lets it go.
                if first {
                    entered.signal()
                    _ = release.wait(timeout: .now() + 30)
                }
            }
        }
        defer {
            Review30Reports.hooks.withLock { $0[root] = nil }
            release.signal()
        }
        try makeDirectory("b", port: 1, broken: true)
        try point(to: "b")
        try #require(entered.wait(timeout: .now() + 20) == .success, "the broken reading reported nothing")
        try makeDirectory("c", port: 1, broken: false)
        try point(to: "c")
        // Read at once; before c98037d this waited for the older reading's reports (the test lets them go after
        // five seconds).
        _ = finishes(within: 5) {
            StorableConfig.reloadSources()
            fixedReadingInstalled.withLock { $0 = true }
        }
        release.signal()
        // A later change by the same path (the watcher's thread, which made the older reading): once the config
        // holds it, that thread has made every report of the older reading.
        try makeDirectory("d", port: 2, broken: false)
        try point(to: "d")
        #expect(waitUntil { config.port == 2 && fixedReadingInstalled.withLock { $0 } })
        #expect(
            late.withLock { $0 }.isEmpty,
            "reported after reloadSources() returned with every file of the source fixed")
    }

    // MARK: SourceRegistry.subscribe: subscribe, watch, then read (d1f80c8, 49eba17)

    /// d1f80c8 watches a new source before its first reading, but only the config that made the registry's entry
    /// starts the watcher; a second config subscribing at the same moment finds the entry unread and reads the
    /// file itself. When its reading lands before the first config's watcher has begun, and the file changes in
    /// between, the first config skips its reading (the source was read) and its watcher never hears of the
    /// change. What the user sees: two configs created at once on a new file source keep the old value for ever
    /// (until the file changes again), where before the source was read again once its watcher had started.
    /// The race is timing-dependent: this tries many times and stops at the first lost change.
    @Test func twoConfigsSubscribingAtOnceToANewFileSourceMissNoChange() throws {
        var lost: String?
        // The race is narrow: on main before the fix it was lost at round 1 to 217 of five runs. ThreadSanitizer
        // runs every round many times slower, and the plain run covers the rounds.
        for round in 0..<(isRunningUnderThreadSanitizer ? 40 : 300) where lost == nil {
            let directory = TemporaryDirectory()
            // A long chain of links through directories of their own: the watcher starts slowly (each directory
            // on the way is watched), the reading of the file is quick.
            var target = directory.file("settings.json").path
            try #"{"review30.Review30SourceConfig.port": 1}"#.write(
                toFile: target, atomically: true, encoding: .utf8)
            let real = target
            for hop in 0..<30 {
                let hopDirectory = directory.url.path + "/h\(hop)"
                try FileManager.default.createDirectory(atPath: hopDirectory, withIntermediateDirectories: false)
                let link = hopDirectory + "/link"
                #expect(symlink(target, link) == 0)
                target = link
            }
            Review30SourceConfig.current.withLock { $0 = ConfigSources(aboveStore: [.jsonFile(target)]) }
            let configs = Locked<[Review30SourceConfig]>([])
            let start = DispatchSemaphore(value: 0)
            let made = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                Thread.detachNewThread {
                    start.wait()
                    let config = Review30SourceConfig(store: InMemoryStore())
                    configs.withLock { $0.append(config) }
                    made.signal()
                }
            }
            let delay = UInt32.random(in: 0...1_500)
            start.signal()
            start.signal()
            usleep(delay)
            try #"{"review30.Review30SourceConfig.port": 2}"#.write(toFile: real, atomically: true, encoding: .utf8)
            made.wait()
            made.wait()
            if !waitUntil(seconds: 5, { configs.withLock { $0.allSatisfy { $0.port == 2 } } }) {
                lost = "round \(round), write after \(delay) µs: ports \(configs.withLock { $0.map(\.port) })"
            }
            Review30SourceConfig.current.withLock { $0 = .none }
        }
        #expect(lost == nil, "a change written while two configs subscribed was never read: \(lost ?? "")")
    }

    // MARK: Checks that held

    /// FileWatcher (0c3f053): a watcher's thread waits on one semaphore. Many polling watchers started and stopped
    /// at once, waiting or not, and stopped from their own `onChange`, leave no thread and no descriptor behind.
    @Test func heldManyPollingWatchersStartedAndStoppedLeaveNoThreadsOrDescriptors() throws {
        func threads() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }
        func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        let directory = TemporaryDirectory()
        let path = directory.file("watched.json").path
        try "{}".write(toFile: path, atomically: true, encoding: .utf8)
        let (threadsBefore, descriptorsBefore) = (threads(), descriptors())
        let count = 64
        let stoppers = Locked<[FileWatcher]>([])
        var watchers: [FileWatcher] = []
        for index in 0..<count {
            let stopsItself = index % 4 == 0
            let holder = Locked<FileWatcher?>(nil)
            let watcher = try FileWatcher(path: path, pollingInterval: 0.01, forcePolling: true) {
                if stopsItself { holder.withLock { $0 }?.stop() }
            }
            holder.withLock { $0 = watcher }
            if stopsItself { stoppers.withLock { $0.append(watcher) } } else { watchers.append(watcher) }
        }
        #expect(threads() >= threadsBefore + count / 2, "the polling watchers have threads of their own")
        // Those that stop themselves do so at the next change.
        try #"{"a": 1}"#.write(toFile: path, atomically: true, encoding: .utf8)
        let all = watchers
        let stopped = finishes {
            DispatchQueue.concurrentPerform(iterations: all.count) { index in
                all[index].stop(waiting: index % 2 == 0)
            }
        }
        #expect(stopped, "stopping the watchers at once hung")
        #expect(
            waitUntil { threads() <= threadsBefore + 4 },
            "threads: \(threadsBefore) before, \(threads()) after stopping \(count) watchers")
        #expect(waitUntil { descriptors() <= descriptorsBefore + 4 })
        for watcher in stoppers.withLock({ $0 }) { watcher.stop() }
    }

    /// SourceRegistry keeps a source's watcher as the closure that stops it, installed after the watcher started
    /// (49eba17): configs created two at a time on new sources and released leave no inotify watch behind.
    @Test(
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fdinfo"), "watches are read from Linux's /proc")
    )
    func heldConfigsOnNewSourcesCreatedInPairsAndReleasedLeaveNoWatches() throws {
        /// The inotify watches this process holds, from /proc/self/fdinfo.
        func watches() -> Int {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fdinfo")) ?? []
            return descriptors.reduce(0) { count, descriptor in
                let info = (try? String(contentsOfFile: "/proc/self/fdinfo/" + descriptor, encoding: .utf8)) ?? ""
                return count + info.components(separatedBy: "inotify wd:").count - 1
            }
        }
        /// The inodes that this process's inotify watches are on.
        func watchedInodes() -> Set<UInt64> {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fdinfo")) ?? []
            var inodes: Set<UInt64> = []
            for descriptor in descriptors {
                let info = (try? String(contentsOfFile: "/proc/self/fdinfo/" + descriptor, encoding: .utf8)) ?? ""
                for line in info.split(separator: "\n") where line.hasPrefix("inotify wd:") {
                    guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("ino:") }),
                        let inode = UInt64(field.dropFirst(4), radix: 16)
                    else { continue }
                    inodes.insert(inode)
                }
            }
            return inodes
        }
        func inode(_ path: String) -> UInt64 {
            var info = stat()
            return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
        }
        let before = watches()
        for _ in 0..<40 {
            let directory = TemporaryDirectory()
            let path = directory.file("settings.json").path
            try #"{"review30.Review30SourceConfig.port": 1}"#.write(toFile: path, atomically: true, encoding: .utf8)
            Review30SourceConfig.current.withLock { $0 = ConfigSources(aboveStore: [.jsonFile(path)]) }
            let made = Locked<[Review30SourceConfig]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let config = Review30SourceConfig(store: InMemoryStore())
                made.withLock { $0.append(config) }
            }
            #expect(made.withLock { $0.map(\.port) } == [1, 1])
            // Its own file or directory, not a count: other tests running meanwhile add and remove watches.
            #expect(
                !watchedInodes().isDisjoint(with: [inode(path), inode(directory.url.path)]),
                "the source is watched while its configs live")
            made.withLock { $0 = [] }
            Review30SourceConfig.current.withLock { $0 = .none }
        }
        #expect(waitUntil { watches() <= before + 8 }, "inotify watches: \(before) before, \(watches()) after")
    }

    /// OverrideNames.forEachOption (87b2e69): one walker for reading and for removing launch arguments, checked
    /// against the two walkers it replaced (copied here from f1ec065) on the forms the docs give.
    @Test func heldTheOneArgumentWalkerReadsAndRemovesAsTheTwoOldOnesDid() {
        let option = "--srv-server-config-port"
        let flag = "--srv-server-config-verbose"
        let lists: [[String]] = [
            ["prog", option, "8080"], ["prog", "\(option)=8080"], ["prog", option], ["prog", option, "--", "9"],
            ["prog", "--", option, "1"], ["prog", option, "1", option, "2"], ["prog", "\(option)=", "x"],
            ["prog", "\(option)==5"], ["prog", "\(option)=\u{301}5"], ["prog", option, "--other", "3"],
            ["prog", "--other", option, "4"], ["prog", flag], ["prog", flag, "false"], ["prog", flag, "yes"],
            ["prog", "\(flag)=false", "x"], ["prog", flag, "--"], [option, "1"], ["prog", "-\(option)", "1"],
            ["prog", "\(option)x", "1"], ["prog", "\(option)x=1"], ["prog", option, "-5"], ["prog", flag, option, "6"],
        ]
        for arguments in lists {
            #expect(
                OverrideNames.text(for: option, in: arguments, isBool: false)
                    == Self.oldText(for: option, in: arguments, isBool: false), "\(arguments)")
            #expect(
                OverrideNames.text(for: flag, in: arguments, isBool: true)
                    == Self.oldText(for: flag, in: arguments, isBool: true), "\(arguments)")
            let names = [option: false, flag: true]
            var kept: [String] = []
            var next = 0
            OverrideNames.forEachOption(in: arguments, from: 0, isBool: { names[$0] }) { taken, _ in
                kept += arguments[next..<taken.lowerBound]
                next = taken.upperBound
            }
            kept += arguments[next...]
            #expect(kept == Self.oldRemoving(from: arguments, names: names), "\(arguments)")
        }
    }

    /// `OverrideNames.text(for:in:isBool:)` as it was at f1ec065.
    private static func oldText(for option: String, in arguments: [String], isBool: Bool) -> String?? {
        var found: String??
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            if argument == option {
                if OverrideNames.takesNext(arguments, at: index, isBool: isBool) {
                    found = .some(arguments[index])
                    index += 1
                } else {
                    found = isBool ? .some("true") : .some(nil)
                }
            } else if argument.utf8.starts(with: (option + "=").utf8) {
                found = .some(String(decoding: argument.utf8.dropFirst(option.utf8.count + 1), as: UTF8.self))
            }
        }
        return found
    }

    /// The walk of `ConfigOverrides.removingSettingArguments(from:of:)` as it was at f1ec065.
    private static func oldRemoving(from arguments: [String], names: [String: Bool]) -> [String] {
        var kept: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                kept += arguments[(index - 1)...]
                break
            }
            guard argument.hasPrefix("--") else {
                kept.append(argument)
                continue
            }
            let option = argument.utf8.firstIndex(of: UInt8(ascii: "=")).map { String(argument[..<$0]) } ?? argument
            guard let isBool = names[option] else {
                kept.append(argument)
                continue
            }
            if option == argument, OverrideNames.takesNext(arguments, at: index, isBool: isBool) {
                index += 1
            }
        }
        return kept
    }

    /// StoreHub.detach (f84f395) keeps a class's group when its last config goes: configs of the class that come
    /// and go still hear exactly the writes of their keys, and a config of another class with one of those keys
    /// (explicitly the same store key) is not mixed up with them.
    @Test func heldConfigsOfAClassThatComeAndGoStillHearTheirKeysWrites() {
        let store = InMemoryStore()
        for _ in 0..<3 {
            // The class's last config goes each round.
            let writer = Review30HubConfig(store: store)
            writer.port += 1
        }
        #expect(Review30HubConfig(store: store).port == 3)
        let first = Review30HubConfig(store: store)
        let second = Review30HubConfig(store: store)
        let heard = Locked<[String]>([])
        let token = second.observe { change in heard.withLock { $0.append(change.key) } }
        defer { token.cancel() }
        first.port = 10
        first.name = "x"
        #expect(second.port == 10)
        #expect(second.name == "x")
        #expect(waitUntil { heard.withLock { $0 }.count == 2 })
        #expect(Set(heard.withLock { $0 }) == [first.$port.key, first.$name.key])
        // A write of a key no config of the class reads reaches none of them.
        store.setValue(.int(5), forKey: "review30.Review30HubConfig.unknown")
        first.port = 11
        #expect(waitUntil { heard.withLock { $0 }.count == 3 })
        #expect(heard.withLock { $0 }.last == first.$port.key)
    }

    /// JSONFile's locked paths share `withLockAnnouncing` (bf6a220, e45d6d6): the watcher's re-read now tells the
    /// configs inside `OutsideLocks.deferring`. An observer that hears of another process's change and writes a
    /// setting and reloads the sources there neither hangs nor loses its write.
    @Test func heldAnObserverOfAnOutsideChangeMayWriteAndReloadInsideIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        try store.startWatching()
        let config = Review30HubConfig(store: store)
        let token = config.$port.observe { port in
            StorableConfig.reloadSources()
            config.name = "seen \(port)"
        }
        defer { token.cancel() }
        // Another process replaces the file.
        try #"{"review30.Review30HubConfig.port": 5}"#.write(to: url, atomically: true, encoding: .utf8)
        #expect(waitUntil { config.port == 5 && config.name == "seen 5" })
        #expect(
            waitUntil {
                (try? String(contentsOf: url, encoding: .utf8))?.contains("seen 5") == true
            }, "the observer's write never reached the file")
        config.port = 6
        #expect(waitUntil { config.name == "seen 6" })
    }

    /// UserDefaultsStore.setValue/removeValue go through setValues (acd5e4c): a single write of a secret still goes
    /// to the secret store only, and a value over the size limit is still refused with a message naming its key.
    @Test func heldUserDefaultsSingleWritesRouteSecretsAndRefuseOversizedValues() throws {
        let suite = "Review30Tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        let secrets = FailingSecretStore()
        let store = SecretRoutingStore(wrapping: UserDefaultsStore(defaults, saving: .onEveryWrite), secrets: secrets)
        let config = KeptSecretConfig(store: store)
        let key = config.$pin.key
        try store.setValue(.int(42), forKey: key)
        #expect(defaults.object(forKey: key) == nil)
        #expect(secrets.bytes(forKey: key) == Data("42".utf8))
        try store.removeValue(forKey: key)
        #expect(secrets.bytes(forKey: key) == nil)
        #expect(defaults.object(forKey: key) == nil)
        secrets.isLocked = true
        #expect(throws: (any Error).self) { try store.setValue(.int(1), forKey: key) }
        secrets.isLocked = false

        let limited = UserDefaultsStore(defaults, saving: .onEveryWrite, valueSizeLimit: 16)
        do {
            try limited.setValue(.string(String(repeating: "x", count: 64)), forKey: "review30.big")
            Issue.record("an oversized value was written")
        } catch let error as StorableConfigError {
            #expect("\(error)".contains("review30.big"))
            #expect("\(error)".contains("was not handed to UserDefaults"))
        }
        #expect(defaults.object(forKey: "review30.big") == nil)
        try limited.setValue(.string("small"), forKey: "review30.small")
        #expect(defaults.string(forKey: "review30.small") == "small")
    }
}
