import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a directory source reads (the deployment-faults issue, item 12): the files that settings name, not what
/// else the directory holds, and at most ``SourceContents/readLimit`` bytes in all.
@Suite(.serialized) struct SourceReadingTests {
    init() { ReportedErrors.install() }

    @Test func onlyTheFilesASettingNamesAreReadAndEveryNameIsStillChecked() throws {
        let directory = TemporaryDirectory()
        let path = directory.url.path
        try "8080\n".write(toFile: path + "/SERVER_CONFIG_PORT", atomically: true, encoding: .utf8)
        try "9".write(toFile: path + "/SERVER_CONFIG_PROT", atomically: true, encoding: .utf8)
        // A file of another program beside the values: never read, so never reported as unusable.
        try Data([0xFF, 0xFE, 0x00, 0x01]).write(to: directory.file("cache.bin"))
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(path)]))
        #expect(config.port == 8080)
        #expect(ReportedErrors.mentioning(path + "/cache.bin").isEmpty, "a file that no setting names was read")
        do {
            try StorableConfig.checkOverrides(of: [config])
            Issue.record("the typo passed the check")
        } catch {
            let unknown = error.problems.compactMap { problem -> String? in
                if case .unknownSourceName(_, let name) = problem { return name }
                return nil
            }
            #expect(Set(unknown) == ["SERVER_CONFIG_PROT", "cache.bin"])
        }
    }

    /// A config of another class that reads the same directory gets the files its own settings name, though the
    /// directory was read (and is watched) for the first class's names.
    @Test func aDirectoryThatTwoClassesReadGivesEachItsOwnFiles() throws {
        let directory = TemporaryDirectory()
        let path = directory.url.path
        try "81".write(toFile: path + "/SERVER_CONFIG_PORT", atomically: true, encoding: .utf8)
        try "blue".write(toFile: path + "/COLOR_CONFIG_COLOR", atomically: true, encoding: .utf8)
        let sources = ConfigSources(belowStore: [.directory(path)])
        let server = ServerConfig(store: InMemoryStore(), sources: sources)
        let color = ColorConfig(store: InMemoryStore(), sources: sources)
        #expect(server.port == 81)
        #expect(color.color == "blue")
        try "green".write(toFile: path + "/COLOR_CONFIG_COLOR", atomically: true, encoding: .utf8)
        #expect(waitUntil { color.color == "green" }, "a change to the second class's file was not seen")
        withExtendedLifetime(server) {}
    }

    @Test func aSourcePastItsReadLimitKeepsWhatItTookAndNamesTheFileAndTheLimit() throws {
        let directory = TemporaryDirectory()
        let path = directory.url.path
        let large = SourceContents.readLimit / 8 * 5  // 10 MiB: two of them are past the limit
        try Data(repeating: UInt8(ascii: "a"), count: large).write(to: directory.file("SERVER_CONFIG_HOST"))
        try "first".write(toFile: path + "/SERVER_CONFIG_NAME", atomically: true, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(path)]))
        #expect(config.host.utf8.count == large && config.name == "first", "the files were not read")
        // Replaced whole by a rename: a reading never sees it half written.
        try Data(repeating: UInt8(ascii: "b"), count: large).write(
            to: directory.file("SERVER_CONFIG_NAME"), options: .atomic)
        StorableConfig.reloadSources()
        // Compared outside `#expect`, which would print 10 MiB of a value that is wrong.
        let nameKept = config.name == "first"
        let hostKept = config.host.utf8.count == large
        #expect(nameKept, "the value the file gave before was dropped or replaced past the limit")
        #expect(hostKept, "a file read before the limit was reached was dropped")
        let reported = ReportedErrors.mentioning(path + "/SERVER_CONFIG_NAME").map(\.description)
        #expect(
            reported.contains { $0.contains("16777216 bytes (16 MiB)") && $0.contains("kept") }, "\(reported)")
    }
}

final class ColorConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "other" }
    override class var sources: ConfigSources { ServerConfig.current.withLock { $0.sources } }
    @Setting var color = "red"

    convenience init(store: any ConfigStore, sources: ConfigSources) {
        // The sources are handed over in ServerConfig's, which other suites set at the same time: under its lock.
        ServerConfig.creation.lock()
        defer { ServerConfig.creation.unlock() }
        ServerConfig.current.withLock { $0 = (sources, .none) }
        self.init(store: store)
    }
}

