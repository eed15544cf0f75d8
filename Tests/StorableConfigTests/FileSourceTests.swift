import Foundation
import Testing

@testable import StorableConfig

/// Read-only file sources: a directory of files (a ConfigMap), a `.env` file and a JSON file, above or below the
/// store, in their declared order; bad input reported and skipped; nothing written; live.
@Suite(.serialized) struct FileSourceTests {
    init() { ReportedErrors.install() }

    @Test func aDirectoryBelowTheStoreReplacesTheDefaultAndAStoredValueWinsUntilReset() throws {
        let directory = TemporaryDirectory()
        try "9090\n".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        try "db.internal\r\n".write(to: directory.file("SERVER_CONFIG_HOST"), atomically: true, encoding: .utf8)
        let store = InMemoryStore()
        let config = ServerConfig(store: store, sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        #expect(config.port == 9090)
        #expect(config.host == "db.internal")
        #expect(config.$port.layer == .file)
        #expect(config.$port.origin == "file \(directory.url.path)/SERVER_CONFIG_PORT")
        #expect(config.$port.isSet == false)
        #expect(store.value(forKey: config.$port.key) == nil, "a source is never written to the store")
        config.port = 7070
        #expect(config.port == 7070)
        #expect(config.$port.layer == .stored)
        #expect(
            config.$port.hiddenSourceValue
                == HiddenSourceValue(
                    valueText: "9090", origin: "file \(directory.url.path)/SERVER_CONFIG_PORT"))
        config.$port.reset()
        #expect(config.port == 9090, "reset brings the source's value back")
        #expect(config.$port.hiddenSourceValue == nil)
        // A later config reads the same.
        let later = ServerConfig(store: store, sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        #expect(later.port == 9090)
    }

    @Test func aDirectoryAboveTheStoreWinsOverStoredValuesAndAnAssignmentIsStoredAndReported() throws {
        let directory = TemporaryDirectory()
        try "8443".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        let store = InMemoryStore(["srv.ServerConfig.port": .int(81)])
        let config = ServerConfig(store: store, sources: ConfigSources(aboveStore: [.directory(directory.url.path)]))
        #expect(config.port == 8443)
        #expect(config.$port.isOverridden)
        #expect(config.$port.layer == .file)
        config.port = 82
        #expect(config.port == 8443, "the source keeps being read")
        #expect(store.value(forKey: "srv.ServerConfig.port") == .int(82), "the assignment is stored")
        #expect(
            !ReportedErrors.mentioning("srv.ServerConfig.port").filter {
                if case .assignedWhileOverridden = $0 { return true }
                return false
            }.isEmpty)
    }

