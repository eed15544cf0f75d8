import Foundation
import Observation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Collects what an observer is told.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Locked<[Element]>([])
    var elements: [Element] { storage.withLock { $0 } }
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
}

/// A deadlock fails a test here after five minutes, not one: in CI's full run on two cores, async tests wait up to
/// two minutes for the shared pool (one went past a one-minute limit that way, with nothing wrong).
@Suite(.timeLimit(.minutes(5)))
struct ObservationTests {
    @Test func aSettingsStreamStartsWithTheCurrentValueThenYieldsEachChange() async {
        let config = AppConfig(store: InMemoryStore())
        config.userName = "first"
        var iterator = config.$userName.changes.makeAsyncIterator()
        #expect(await iterator.next() == "first")
        config.userName = "second"
        config.userName = "second"  // unchanged: nothing
        config.userName = "third"
        #expect(await iterator.next() == "second")
        #expect(await iterator.next() == "third")
    }

    @Test func aStreamWhoseConsumerDoesNotReadHoldsAtMostItsBoundAndEndsOnTheLastValue() async {
        let config = StreamBufferConfig(store: InMemoryStore())
        var values = config.$count.changes.makeAsyncIterator()
        var changes = config.changes.makeAsyncIterator()
        let assignments = 20 * ChangeBuffer.limit
        for count in 1...assignments { config.count = count }
        var read = 0
        var last = -1
        while last != assignments, let value = await values.next() {
            read += 1
            last = value
        }
        #expect(last == assignments)
        #expect(read <= ChangeBuffer.limit)
        read = 0
        last = -1
        while last != assignments, let change = await changes.next() {
            read += 1
            last = change.newValue as? Int ?? -1
        }
        #expect(last == assignments)
        #expect(read <= ChangeBuffer.limit)
    }

    @Test func aSettingsStreamEndsWhenTheConfigGoesAway() async {
        var config: AppConfig? = AppConfig(store: InMemoryStore())
        let stream = config!.$userName.changes
        let collected = Task {
            var values: [String] = []
            for await value in stream { values.append(value) }
            return values
        }
        try? await Task.sleep(nanoseconds: 20_000_000)
        config!.userName = "last"
        config = nil
        let values = await collected.value
        #expect(values.first == "")
        #expect(values.last == "last")
    }

    @Test func theConfigsStreamTellsWhichKeyChangedWithOldAndNewValues() async {
        let config = AppConfig(store: InMemoryStore())
        var iterator = config.changes.makeAsyncIterator()
        config.userName = "nkysu1"
        config.isFirstLaunch = false
        config.isFirstLaunch = false
        config.selectedHobbies = ["go"]
        let first = await iterator.next()
        #expect(first?.key == config.$userName.key)
        #expect(first?.name == "userName")
        #expect(first?.oldValue as? String == "")
        #expect(first?.newValue as? String == "nkysu1")
        let second = await iterator.next()
        #expect(second?.name == "isFirstLaunch")
        #expect(second?.newValue as? Bool == false)
        #expect(await iterator.next()?.name == "selectedHobbies")
    }

    @Test func aClosureObserverIsCalledForChangesUntilItsTokenIsReleased() {
        let config = AppConfig(store: InMemoryStore())
        let seen = Recorder<String>()
        var token: ObservationToken? = config.$userName.observe { seen.append($0) }
        #expect(seen.elements.isEmpty)
        config.userName = "a"
        config.userName = "a"
        config.userName = "b"
        #expect(seen.elements == ["a", "b"])
        _ = token
        token = nil
        config.userName = "c"
        #expect(seen.elements == ["a", "b"])
        let cancelled = config.$userName.observe { seen.append($0) }
        cancelled.cancel()
        config.userName = "d"
        #expect(seen.elements == ["a", "b"])
    }

    @Test func anObserverAskingForTheCurrentValueGetsItFirstAndIsToldWhenTheConfigGoes() {
        var config: AppConfig? = AppConfig(store: InMemoryStore())
        config!.userName = "before"
        let seen = Recorder<String>()
        let token = config!.$userName.observe(initial: true, onEnd: { seen.append("end") }) { seen.append($0) }
        #expect(seen.elements == ["before"])
        config!.userName = "after"
        #expect(seen.elements == ["before", "after"])
        config = nil
        #expect(seen.elements == ["before", "after", "end"])
        withExtendedLifetime(token) {}
    }

