import Foundation
import Testing

@testable import StorableConfig

/// Overrides from the environment and launch arguments: argument > environment > stored > default, never
/// written, invalid ones reported and skipped.
struct OverrideTests {
    @Test func namesFollowSwiftConfigurationsEncoders() {
        // Vectors from apple/swift-configuration 1.4.0's own tests of EnvironmentKeyEncoder and CLIKeyEncoder.
        #expect(OverrideNames.environment(["timeout"]) == "TIMEOUT")
        #expect(OverrideNames.environment(["http.timeout"]) == "HTTP_TIMEOUT")
        #expect(OverrideNames.environment(["http.serverTimeout"]) == "HTTP_SERVER_TIMEOUT")
        #expect(OverrideNames.environment(["pollIntervalSeconds"]) == "POLL_INTERVAL_SECONDS")
        #expect(OverrideNames.argument(["app", "database", "host"]) == "--app-database-host")
        #expect(OverrideNames.argument(["serverHTTP"]) == "--server-http")
        #expect(OverrideNames.argument(["http2MaxStreams"]) == "--http2max-streams")
        #expect(OverrideNames.argument(["httpAPITimeout"]) == "--http-apitimeout")
        #expect(OverrideNames.argument(["Database", "HOST"]) == "--database-host")
        #expect(OverrideNames.argument(["server1", "port8080"]) == "--server1-port8080")
        // The examples.
        let overrides = ConfigOverrides(environment: [:], arguments: nil, prefix: "DEMO_")
        #expect(overrides.variableName(configName: "AppConfig", name: "userName") == "DEMO_APP_CONFIG_USER_NAME")
        #expect(ConfigOverrides.argumentName(configName: "AppConfig", name: "userName") == "--app-config-user-name")
    }

    @Test func anArgumentWinsOverTheEnvironmentWhichWinsOverTheStoreAndNothingIsWritten() {
        let store = InMemoryStore([
            "ovr.OverriddenConfig.userName": .string("stored"), "ovr.OverriddenConfig.port": .int(81),
            "ovr.OverriddenConfig.host": .string("stored-host"),
        ])
        let config = OverriddenConfig(
            store: store,
            environment: ["OVERRIDDEN_CONFIG_USER_NAME": "env", "OVERRIDDEN_CONFIG_PORT": "82"],
            arguments: ["program", "--overridden-config-port", "83", "--overridden-config-verbose", "positional"])
        #expect(config.userName == "env")
        #expect(config.$userName.layer == .environment)
        #expect(config.port == 83)
        #expect(config.$port.layer == .argument)
        #expect(config.verbose == true)
        #expect(config.host == "stored-host")
        #expect(config.$host.layer == .stored)
        #expect(config.$limit.layer == .default)
        #expect(config.$port.isOverridden && !config.$host.isOverridden)
        #expect(store.value(forKey: "ovr.OverriddenConfig.userName") == .string("stored"))
        #expect(store.value(forKey: "ovr.OverriddenConfig.verbose") == nil)
        // A later reload keeps the override.
        try? config.reload()
        #expect(config.port == 83)
    }

    /// An assignment to an overridden setting is stored, and the override keeps being read: also by code that the
    /// store runs inside the write, where a setting otherwise reads the value being written.
    @Test func anOverriddenSettingReadsItsOverrideDuringItsOwnWrite() {
        ReportedErrors.install()
        let store = CallbackStore()
        let config = OverriddenConfig(
            store: store, environment: ["OVERRIDDEN_CONFIG_PORT": "82"], arguments: ["program"])
        let readInside = Locked<Int?>(nil)
        let port = config.$port
        store.afterChange { key in
            if key == port.key { readInside.withLock { $0 = port.wrappedValue } }
        }
        config.port = 99
        store.afterChange(nil)
        #expect(readInside.withLock { $0 } == 82)
        #expect(config.port == 82)
        #expect(store.values.value(forKey: config.$port.key) == .int(99))
    }