    @Test func theOrderIsArgumentsEnvironmentSourcesAboveStoreSourcesBelowDefault() throws {
        let high = TemporaryDirectory()
        let low = TemporaryDirectory()
        let below = TemporaryDirectory()
        try "1".write(to: high.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        try "2".write(to: low.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        try "low-host".write(to: low.file("SERVER_CONFIG_HOST"), atomically: true, encoding: .utf8)
        try "3".write(to: below.file("SERVER_CONFIG_LIMIT"), atomically: true, encoding: .utf8)
        try "below-host".write(to: below.file("SERVER_CONFIG_HOST"), atomically: true, encoding: .utf8)
        try "below-name".write(to: below.file("SERVER_CONFIG_NAME"), atomically: true, encoding: .utf8)
        let store = InMemoryStore(["srv.ServerConfig.name": .string("stored-name")])
        let config = ServerConfig(
            store: store,
            sources: ConfigSources(
                aboveStore: [.directory(high.url.path), .directory(low.url.path)],
                belowStore: [.directory(below.url.path)]),
            overrides: ConfigOverrides(environment: ["SERVER_CONFIG_LIMIT": "4"], arguments: nil))
        #expect(config.port == 1, "the first source above the store wins")
        #expect(config.host == "low-host", "the next one above the store wins over one below it")
        #expect(config.limit == 4, "an environment variable wins over every file")
        #expect(config.$limit.layer == .environment)
        #expect(config.name == "stored-name", "a stored value wins over a source below the store")
    }

    @Test func aFileNamedByTheKeyWinsOverOneNamedByTheVariableAndKubeletEntriesAreIgnored() throws {
        let directory = TemporaryDirectory()
        try "1".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        try "2".write(to: directory.file("srv.ServerConfig.port"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: directory.file("..2026_11_25"), withIntermediateDirectories: true)
        try "3".write(to: directory.file("..2026_11_25/SERVER_CONFIG_LIMIT"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("..data").path, withDestinationPath: "..2026_11_25")
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        #expect(config.port == 2)
        #expect(config.limit == 10, "entries starting with .. are the kubelet's")
        #expect(throws: Never.self) { try StorableConfig.checkOverrides(of: [config]) }
    }

    @Test func aJSONSettingsFileAndASettingsDocumentAreRead() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("config.json")
        try #"{"srv.ServerConfig.port": 5000, "srv.ServerConfig.tags": ["a", "b"]}"#.write(
            to: file, atomically: true, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.jsonFile(file.path)]))
        #expect(config.port == 5000)
        #expect(config.tags == ["a", "b"])
        #expect(config.$port.origin == "JSON file \(file.path)")

        let exported = directory.file("exported.json")
        let source = ServerConfig(store: InMemoryStore(), sources: .none)
        source.port = 6000
        try ConfigDocument(exporting: [source]).jsonText().write(to: exported, atomically: true, encoding: .utf8)
        let fromDocument = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.file(atPath: exported.path)]))
        #expect(fromDocument.port == 6000)
        #expect(fromDocument.$port.layer == .file)
    }

    @Test func aValueThatDoesNotFitIsReportedNamingFileAndKeyAndTheNextSourceIsRead() throws {
        let first = TemporaryDirectory()
        let second = TemporaryDirectory()
        try "eighty".write(to: first.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        try "500".write(to: first.file("SERVER_CONFIG_LIMIT"), atomically: true, encoding: .utf8)
        try "8080".write(to: second.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        let config = ServerConfig(
            store: InMemoryStore(),
            sources: ConfigSources(belowStore: [.directory(first.url.path), .directory(second.url.path)]))
        #expect(config.port == 8080)
        #expect(config.limit == 10, "out of its range: the default")
        let reported = ReportedErrors.mentioning(first.url.path)
        #expect(
            reported.contains { $0.description.contains("SERVER_CONFIG_PORT") && $0.key == "srv.ServerConfig.port" })
        #expect(
            reported.contains { $0.description.contains("SERVER_CONFIG_LIMIT") && $0.key == "srv.ServerConfig.limit" })
        #expect(throws: InvalidOverrides.self) { try StorableConfig.checkOverrides(of: [config]) }
    }

    @Test func aMissingSourceIsAnErrorUnlessOptional() throws {
        let directory = TemporaryDirectory()
        let missing = directory.file("nowhere").path
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(missing)]))
        #expect(config.port == 80)
        #expect(ReportedErrors.mentioning(missing).contains { $0.description.contains("does not exist") })
        #expect(throws: InvalidOverrides.self) { try StorableConfig.checkOverrides(of: [config]) }

        let optional = directory.file("later").path
        let quiet = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(optional, optional: true)]))
        #expect(ReportedErrors.mentioning(optional).isEmpty)
        #expect(throws: Never.self) { try StorableConfig.checkOverrides(of: [quiet]) }
    }

    @Test func checkingFindsNamesThatMatchNoSetting() throws {
        let directory = TemporaryDirectory()
        try "8080".write(to: directory.file("SERVER_CONFIG_PROT"), atomically: true, encoding: .utf8)
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        #expect(config.port == 80)
        do {
            try StorableConfig.checkOverrides(of: [config])
            Issue.record("a typo passed the check")
        } catch {
            #expect(
                error.problems == [
                    .unknownSourceName(origin: "directory \(directory.url.path)", name: "SERVER_CONFIG_PROT")
                ])
        }
    }

    @Test func aSecretSourceIsNeverShown() throws {
        let directory = TemporaryDirectory()
        try "hunter2".write(to: directory.file("SERVER_CONFIG_NAME"), atomically: true, encoding: .utf8)
        try "999".write(to: directory.file("SERVER_CONFIG_LIMIT"), atomically: true, encoding: .utf8)
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(aboveStore: [.directory(directory.url.path, secret: true)]))
        #expect(config.name == "hunter2")
        #expect(config.$name.isRedacted)
        #expect(!config.description.contains("hunter2"))
        #expect(!config.overrideReport.contains("hunter2"))
        #expect(config.overrideReport.contains("<redacted>"))
        #expect(!ReportedErrors.mentioning(directory.url.path).contains { $0.description.contains("\"999\"") })
    }

    @Test func aJSONFileReplacedByARenameReachesObserversAndTheSameContentIsNoChange() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("config.json")
        try #"{"srv.ServerConfig.port": 1}"#.write(to: file, atomically: true, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(aboveStore: [.jsonFile(file.path)]))
        let seen = Locked<[Int]>([])
        let token = config.$port.observe { value in seen.withLock { $0.append(value) } }
        defer { token.cancel() }
        try #"{"srv.ServerConfig.port": 2}"#.write(to: file, atomically: true, encoding: .utf8)
        #expect(waitUntil { config.port == 2 })
        #expect(waitUntil { seen.withLock { $0 } == [2] })
        // The same content again: no change to tell.
        try #"{"srv.ServerConfig.port": 2}"#.write(to: file, atomically: true, encoding: .utf8)
        try #"{"srv.ServerConfig.port": 3, "srv.ServerConfig.host": "h"}"#.write(
            to: file, atomically: true, encoding: .utf8)
        #expect(waitUntil { seen.withLock { $0 } == [2, 3] })
    }

    @Test func onReloadABadValueKeepsTheLastGoodValueFromThatSource() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("config.json")
        try #"{"srv.ServerConfig.port": 1}"#.write(to: file, atomically: true, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.jsonFile(file.path)]))
        try #"{"srv.ServerConfig.port": "x"}"#.write(to: file, atomically: true, encoding: .utf8)
        StorableConfig.reloadSources()
        #expect(config.port == 1)
        #expect(
            waitUntil {
                ReportedErrors.mentioning(file.path).contains { $0.description.contains("keeps the last valid") }
            })
        try "{ not json".write(to: file, atomically: true, encoding: .utf8)
        StorableConfig.reloadSources()
        #expect(waitUntil { ReportedErrors.mentioning(file.path).contains { $0.description.contains("not JSON") } })
        #expect(config.port == 80, "a file that does not parse gives no value")
    }

    /// A live source that cannot be read keeps the values it gave, reported once in plain words: here a JSON file
    /// replaced by a FIFO, which root cannot read either. Observers never see the default in between.
    @Test func aFileThatCannotBeReadKeepsTheValuesItGaveAndSaysSoOnce() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("config.json")
        try #"{"srv.ServerConfig.port": 1}"#.write(to: file, atomically: true, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.jsonFile(file.path)]))
        let seen = Locked<[Int]>([])
        let token = config.$port.observe { value in seen.withLock { $0.append(value) } }
        defer { token.cancel() }
        let fifo = directory.file("fifo")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        try #require(rename(fifo.path, file.path) == 0)
        StorableConfig.reloadSources()
        StorableConfig.reloadSources()
        #expect(config.port == 1)
        // The source's watcher may have read the FIFO first: then its thread makes the report, perhaps just after
        // the reloads return (a report is made after the reading is installed, outside the registry's locks).
        #expect(waitUntil { !ReportedErrors.mentioning(file.path).isEmpty })
        let reports = ReportedErrors.mentioning(file.path)
        #expect(reports.count == 1, "\(reports)")
        #expect(
            reports.allSatisfy {
                $0.description.contains(
                    "it is not a regular file; the values it gave before are kept until it can "
                        + "be read again")
            }, "\(reports)")
        // Readable again, with a new value: the only change observers hear of.
        try #"{"srv.ServerConfig.port": 2}"#.write(to: file, atomically: true, encoding: .utf8)
        StorableConfig.reloadSources()
        #expect(config.port == 2)
        #expect(waitUntil { seen.withLock { $0 } == [2] }, "\(seen.withLock { $0 })")
    }

    @Test func aStoredValueHidesASourceChangeBelowTheStoreAndSaysSoOnce() throws {
        let directory = TemporaryDirectory()
        try "1".write(to: directory.file("SERVER_CONFIG_LIMIT"), atomically: true, encoding: .utf8)
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        config.limit = 50
        try "2".write(to: directory.file("SERVER_CONFIG_LIMIT"), atomically: true, encoding: .utf8)
        StorableConfig.reloadSources()
        StorableConfig.reloadSources()
        #expect(config.limit == 50)
        func hidden(_ key: String) -> Int {
            ReportedErrors.mentioning(directory.url.path).filter {
                if case .sourceValueHidden(let hiddenKey, _, _) = $0 { return hiddenKey == key }
                return false
            }.count
        }
        #expect(waitUntil { hidden(config.$limit.key) == 1 })
        // A later change to the directory, hidden the same way, reaches the config through the same watcher after
        // the first: once it is said, whatever the watcher made of the first change has been said too.
        config.port = 1000
        try "81".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        #expect(waitUntil { hidden(config.$port.key) == 1 })
        #expect(hidden(config.$limit.key) == 1, "said once")
        #expect(config.$limit.hiddenSourceValue?.valueText == "2")
        config.$limit.reset()
        #expect(config.limit == 2)
    }

    @Test func anOptionalNilAssignedOverASourceBelowTheStoreStaysNil() throws {
        let directory = TemporaryDirectory()
        try "from-file".write(to: directory.file("SERVER_CONFIG_NICKNAME"), atomically: true, encoding: .utf8)
        let store = InMemoryStore()
        let config = ServerConfig(store: store, sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        #expect(config.nickname == "from-file")
        config.nickname = nil
        #expect(config.nickname == nil)
        let later = ServerConfig(store: store, sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        #expect(later.nickname == nil, "nil is stored, not a removal that would bring the file's value back")
    }
}

final class ServerConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "srv" }
    override class var sources: ConfigSources { ServerConfig.current.withLock { $0.sources } }
    override class var overrides: ConfigOverrides { ServerConfig.current.withLock { $0.overrides } }
    @Setting var port = 80
    @Setting var host = "localhost"
    @Setting(in: 1...100) var limit = 10
    @Setting var name = ""
    @Setting var tags: [String] = []
    @Setting var nickname: String? = nil

    /// The sources and overrides for the next instance, which takes them in its initializer.
    static let current = Locked((sources: ConfigSources.none, overrides: ConfigOverrides.none))
    /// Held from setting ``current`` until the instance has taken it (ColorConfig hands its sources over the same way).
    static let creation = NSLock()

    convenience init(store: any ConfigStore, sources: ConfigSources, overrides: ConfigOverrides = .none) {
        Self.creation.lock()
        defer { Self.creation.unlock() }
        Self.current.withLock { $0 = (sources, overrides) }
        self.init(store: store)
    }
}