    @Test func aWillChangeObserverIsCalledBeforeTheSettingsObserversForEveryChange() throws {
        let store = InMemoryStore()
        let config = AppConfig(store: store)
        let other = AppConfig(store: store)
        let seen = Recorder<String>()
        var willChange: ObservationToken? = config.observeWillChange { seen.append("will change") }
        let token = config.$userName.observe { seen.append($0) }
        config.userName = "a"
        config.userName = "a"  // keeps the value: nothing
        #expect(seen.elements == ["will change", "a"])
        config.batch {
            config.userName = "b"
            config.userName = "c"
        }
        other.userName = "d"
        store.setValue(.string("e"), forKey: config.$userName.key)
        try config.reload()
        #expect(seen.elements == ["will change", "a", "will change", "c", "will change", "d", "will change", "e"])
        _ = willChange
        willChange = nil
        config.userName = "f"
        #expect(seen.elements.suffix(2) == ["e", "f"])
        withExtendedLifetime(token) {}
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func observationTrackingFiresForTheSettingReadAndNotForOthers() {
        let config = AppConfig(store: InMemoryStore())
        let fired = Recorder<Bool>()
        withObservationTracking {
            _ = config.userName
        } onChange: {
            fired.append(true)
        }
        config.isFirstLaunch = false
        #expect(fired.elements.isEmpty)
        config.userName = "changed"
        #expect(fired.elements.count == 1)
    }

    // Writes skip the registrar until the framework has tracked a setting once (ObservedSetting): a tracking
    // that begins after many untracked writes must still hear the next one. (Run alone, this test starts
    // with the flag clear.)
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func observationTrackingBegunAfterUntrackedWritesFires() {
        let config = AppConfig(store: InMemoryStore())
        for index in 0..<100 { config.userName = "untracked \(index)" }
        let fired = Recorder<Bool>()
        withObservationTracking {
            _ = config.userName
        } onChange: {
            fired.append(true)
        }
        config.userName = "tracked"
        #expect(fired.elements.count == 1)
    }

    @Test func anotherConfigOverTheSameStoreEmitsAChangeAtOnce() {
        let store = InMemoryStore()
        let writer = AppConfig(store: store)
        let reader = AppConfig(store: store)
        let seen = Recorder<String>()
        let token = reader.$userName.observe { seen.append($0) }
        writer.userName = "from the writer"
        #expect(seen.elements == ["from the writer"])
        withExtendedLifetime(token) {}
    }

    @Test func observersThatReadAndWriteSettingsDoNotDeadlock() {
        let config = AppConfig(store: InMemoryStore())
        let seen = Recorder<String>()
        let token = config.$userName.observe { name in
            seen.append("\(name) \(config.isFirstLaunch)")
            config.isFirstLaunch = false  // another setting
            if name == "again" { config.userName = "final" }  // the same setting, from its own observer
        }
        config.userName = "once"
        config.userName = "again"
        #expect(config.userName == "final")
        #expect(seen.elements == ["once true", "again false", "final false"])
        withExtendedLifetime(token) {}
    }

    @Test func aSlowObserverDoesNotBlockWritersOfOtherSettings() async {
        let config = CounterConfig(store: InMemoryStore())
        let inObserver = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let token = config.$a.observe { _ in
            inObserver.signal()
            release.wait()
        }
        let slowWriter = Thread { config.a = 1 }
        slowWriter.start()
        inObserver.wait()
        // The observer of `a` is blocked; writing `b` still returns.
        config.b = 2
        #expect(config.b == 2)
        release.signal()
        #expect(await waitUntil { slowWriter.isFinished })
        withExtendedLifetime(token) {}
    }

    @Test func aBatchEmitsOneChangePerKeyAfterItEnds() {
        let config = AppConfig(store: InMemoryStore())
        let seen = Recorder<String>()
        let token = config.observe { seen.append("\($0.name)=\($0.newValue)") }
        config.batch {
            config.userName = "a"
            config.userName = "b"
            config.isFirstLaunch = false
            #expect(seen.elements.isEmpty)
        }
        #expect(Set(seen.elements) == ["userName=b", "isFirstLaunch=false"])
        #expect(seen.elements.count == 2)
        withExtendedLifetime(token) {}
    }

    @Test func aConfigWithLiveObserversIsFreedWhenDropped() async {
        weak var weakConfig: AppConfig?
        var token: ObservationToken?
        let consumer: Task<Int, Never>
        do {
            let config = AppConfig(store: InMemoryStore())
            weakConfig = config
            token = config.$userName.observe { _ in }
            let stream = config.changes
            consumer = Task {
                var count = 0
                for await _ in stream { count += 1 }
                return count
            }
            config.userName = "x"
        }
        #expect(weakConfig == nil)
        #expect(await consumer.value == 1)
        _ = token
    }

    @Test func changesFromAnotherProcessReachObserversAfterReload() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let config = AppConfig(store: try JSONFileStore(url: url))
        let seen = Recorder<String>()
        let token = config.$userName.observe { seen.append($0) }
        let child = try runProduct("storable-config-stress", ["set", url.path, config.$userName.key, "elsewhere"])
        #expect(child.status == 0, "\(child.errorOutput)")
        #expect(seen.elements.isEmpty)
        try config.reload()
        #expect(seen.elements == ["elsewhere"])
        withExtendedLifetime(token) {}
    }