    @Test func anInvalidOverrideIsReportedAndTheNextSourceIsRead() throws {
        ReportedErrors.install()
        let config = OverriddenConfig(
            store: InMemoryStore(["ovr.OverriddenConfig.port": .int(81)]),
            environment: ["OVERRIDDEN_CONFIG_PORT": "82", "OVERRIDDEN_CONFIG_LIMIT": "500"],
            arguments: ["program", "--overridden-config-port=eighty"])
        #expect(config.port == 82)
        #expect(config.limit == 10)
        #expect(config.$limit.layer == .default)
        let problems = config.overrideProblems
        #expect(problems.count == 2)
        let argumentProblem = problems.first { "\($0)".contains("launch argument --overridden-config-port") }
        #expect(argumentProblem.map { "\($0)".contains("Int") } == true)
        #expect(problems.contains { "\($0)".contains("OVERRIDDEN_CONFIG_LIMIT") && "\($0)".contains("1...100") })
        #expect(ReportedErrors.mentioning("OVERRIDDEN_CONFIG_LIMIT").count == 1)
        #expect(throws: InvalidOverrides.self) { try StorableConfig.checkOverrides(of: [config]) }
        let valid = OverriddenConfig(store: InMemoryStore(), environment: [:], arguments: ["program"])
        try StorableConfig.checkOverrides(of: [valid])
    }

    @Test func anAssignmentToAnOverriddenSettingIsStoredReportedOnceAndTheOverrideKeepsBeingRead() {
        ReportedErrors.install()
        let store = InMemoryStore()
        let config = OverriddenConfig(
            store: store, environment: ["OVERRIDDEN_CONFIG_HOST": "env-host"], arguments: ["program"])
        config.host = "assigned"
        config.host = "assigned again"
        #expect(config.host == "env-host")
        #expect(store.value(forKey: "ovr.OverriddenConfig.host") == .string("assigned again"))
        #expect(config.$host.isSet)
        #expect(ReportedErrors.mentioning("ovr.OverriddenConfig.host").count == 1)
        // Without the override, the stored value is read.
        #expect(OverriddenConfig(store: store, environment: [:], arguments: ["program"]).host == "assigned again")
    }

    @Test func argumentsThatNameNoSettingAreLeftForTheProgram() {
        let config = OverriddenConfig(store: InMemoryStore(), environment: [:], arguments: ["program"])
        let remaining = ConfigOverrides.removingSettingArguments(
            from: [
                "--overridden-config-port", "90", "get", "--overridden-config-verbose", "--json",
                "--overridden-config-host=h", "--other", "value",
            ], of: [config])
        #expect(remaining == ["get", "--json", "--other", "value"])
    }

    /// Found by the `assign-parsing` fuzz target: `--name=value` was matched by characters, so a value that
    /// starts with a combining mark (which makes one character with the `=`) was neither read nor reported.
    @Test func aValueAfterTheEqualsSignIsReadWhateverItStartsWith() {
        let value = "\u{301}accent first"
        let config = OverriddenConfig(
            store: InMemoryStore(), environment: [:], arguments: ["program", "--overridden-config-user-name=" + value])
        #expect(Array(config.userName.unicodeScalars) == Array(value.unicodeScalars))
        #expect(config.$userName.layer == .argument)
        let remaining = ConfigOverrides.removingSettingArguments(
            from: ["--overridden-config-user-name=" + value, "get"], of: [config])
        #expect(remaining == ["get"])
    }

    @Test func aSecretOverrideIsRedactedInTheReportAndInProblems() {
        ReportedErrors.install()
        let config = OverriddenConfig(
            store: InMemoryStore(),
            environment: ["OVERRIDDEN_CONFIG_TOKEN": "PLANTED-OVERRIDE", "OVERRIDDEN_CONFIG_PIN": "PLANTED-PIN"],
            arguments: ["program"])
        #expect(config.token == "PLANTED-OVERRIDE")
        #expect(config.overrideReport.contains("OverriddenConfig.token = <redacted>"))
        #expect(!config.overrideReport.contains("PLANTED"))
        #expect(config.overrideProblems.count == 1)
        #expect(!"\(config.overrideProblems)".contains("PLANTED"))
    }
}

final class OverriddenConfig: StorableConfig {
    override class var namespace: String { "ovr" }
    override class var overrides: ConfigOverrides { OverriddenConfig.current.withLock { $0 } }
    @Setting var userName = ""
    @Setting var port = 80
    @Setting var host = "localhost"
    @Setting var verbose = false
    @Setting(in: 1...100) var limit = 10
    @Setting(secret: true) var token = ""
    @Setting(secret: true) var pin = 0

    /// The overrides for the next instance; tests that make one run one at a time through `init`.
    static let current = Locked(ConfigOverrides.none)
    private static let creation = NSLock()

    convenience init(store: any ConfigStore, environment: [String: String], arguments: [String]) {
        Self.creation.lock()
        defer { Self.creation.unlock() }
        Self.current.withLock { $0 = ConfigOverrides(environment: environment, arguments: arguments) }
        self.init(store: store)
    }
}