/// A volume that the kubelet writes, as its atomic writer does: the files in a timestamped directory, `..data` a
/// link to it, each visible name a link through `..data`; an update writes a new timestamped directory, links
/// `..data_tmp` to it, renames `..data_tmp` over `..data`, adds and removes visible links, and removes the old
/// directory.
final class KubeletVolume: @unchecked Sendable {  // updated by one thread at a time
    let path: String
    private var current: String?
    private var round = 0

    init(at path: String, files: [String: String]) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try update(files)
    }

    func update(_ files: [String: String]) throws {
        round += 1
        let stamp = "..2026_11_25_12_00_\(String(format: "%02d", round)).\(UInt32.random(in: 0...UInt32.max))"
        let directory = path + "/" + stamp
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for (name, content) in files {
            try content.write(toFile: directory + "/" + name, atomically: false, encoding: .utf8)
        }
        try FileManager.default.createSymbolicLink(atPath: path + "/..data_tmp", withDestinationPath: stamp)
        guard rename(path + "/..data_tmp", path + "/..data") == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path + "/..data"])
        }
        let visible = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix("..") }
        for name in visible where files[name] == nil {
            try FileManager.default.removeItem(atPath: path + "/" + name)
        }
        for name in files.keys where !visible.contains(name) {
            try FileManager.default.createSymbolicLink(atPath: path + "/" + name, withDestinationPath: "..data/" + name)
        }
        if let current { try FileManager.default.removeItem(atPath: path + "/" + current) }
        current = stamp
    }
}