    @Test func anUnchangedValueOfANonEquatableTypeEmitsNothing() {
        let config = OpaqueConfig(store: InMemoryStore())
        let seen = Recorder<Int>()
        let token = config.$box.observe { seen.append($0.number) }
        config.box = OpaqueBox(number: 1)
        config.box = OpaqueBox(number: 1)
        config.box = OpaqueBox(number: 2)
        #expect(seen.elements == [1, 2])
        withExtendedLifetime(token) {}
    }

    @Test func aValueTypeWhoseEqualityReadsTheSettingDoesNotDeadlock() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let config = NosyConfig(store: InMemoryStore())
            NosyValue.config = config
            config.value = NosyValue(number: 1)  // compared with nobody listening
            let token = config.$value.observe { _ in }
            config.value = NosyValue(number: 2)  // compared by the delivering thread
            config.value = NosyValue(number: 2)
            withExtendedLifetime(token) {}
            exit(config.value.number == 2 ? 0 : 1)
        }
    }

    /// The writers are threads, not tasks: with the whole suite on two cores, tasks waited minutes for the shared
    /// pool (0.08 s alone, over 100 s in CI's full runs, past the suite's time limit).
    @Test func observersOfConcurrentWritersEndOnTheFinalValue() {
        for _ in 0..<20 {
            let config = CounterConfig(store: InMemoryStore())
            let seen = Recorder<Int>()
            let token = config.$a.observe { seen.append($0) }
            let done = DispatchSemaphore(value: 0)
            for writer in 0..<4 {
                Thread {
                    for round in 0..<200 { config.a = writer * 1000 + round + 1 }
                    done.signal()
                }.start()
            }
            for _ in 0..<4 { #expect(done.wait(timeout: .now() + 120) == .success, "a writer hung") }
            #expect(seen.elements.last == config.a)
            withExtendedLifetime(token) {}
        }
    }

    @Test func aWatchedFileBeingWrittenInPlaceIsReadWhenCompleteAndNeverSetAside() async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        try store.startWatching()
        let config = AppConfig(store: store)
        config.userName = "before"
        // An editor that truncates the file, then writes it in two steps.
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(#"{"com.example.app.AppConfig.userName": "#.utf8))
        try await Task.sleep(nanoseconds: 50_000_000)
        try handle.write(contentsOf: Data(#""edited in place"}"#.utf8))
        try handle.close()
        #expect(await waitUntil { config.userName == "edited in place" })
        let siblings = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!siblings.contains { $0.contains("corrupt") })
        store.stopWatching()
    }

    @Test func removingAnObserverWhoseClosureOwnsAnotherTokenDoesNotDeadlock() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            final class Holder: @unchecked Sendable { var token: ObservationToken? }
            let config = AppConfig(store: InMemoryStore())
            let outer: ObservationToken
            do {
                // The outer observer's closure is the only owner of the holder, whose token observes the same
                // setting: removing the outer observer releases the holder, which removes the inner one.
                let holder = Holder()
                holder.token = config.$userName.observe { _ in }
                outer = config.$userName.observe { [holder] _ in _ = holder }
            }
            outer.cancel()
            exit(0)
        }
    }

    @Test(arguments: [false, true])
    func aWatchedFileTellsObserversOfOtherProcessesChangesByItself(polling: Bool) async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("settings.json")
        let store = try JSONFileStore(url: url)
        let file = try #require(store.storageIdentity as? JSONFile)
        try file.startWatching(forcePolling: polling, pollingInterval: 0.05)
        #expect(store.isWatching)
        let config = AppConfig(store: store)
        let seen = Recorder<String>()
        let token = config.$userName.observe { seen.append($0) }
        let child = try runProduct("storable-config-stress", ["set", url.path, config.$userName.key, "watched"])
        #expect(child.status == 0, "\(child.errorOutput)")
        #expect(await waitUntil { seen.elements == ["watched"] })
        #expect(config.userName == "watched")
        store.stopWatching()
        #expect(!store.isWatching)
        withExtendedLifetime(token) {}
    }
}

/// A value that is not `Equatable`.
struct OpaqueBox: Codable, Sendable {
    var number: Int
}

final class OpaqueConfig: StorableConfig {
    override class var namespace: String { "opaque" }
    @Setting var box = OpaqueBox(number: 0)
}

/// A value whose `==` reads the very setting that holds it: user code that must never run under the
/// framework's locks.
struct NosyValue: Codable, Sendable {
    nonisolated(unsafe) static var config: NosyConfig?
    var number: Int
}

extension NosyValue: Equatable {
    static func == (lhs: NosyValue, rhs: NosyValue) -> Bool {
        _ = config?.value
        return lhs.number == rhs.number
    }
}

final class NosyConfig: StorableConfig {
    override class var namespace: String { "nosy" }
    @Setting var value = NosyValue(number: 0)
}

final class StreamBufferConfig: StorableConfig {
    @Setting var count = 0
}