/// The kubelet's swaps read while they happen (the deployment-faults issue, item 10, the reading half): a reading
/// is of one generation, and a file missing mid-swap never drops a value.
@Suite(.serialized, .timeLimit(.minutes(5))) struct KubeletSwapReadingTests {
    init() { ReportedErrors.install() }

    /// Swaps the volume with both files at `round`, round after round, until `stop` holds; returns the rounds.
    private static func swapping(_ volume: KubeletVolume, until stop: Locked<Bool>, names: [String]) -> Thread {
        let thread = Thread {
            var round = 11
            while !stop.withLock({ $0 }) {
                round = round == 79 ? 11 : round + 1
                try? volume.update(Dictionary(uniqueKeysWithValues: names.map { ($0, "\(round)\n") }))
            }
        }
        thread.start()
        return thread
    }

    @Test func aReadingTakesEveryFileFromOneGenerationWhileTheKubeletSwaps() throws {
        let directory = TemporaryDirectory()
        let names = ["SERVER_CONFIG_LIMIT", "SERVER_CONFIG_PORT"]
        let volume = try KubeletVolume(
            at: directory.file("config").path, files: Dictionary(uniqueKeysWithValues: names.map { ($0, "11\n") }))
        let stop = Locked(false)
        let swapper = Self.swapping(volume, until: stop, names: names)
        var mixed = 0
        var missing = 0
        let deadline = Date().addingTimeInterval(2)
        var readings = 0
        while Date() < deadline {
            let contents = SourceContents.read(.directory(volume.path))
            readings += 1
            let values = names.map { name -> String? in
                guard case .text(let text)? = contents.entries[name]?.value else { return nil }
                return text
            }
            if values.contains(nil) {
                missing += 1
            } else if values[0] != values[1] {
                mixed += 1
            }
        }
        stop.withLock { $0 = true }
        while !swapper.isFinished { usleep(1000) }
        #expect(mixed == 0, "\(mixed) of \(readings) readings mixed two generations")
        #expect(missing == 0, "\(missing) of \(readings) readings lost a file")
    }

    /// `reloadSources()` in a loop, as a SIGHUP handler calls it, while the kubelet swaps: a config never reads
    /// its defaults, and what the source holds when `reloadSources()` returns is of one generation.
    @Test func reloadingWhileTheKubeletSwapsNeverReadsADefaultOrAMixedReading() throws {
        let directory = TemporaryDirectory()
        let names = ["SERVER_CONFIG_LIMIT", "SERVER_CONFIG_PORT"]
        let volume = try KubeletVolume(
            at: directory.file("config").path, files: Dictionary(uniqueKeysWithValues: names.map { ($0, "11\n") }))
        let source = ConfigSource.directory(volume.path)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(aboveStore: [source]))
        let defaults = Locked(0)
        let token = config.observe { _ in
            if config.port == 80 || config.limit == 10 { defaults.withLock { $0 += 1 } }
        }
        defer { token.cancel() }
        let stop = Locked(false)
        let swapper = Self.swapping(volume, until: stop, names: names)
        var mixed = 0
        var reloads = 0
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            StorableConfig.reloadSources()
            reloads += 1
            if config.port == 80 || config.limit == 10 { defaults.withLock { $0 += 1 } }
            let contents = SourceRegistry.shared.snapshot(of: [source]).contents[source]
            let values = names.map { name -> String? in
                guard case .text(let text)? = contents?.entries[name]?.value else { return nil }
                return text
            }
            if values.contains(nil) || values[0] != values[1] { mixed += 1 }
        }
        stop.withLock { $0 = true }
        while !swapper.isFinished { usleep(1000) }
        #expect(defaults.withLock { $0 } == 0, "the config read its defaults mid-swap")
        #expect(mixed == 0, "\(mixed) of \(reloads) reloads left a reading of two generations, or without a file")
        StorableConfig.reloadSources()
        #expect(waitUntil { config.port == config.limit }, "the config ended on two generations")
    }

    /// A single JSON file behind `..data` (`config.json -> ..data/config.json`) never flaps to its defaults when
    /// it is read mid-swap.
    @Test func aSingleFileBehindTheDataLinkNeverFallsToItsDefaultMidSwap() throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(
            at: directory.file("config").path, files: ["config.json": #"{"srv.ServerConfig.port": 11}"#])
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(aboveStore: [.jsonFile(volume.path + "/config.json")]))
        let defaults = Locked(0)
        let token = config.$port.observe { port in
            if port == 80 { defaults.withLock { $0 += 1 } }
        }
        defer { token.cancel() }
        let stop = Locked(false)
        let swapper = Thread {
            var round = 11
            while !stop.withLock({ $0 }) {
                round = round == 79 ? 11 : round + 1
                try? volume.update(["config.json": #"{"srv.ServerConfig.port": \#(round)}"#])
            }
        }
        swapper.start()
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            StorableConfig.reloadSources()
            if config.port == 80 { defaults.withLock { $0 += 1 } }
        }
        stop.withLock { $0 = true }
        while !swapper.isFinished { usleep(1000) }
        #expect(defaults.withLock { $0 } == 0, "the setting fell to its default mid-swap")
    }
}