/// File sources changed as operations change them, with observers attached and real inotify.
@Suite(.serialized) struct LiveFileSourceTests {
    init() { ReportedErrors.install() }

    @Test func anObserverMayReloadTheSourcesInsideTheChangeItHearsOf() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("config.json")
        try #"{"srv.ServerConfig.port": 1}"#.write(to: file, atomically: true, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(aboveStore: [.jsonFile(file.path)]))
        let heard = Locked<[Int]>([])
        // Told on the watcher's thread, which read the change: reading the files again there must not wait for it.
        let token = config.$port.observe { value in
            StorableConfig.reloadSources()
            heard.withLock { $0.append(value) }
        }
        defer { token.cancel() }
        try #"{"srv.ServerConfig.port": 2}"#.write(to: file, atomically: true, encoding: .utf8)
        #expect(waitUntil { heard.withLock { $0 } == [2] }, "reloadSources() in an observer never returned")
        // The watcher's thread still reads later changes.
        try #"{"srv.ServerConfig.port": 3}"#.write(to: file, atomically: true, encoding: .utf8)
        #expect(waitUntil { heard.withLock { $0 } == [2, 3] })
    }

    @Test func aConfigMapVolumeSwappedByTheKubeletReachesObserversAsOrdinaryChanges() throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(
            at: directory.file("config").path, files: ["SERVER_CONFIG_PORT": "8080\n", "SERVER_CONFIG_HOST": "a"])
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(volume.path)]))
        #expect(config.port == 8080)
        #expect(config.host == "a")
        let ports = Locked<[Int]>([])
        let hosts = Locked<[String]>([])
        let portToken = config.$port.observe { value in ports.withLock { $0.append(value) } }
        let hostToken = config.$host.observe { value in hosts.withLock { $0.append(value) } }
        defer {
            portToken.cancel()
            hostToken.cancel()
        }
        try volume.update(["SERVER_CONFIG_PORT": "9090\n", "SERVER_CONFIG_HOST": "a", "SERVER_CONFIG_LIMIT": "5"])
        #expect(waitUntil { config.port == 9090 && config.limit == 5 })
        #expect(config.$port.origin == "file \(volume.path)/SERVER_CONFIG_PORT")
        // A key taken out of the ConfigMap: the setting reads its default again.
        try volume.update(["SERVER_CONFIG_PORT": "9090\n", "SERVER_CONFIG_HOST": "a"])
        #expect(waitUntil { config.limit == 10 })
        // A later swap that changes both: observers are told in order, setting by setting, so once they hear of
        // it, anything the swaps before could have told them has been told.
        try volume.update(["SERVER_CONFIG_PORT": "9091\n", "SERVER_CONFIG_HOST": "b"])
        #expect(waitUntil { ports.withLock { $0.last } == 9091 && hosts.withLock { $0.last } == "b" })
        #expect(ports.withLock { $0 } == [9090, 9091], "told once for each change")
        #expect(hosts.withLock { $0 } == ["b"], "an unchanged value is not a change")
    }

    @Test func aSingleFileThatChangesOnlyThroughTheDataLinkIsSeen() throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(
            at: directory.file("config").path, files: ["config.json": #"{"srv.ServerConfig.port": 1}"#])
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(aboveStore: [.jsonFile(volume.path + "/config.json")]))
        #expect(config.port == 1)
        try volume.update(["config.json": #"{"srv.ServerConfig.port": 2}"#])
        #expect(waitUntil { config.port == 2 })
    }

    @Test func anOptionalSourceThatAppearsLaterIsRead() throws {
        let directory = TemporaryDirectory()
        let later = directory.file("later").path
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(later, optional: true)]))
        #expect(config.port == 80)
        _ = try KubeletVolume(at: later, files: ["SERVER_CONFIG_PORT": "81"])
        #expect(waitUntil { config.port == 81 })
    }

    @Test func aFileWrittenInPlaceAndADotEnvFileReplacedAreSeen() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("dev.env")
        try "SERVER_CONFIG_PORT=1\n".write(to: file, atomically: false, encoding: .utf8)
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.dotEnv(file.path)]))
        #expect(config.port == 1)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("SERVER_CONFIG_PORT=2\n".utf8))
        try handle.close()
        #expect(waitUntil { config.port == 2 })
        try "SERVER_CONFIG_PORT=3\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(waitUntil { config.port == 3 })
    }

    /// Configs with sources created, observed and released on many threads and tasks while the volume is swapped:
    /// no hang, no crash, and every config that lives to the end reads the last contents. The threads are the
    /// system's (GCD), not the tasks' cooperative pool, which this blocking work would starve for other tests; the
    /// tasks yield between rounds.
    @Test(.timeLimit(.minutes(5))) func configsComeAndGoOnManyThreadsWhileTheVolumeIsSwapped() async throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(at: directory.file("config").path, files: ["SERVER_CONFIG_PORT": "1"])
        let sources = ConfigSources(belowStore: [.directory(volume.path)])
        let store = InMemoryStore()
        let rounds = isRunningUnderThreadSanitizer ? 10 : 40
        @Sendable func lifeCycle() {
            let config = ServerConfig(store: store, sources: sources)
            let token = config.$port.observe { _ in }
            _ = config.port
            if Bool.random() { token.cancel() }
            if Int.random(in: 0..<4) == 0 { StorableConfig.reloadSources() }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 6) { worker in
                    if worker == 0 {
                        for round in 2...21 {
                            try? volume.update(["SERVER_CONFIG_PORT": "\(round)"])
                            usleep(5_000)
                        }
                    } else {
                        for _ in 0..<rounds { lifeCycle() }
                    }
                }
                done.resume()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<rounds {
                        lifeCycle()
                        await Task.yield()
                    }
                }
            }
        }
        let last = ServerConfig(store: store, sources: sources)
        let token = last.$port.observe { _ in }
        #expect(await waitUntil { last.port == 21 })
        token.cancel()
    }
}

