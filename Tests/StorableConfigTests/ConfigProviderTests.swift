import Foundation
import StorableConfig
import StorableConfigTesting
import Testing

/// A source of values that a user writes (``ConfigProvider``), on the public API alone: read above or below the
/// store, live, refused where a value does not fit, one reading and one watch for every config that reads it.
@Suite struct ConfigProviderTests {
    @Test func aProviderAboveTheStoreWinsOverAStoredValueAndSaysWhereTheValueComesFrom() {
        let flags = FixedProvider(["FlagConfig.darkMode": .bool(true), "providers.FlagConfig.limit": .int(7)])
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))) { _ in
            let config = FlagConfig()
            config.darkMode = false
            #expect(config.darkMode == true && config.$darkMode.layer == .provider)
            #expect(config.$darkMode.origin == "test flags key FlagConfig.darkMode")
            #expect(config.limit == 7 && config.$limit.origin == "test flags key providers.FlagConfig.limit")
            #expect(config.name == "" && config.$name.layer == .default)
        }
    }

    @Test func aProviderBelowTheStoreReplacesTheDefaultAndAStoredValueWins() {
        let flags = FixedProvider(["FlagConfig.limit": .int(7)])
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(belowStore: [.provider(flags)]))) { _ in
            let config = FlagConfig()
            #expect(config.limit == 7 && config.$limit.layer == .provider)
            config.limit = 9
            #expect(config.limit == 9 && config.$limit.layer == .stored)
            config.$limit.reset()
            #expect(config.limit == 7 && config.$limit.layer == .provider)
        }
    }

    @Test func aChangeTheProviderAnnouncesIsReadWhenItsCallReturnsAndObserversHearIt() {
        let flags = FixedProvider(["FlagConfig.limit": .int(1)])
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))) { _ in
            let first = FlagConfig()
            let second = FlagConfig()
            let heard = Locked<[Int]>([])
            let token = second.$limit.observe { value in heard.withLock { $0.append(value) } }
            for value in 2...5 {
                flags.set(["FlagConfig.limit": .int(Int64(value))])
                #expect(first.limit == value && second.limit == value)
            }
            flags.set([:])
            #expect(first.limit == 10 && first.$limit.layer == .default)
            #expect(heard.withLock { $0 } == [2, 3, 4, 5, 10])
            withExtendedLifetime(token) {}
        }
    }

    /// Readings are not counted exactly: `reloadSources()`, which other suites call meanwhile, reads every source
    /// of the process, this one too. Watches are.
    @Test func oneProviderIsReadOnceForManyConfigsAndWatchedWhileOneReadsIt() {
        let flags = FixedProvider(["FlagConfig.limit": .int(3)])
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))) { _ in
            var configs = (0..<20).map { _ in FlagConfig() }
            #expect(configs.allSatisfy { $0.limit == 3 })
            #expect(flags.watchers == 1)
            flags.set(["FlagConfig.limit": .int(4)])
            #expect(configs.allSatisfy { $0.limit == 4 })
            configs.removeAll()
            #expect(flags.watchers == 0, "the last config gone, the watch is stopped")
            let again = FlagConfig()
            #expect(again.limit == 4 && flags.watchers == 1)
        }
    }

    @Test func aValueOfTheWrongTypeIsReportedByKeyAndTheLastValidValueIsKept() {
        let flags = FixedProvider(["FlagConfig.limit": .int(3)])
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))
        IsolatedSettings.run(settings) { settings in
            let config = FlagConfig()
            flags.set(["FlagConfig.limit": .string("lots")])
            #expect(config.limit == 3 && config.$limit.layer == .provider)
            let reports = settings.reports(mentioning: "providers.FlagConfig.limit")
            #expect(reports.count == 1 && reports[0].description.contains("test flags key FlagConfig.limit"))
            flags.set(["FlagConfig.limit": .int(500)])
            #expect(config.limit == 3, "out of 1...100: refused as well")
            flags.set(["FlagConfig.limit": .int(50)])
            #expect(config.limit == 50)
        }
    }

    @Test func aProviderThatCannotAnswerIsReportedAndItsValuesAreKeptUntilItCan() {
        let flags = FixedProvider(["FlagConfig.limit": .int(3)])
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))
        IsolatedSettings.run(settings) { settings in
            let config = FlagConfig()
            flags.fail(with: "the service answered 503")
            flags.fail(with: "the service answered 503")
            #expect(config.limit == 3 && config.$limit.layer == .provider)
            #expect(settings.reports(mentioning: "the service answered 503").count == 1, "reported once")
            #expect(settings.reports(mentioning: "test flags")[0].description.contains("are kept"))
            flags.set(["FlagConfig.limit": .int(8)])
            #expect(config.limit == 8)
            flags.fail(with: "the service answered 503")
            #expect(settings.reports(mentioning: "the service answered 503").count == 2, "a second outage too")
            #expect(config.limit == 8)
        }
    }

    /// A stored value that fails the check is kept as the last good one, until a layer above gives the value.
    @Test func aValueTheProviderGivesIsReadOverAStoredValueThatFailsItsCheck() {
        let flags = FixedProvider([:])
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))
        IsolatedSettings.run(settings) { settings in
            let config = FlagConfig()
            config.limit = 40
            settings.store.setValue(.int(500), forKey: config.$limit.key)
            try? config.reload()
            #expect(config.limit == 40, "the last good value")
            flags.set(["FlagConfig.limit": .int(7)])
            #expect(config.limit == 7 && config.$limit.layer == .provider)
        }
    }

    @Test func aDictionaryGivesSomeFieldsOfAStructAndTheOthersComeFromTheStore() {
        let flags = FixedProvider(["FlagConfig.window": .dictionary(["width": .int(800)])])
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))) { _ in
            let config = FlagConfig()
            config.window = FlagWindow(width: 5, height: 6)
            #expect(config.window == FlagWindow(width: 800, height: 6) && config.$window.layer == .provider)
        }
    }

    @Test func aSecretProvidersValueIsNeverShownAndANameNoSettingAnswersToIsALikelyTypo() {
        let flags = FixedProvider(["FlagConfig.limit": .string("hunter2"), "FlagConfig.limt": .int(3)])
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags, secret: true)]))
        IsolatedSettings.run(settings) { settings in
            let config = FlagConfig()
            #expect(config.$limit.layer == .default)
            #expect(!settings.reports.isEmpty && !settings.reports.contains { $0.description.contains("hunter2") })
            let error = #expect(throws: InvalidOverrides.self) { try StorableConfig.checkOverrides(of: [config]) }
            #expect(error?.problems.contains { $0.description.contains("FlagConfig.limt") } == true)
            #expect(error?.description.contains("hunter2") == false)
        }
    }

    /// Values from outside: numbers past every integer type, nesting past what a store holds, names in odd Unicode.
    @Test func hostileValuesAreReportedByNameAndTheOthersAreRead() {
        var deep = StoredValue.dictionary(["width": .int(1)])
        for _ in 0..<1_000 { deep = .dictionary(["width": deep]) }
        let flags = FixedProvider([
            "FlagConfig.limit": .uint(UInt64.max), "FlagConfig.window": deep,
            "FlagConfig.name": .string("e\u{301}\u{202E}\u{0}🇺🇦"), "FlagConfig.darkMode": .number("1e400"),
            "FlagConfig.\u{202E}limit": .int(3),
        ])
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))
        IsolatedSettings.run(settings) { settings in
            let config = FlagConfig()
            #expect(config.limit == 10 && config.$limit.layer == .default)
            #expect(config.window == FlagWindow(width: 1, height: 1))
            #expect(config.name == "e\u{301}\u{202E}\u{0}🇺🇦" && config.$name.layer == .provider)
            #expect(!config.darkMode)
            #expect(settings.reports(mentioning: "providers.FlagConfig.limit").count == 1)
            #expect(settings.reports(mentioning: "FlagConfig.window nests more than 128").count == 1)
            #expect(settings.reports(mentioning: "providers.FlagConfig.darkMode").count == 1)
            let error = #expect(throws: InvalidOverrides.self) { try StorableConfig.checkOverrides(of: [config]) }
            #expect(error?.problems.contains { $0.description.contains("FlagConfig.\u{202E}limit") } == true)
        }
    }

    /// A provider that announces a change from inside `startWatching`, and from an observer of its own values.
    @Test func aProviderMayAnnounceAChangeFromInsideStartWatchingOrAnObserver() {
        let flags = EagerProvider()
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))) { _ in
            let config = FlagConfig()
            #expect(config.limit == 2, "read, then read again at the change announced inside startWatching")
            let token = config.$limit.observe { value in if value < 5 { flags.bump() } }
            flags.bump()
            #expect(config.limit == 5)
            withExtendedLifetime(token) {}
        }
    }

    @Test func aNameThatTwoLiveSettingsAnswerToIsAppliedToNeither() {
        let flags = FixedProvider(["FlagConfig.limit": .int(3)])
        IsolatedSettings.run(IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))) {
            settings in
            let config = FlagConfig()
            #expect(config.limit == 3)
            var other: OtherFlagConfig? = OtherFlagConfig()
            #expect(config.limit == 10 && other?.limit == 0)
            #expect(!settings.reports(mentioning: "names 2 settings").isEmpty)
            withExtendedLifetime(other) {}
            other = nil
            #expect(config.limit == 3, "one setting answers to it again")
        }
    }

    /// Configs created, observed and released on many threads while the provider changes and another thread
    /// reloads the sources: every config ends at the provider's last value, and the watch ends with the last one.
    @Test func configsComeAndGoOnManyThreadsWhileTheProviderChanges() async {
        let flags = FixedProvider(["FlagConfig.limit": .int(1)])
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))
        let rounds = 300
        await IsolatedSettings.run(settings) { _ in
            let kept = FlagConfig()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for value in 1...rounds { flags.set(["FlagConfig.limit": .int(Int64(value % 90 + 1))]) }
                }
                group.addTask { for _ in 0..<50 { StorableConfig.reloadSources() } }
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<rounds / 4 {
                            let config = FlagConfig()
                            let token = config.$limit.observe { _ in }
                            _ = config.limit
                            withExtendedLifetime(token) {}
                        }
                    }
                }
            }
            let last = rounds % 90 + 1
            #expect(kept.limit == last && FlagConfig().limit == last)
        }
        #expect(flags.watchers == 0)
    }

    /// The provider of "Writing a provider" in Docs/WritingAStore.md, as the page gives it.
    @Test func theRemoteFeatureFlagsOfTheDocsAreReadLiveAndAFailedFetchKeepsTheFlags() {
        let answer = Locked<Result<String, FetchFailure>>(.success(#"{"FlagConfig.darkMode": true}"#))
        let flags = RemoteFlags(name: "flags.example.com") { try Data(answer.withLock { try $0.get() }.utf8) }
        let settings = IsolatedSettings(sources: ConfigSources(aboveStore: [.provider(flags)]))
        IsolatedSettings.run(settings) { settings in
            flags.refresh()
            let config = FlagConfig()
            #expect(config.darkMode && config.$darkMode.origin == "flags.example.com key FlagConfig.darkMode")
            answer.withLock { $0 = .success(#"{"FlagConfig.darkMode": false, "FlagConfig.limit": 12}"#) }
            flags.refresh()
            #expect(!config.darkMode && config.limit == 12)
            answer.withLock { $0 = .failure(FetchFailure()) }
            flags.refresh()
            #expect(!config.darkMode && config.limit == 12)
            #expect(settings.reports(mentioning: "flags.example.com").count == 1)
            answer.withLock { $0 = .success("[1, 2]") }
            flags.refresh()
            #expect(settings.reports(mentioning: "not a JSON object").count == 1)
            #expect(config.limit == 12)
        }
    }
}

struct FetchFailure: Error, CustomStringConvertible {
    var description: String { "the connection was refused" }
}

/// A provider whose values a test sets; it counts its readings and live watches.
final class FixedProvider: ConfigProvider {
    let providerName = "test flags"
    private let state: Locked<(values: [String: StoredValue], failure: String?, listeners: [Int: @Sendable () -> Void])>
    private let counts = Locked((readings: 0, next: 0))

    init(_ values: [String: StoredValue]) {
        state = Locked((values, nil, [:]))
    }

    var readings: Int { counts.withLock { $0.readings } }
    var watchers: Int { state.withLock { $0.listeners.count } }

    func set(_ values: [String: StoredValue]) {
        let listeners = state.withLock { state in
            state.values = values
            state.failure = nil
            return Array(state.listeners.values)
        }
        for listener in listeners { listener() }
    }

    func fail(with failure: String) {
        let listeners = state.withLock { state in
            state.failure = failure
            return Array(state.listeners.values)
        }
        for listener in listeners { listener() }
    }

    func currentValues() throws -> [String: StoredValue] {
        counts.withLock { $0.readings += 1 }
        let (values, failure) = state.withLock { ($0.values, $0.failure) }
        if let failure { throw FetchFailure.Message(description: failure) }
        return values
    }

    func startWatching(_ onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let number = counts.withLock { counts in
            counts.next += 1
            return counts.next
        }
        state.withLock { $0.listeners[number] = onChange }
        return { [state] in _ = state.withLock { $0.listeners.removeValue(forKey: number) } }
    }
}

/// A provider whose value counts up at each `bump()`, and which announces a change as soon as it is watched.
final class EagerProvider: ConfigProvider {
    let providerName = "eager flags"
    private let state = Locked((limit: 1, listener: (@Sendable () -> Void)?.none))

    func bump() {
        let listener = state.withLock { state in
            state.limit += 1
            return state.listener
        }
        listener?()
    }

    func currentValues() throws -> [String: StoredValue] {
        ["FlagConfig.limit": .int(Int64(state.withLock { $0.limit }))]
    }

    func startWatching(_ onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        state.withLock { $0.listener = onChange }
        bump()
        return { [state] in state.withLock { $0.listener = nil } }
    }
}

extension FetchFailure {
    struct Message: Error, CustomStringConvertible {
        let description: String
    }
}

/// The remote feature-flag provider of Docs/WritingAStore.md ("Writing a provider"), as the page gives it.
final class RemoteFlags: ConfigProvider {
    struct AnswerError: Error, CustomStringConvertible {
        let description: String
    }

    let providerName: String
    private let fetch: @Sendable () throws -> Data
    private let state = Locked(
        (values: [String: StoredValue](), failure: String?.none, listeners: [UUID: @Sendable () -> Void]()))

    /// `fetch` returns the service's answer: a JSON object of flags, each named `<Config>.<property>`.
    init(name: String, fetch: @escaping @Sendable () throws -> Data) {
        providerName = name
        self.fetch = fetch
    }

    /// Fetches the flags again and tells the configs; call it from a timer or a push channel.
    func refresh() {
        let outcome: Result<[String: StoredValue], any Error> = Result {
            let answer = try StoredValue(jsonText: String(decoding: try fetch(), as: UTF8.self))
            guard case .dictionary(let flags) = answer else {
                throw AnswerError(description: "the answer is not a JSON object")
            }
            return flags
        }
        let listeners = state.withLock { state in
            switch outcome {
            case .success(let flags): (state.values, state.failure) = (flags, nil)
            case .failure(let error): state.failure = "\(error)"
            }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener() }
    }

    func currentValues() throws -> [String: StoredValue] {
        let (values, failure) = state.withLock { ($0.values, $0.failure) }
        if let failure { throw AnswerError(description: failure) }
        return values
    }

    func startWatching(_ onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let id = UUID()
        state.withLock { $0.listeners[id] = onChange }
        return { [state] in _ = state.withLock { $0.listeners.removeValue(forKey: id) } }
    }
}

struct FlagWindow: Codable, Equatable, Sendable {
    var width: Int
    var height: Int
}

final class FlagConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "providers" }
    @Setting var darkMode = false
    @Setting(in: 1...100) var limit = 10
    @Setting var name = ""
    @Setting var window = FlagWindow(width: 1, height: 1)
}

/// A config in another namespace whose `FlagConfig.limit` name is also `FlagConfig`'s.
final class OtherFlagConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "other-providers" }
    override class var configName: String { "FlagConfig" }
    @Setting var limit = 0
}