/// What operations, or an attacker with write access to a volume, can put in a source: nothing crashes, hangs or
/// is read past its limits, and each problem names its file.
struct HostileFileSourceTests {
    init() { ReportedErrors.install() }

    @Test func oddEntriesInADirectoryAreSkippedOrReportedAndTheRestIsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.url.path
        try "8080".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        // A FIFO where a value was expected: never opened for a blocking read.
        #expect(mkfifo(path + "/SERVER_CONFIG_HOST", 0o600) == 0)
        // A link that leads to itself, one that leads nowhere, and a subdirectory.
        try FileManager.default.createSymbolicLink(
            atPath: path + "/SERVER_CONFIG_NAME", withDestinationPath: "SERVER_CONFIG_NAME")
        try FileManager.default.createSymbolicLink(
            atPath: path + "/SERVER_CONFIG_LIMIT", withDestinationPath: "/nonexistent/limit")
        try FileManager.default.createDirectory(
            atPath: path + "/SERVER_CONFIG_TAGS", withIntermediateDirectories: false)
        // Bytes that are not UTF-8, and a file over the size limit.
        try Data([0x66, 0x6F, 0xFF, 0xFE]).write(to: directory.file("SERVER_CONFIG_NICKNAME"))
        try Data(count: SourceContents.readLimit + 1).write(to: directory.file("srv.ServerConfig.host"))
        // Odd Unicode names: matched by no setting, reported by the check, never a crash.
        for name in ["SERVER_CONFIG_PORT\u{301}", "\u{202E}TROP_GIFNOC_REVRES", "🙂"] {
            try "1".write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
        }
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(path)]))
        #expect(config.port == 8080)
        #expect(config.host == "localhost")
        #expect(config.name == "")
        #expect(config.limit == 10)
        #expect(config.nickname == nil)
        let reported = ReportedErrors.mentioning(path)
        #expect(
            reported.contains { $0.description.contains("SERVER_CONFIG_NICKNAME") && $0.description.contains("UTF-8") })
        #expect(
            reported.contains {
                $0.description.contains("srv.ServerConfig.host") && $0.description.contains("more than")
            })
        do {
            try StorableConfig.checkOverrides(of: [config])
            Issue.record("the odd names passed the check")
        } catch {
            let unknown = error.problems.compactMap { problem -> String? in
                if case .unknownSourceName(_, let name) = problem { return name }
                return nil
            }
            #expect(Set(unknown) == ["SERVER_CONFIG_PORT\u{301}", "\u{202E}TROP_GIFNOC_REVRES", "🙂"])
        }
    }

    @Test func hostileJSONIsReportedNotTrusted() throws {
        let directory = TemporaryDirectory()
        let cases: [(String, String)] = [
            (String(repeating: "[", count: 100_000), "not JSON"),
            (#"{"srv.ServerConfig.port": 1e400}"#, "srv.ServerConfig.port"),
            (#"{"srv.ServerConfig.port": 99999999999999999999999}"#, "srv.ServerConfig.port"),
            (#"["srv.ServerConfig.port", 1]"#, "not an object"),
            (#"{"format": "StorableConfig settings", "formatVersion": 99, "configs": {}}"#, "formatVersion"),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let file = directory.file("hostile-\(index).json")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let config = ServerConfig(
                store: InMemoryStore(), sources: ConfigSources(aboveStore: [.jsonFile(file.path)]))
            #expect(config.port == 80, "\(text.prefix(60))")
            #expect(
                ReportedErrors.mentioning(file.path).contains { $0.description.contains(expected) },
                "\(text.prefix(60))")
        }
    }

    @Test func aVariableInTheRealEnvironmentBeatsTheDotEnvLine() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("dev.env")
        try "ENVIRONMENT_FIRST_CONFIG_GREETING=from file\nENVIRONMENT_FIRST_CONFIG_FAREWELL=bye\n".write(
            to: file, atomically: true, encoding: .utf8)
        setenv("ENVIRONMENT_FIRST_CONFIG_GREETING", "from the environment", 1)
        defer { unsetenv("ENVIRONMENT_FIRST_CONFIG_GREETING") }
        EnvironmentFirstConfig.current.withLock { $0 = ConfigSources(belowStore: [.dotEnv(file.path)]) }
        let config = EnvironmentFirstConfig(store: InMemoryStore())
        #expect(config.greeting == "from the environment")
        #expect(config.$greeting.origin == "environment variable ENVIRONMENT_FIRST_CONFIG_GREETING")
        #expect(config.farewell == "bye")
        #expect(config.$farewell.origin == ".env file \(file.path) line 2")
    }
}

/// A config whose variables no other test uses, so that one test may set them in the process's environment.
final class EnvironmentFirstConfig: StorableConfig {
    override class var namespace: String { "envfirst" }
    override class var sources: ConfigSources { current.withLock { $0 } }
    static let current = Locked(ConfigSources.none)
    @Setting var greeting = ""
    @Setting var farewell = ""
}

/// What a second review of the file sources found, each kept as a test.
@Suite(.serialized) struct FileSourceReviewTests {
    init() { ReportedErrors.install() }

    /// Assignments racing with a source above the store that comes and goes: when all is quiet, the setting reads
    /// the source if it is there, else the last assignment; never a value of a layer that is gone.
    @Test func writesRacingWithALayerThatComesAndGoesEndOnTheRightValue() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("SERVER_CONFIG_PORT")
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(aboveStore: [.directory(directory.url.path)]))
        let token = config.$port.observe { _ in }
        defer { token.cancel() }
        for round in 0..<(isRunningUnderThreadSanitizer ? 10 : 40) {
            let present = round % 2 == 0
            DispatchQueue.concurrentPerform(iterations: 3) { worker in
                switch worker {
                case 0:
                    if present {
                        try? "\(10_000 + round)".write(to: file, atomically: true, encoding: .utf8)
                    } else {
                        try? FileManager.default.removeItem(at: file)
                    }
                    StorableConfig.reloadSources()
                case 1:
                    for value in 0..<50 { config.port = round * 100 + value }
                default:
                    StorableConfig.reloadSources()
                }
            }
            StorableConfig.reloadSources()
            let expected = present ? 10_000 + round : round * 100 + 49
            #expect(waitUntil { config.port == expected }, "round \(round): \(config.port), not \(expected)")
            #expect(config.$port.layer == (present ? .file : .stored))
        }
    }

    /// The last config of a source going away while the next one is made: the next one still reads and watches it.
    @Test func aConfigMadeWhileTheLastOneGoesAwayIsStillSubscribed() throws {
        let directory = TemporaryDirectory()
        try "4242".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        let sources = ConfigSources(belowStore: [.directory(directory.url.path)])
        let store = InMemoryStore()
        let wrong = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<(isRunningUnderThreadSanitizer ? 20 : 100) {
                let config = ServerConfig(store: store, sources: sources)
                if config.port != 4242 { wrong.withLock { $0 += 1 } }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
        let last = ServerConfig(store: store, sources: sources)
        try "4343".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        #expect(waitUntil { last.port == 4343 })
    }

    @Test func aSecretSourceStaysRedactedInChangesDescriptionsAndMirrorsAndUnderABadStoredValue() throws {
        let directory = TemporaryDirectory()
        try "hunter2".write(to: directory.file("SERVER_CONFIG_NAME"), atomically: true, encoding: .utf8)
        let store = InMemoryStore(["srv.ServerConfig.name": .int(5)])  // not a String: the next layer is read
        let config = ServerConfig(
            store: store, sources: ConfigSources(belowStore: [.directory(directory.url.path, secret: true)]))
        #expect(config.name == "hunter2")
        #expect(config.$name.isRedacted)
        #expect(config.$name.layer == .file)
        #expect(config.$name.hiddenSourceValue == nil, "it is read, not hidden")
        #expect(!config.description.contains("hunter2"))
        #expect(!config.$name.description.contains("hunter2"))
        var dumped = ""
        dump(config.$name, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        let changes = Locked<[String]>([])
        let token = config.observe { change in changes.withLock { $0.append(change.description) } }
        defer { token.cancel() }
        try "hunter3".write(to: directory.file("SERVER_CONFIG_NAME"), atomically: true, encoding: .utf8)
        StorableConfig.reloadSources()
        #expect(config.name == "hunter3")
        #expect(waitUntil { !changes.withLock { $0 }.isEmpty })
        #expect(!changes.withLock { $0 }.joined().contains("hunter"))
    }

    @Test func aRelativePathThroughALinkIsNotResolvedWhenDeclared() throws {
        let directory = TemporaryDirectory()
        let volume = try KubeletVolume(
            at: directory.file("config").path, files: ["config.json": #"{"srv.ServerConfig.port": 1}"#])
        // The same file by a path relative to the current directory, through the `config.json` link.
        let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
        let relative = String(repeating: "../", count: depth) + volume.path.dropFirst() + "/./config.json"
        let source = ConfigSource.jsonFile(relative)
        #expect(source.path == volume.path + "/config.json")
        let config = ServerConfig(store: InMemoryStore(), sources: ConfigSources(belowStore: [source]))
        #expect(config.port == 1)
        try volume.update(["config.json": #"{"srv.ServerConfig.port": 2}"#])
        #expect(waitUntil { config.port == 2 })
    }

    @Test func aDocumentNamesASettingWithAnExplicitKeyByItsPropertyAndTheCheckKnowsWhereEachNameIsRead() throws {
        let directory = TemporaryDirectory()
        let document = directory.file("document.json")
        try #"""
        {"format": "StorableConfig settings", "formatVersion": 1,
         "configs": {"KeyedSourceConfig": {"namespace": "keyed", "schemaVersion": 0,
                                           "settings": {"port": 7000}}}}
        """#.write(to: document, atomically: true, encoding: .utf8)
        let env = directory.file("dev.env")
        try "keyed.legacy.port=1\n".write(to: env, atomically: true, encoding: .utf8)
        KeyedSourceConfig.current.withLock {
            $0 = ConfigSources(belowStore: [.jsonFile(document.path), .dotEnv(env.path)])
        }
        let config = KeyedSourceConfig(store: InMemoryStore())
        #expect(config.port == 7000)
        do {
            try StorableConfig.checkOverrides(of: [config])
            Issue.record("a key in a .env file, where only variable names are read, passed the check")
        } catch {
            #expect(error.problems == [.unknownSourceName(origin: ".env file \(env.path)", name: "keyed.legacy.port")])
        }
    }

    @Test func aProblemIsReportedOncePerContentOfItsOwnFile() throws {
        let directory = TemporaryDirectory()
        try "not a number".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        try "a".write(to: directory.file("SERVER_CONFIG_HOST"), atomically: true, encoding: .utf8)
        let config = ServerConfig(
            store: InMemoryStore(), sources: ConfigSources(belowStore: [.directory(directory.url.path)]))
        func reports() -> Int {
            ReportedErrors.mentioning(directory.url.path + "/SERVER_CONFIG_PORT").count
        }
        #expect(reports() == 1)
        for host in ["b", "c", "d"] {
            try host.write(to: directory.file("SERVER_CONFIG_HOST"), atomically: true, encoding: .utf8)
            StorableConfig.reloadSources()
            #expect(config.host == host)
        }
        #expect(reports() == 1, "another file's change does not report this one again")
        #expect(config.overrideProblems.count == 1, "kept once, not once per reload")
    }
}

final class KeyedSourceConfig: StorableConfig {
    override class var namespace: String { "keyed" }
    override class var sources: ConfigSources { current.withLock { $0 } }
    static let current = Locked(ConfigSources.none)
    @Setting(key: "keyed.legacy.port") var port = 80
}

/// A config whose last reference goes inside its own notification, on the watcher's thread: its `deinit` stops
/// that watcher from the watcher's own thread, which must not wait for itself.
struct FileSourceReleaseTests {
    final class Holder: @unchecked Sendable {
        // Written by the test, then by the observer on the watcher's thread; read by the test after `released`.
        var config: ServerConfig?
        var token: ObservationToken?
    }

    @Test(.timeLimit(.minutes(5))) func aConfigReleasedInsideItsOwnNotificationOnTheWatcherThread() throws {
        let directory = TemporaryDirectory()
        try "1".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        let sources = ConfigSources(belowStore: [.directory(directory.url.path)])
        let released = DispatchSemaphore(value: 0)
        let holder = Holder()
        holder.config = ServerConfig(store: InMemoryStore(), sources: sources)
        holder.token = holder.config?.$port.observe { [holder] _ in
            // The only strong reference goes here, on the thread that delivers the change.
            holder.config = nil
            released.signal()
        }
        try "2".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        #expect(released.wait(timeout: .now() + 20) == .success)
        holder.token = nil
        // The source was given up with its last config; a new config reads and watches it again.
        let next = ServerConfig(store: InMemoryStore(), sources: sources)
        #expect(next.port == 2)
        try "3".write(to: directory.file("SERVER_CONFIG_PORT"), atomically: true, encoding: .utf8)
        #expect(waitUntil { next.port == 3 })
    }
}
