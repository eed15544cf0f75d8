import Foundation
import Testing

@testable import StorableConfig

/// A secret's value appears in no description, report, export or demo output; reading it gives the value.
struct SecretTests {
    static let planted = "PLANTED-SECRET-7f3a"

    @Test func noDescriptionDumpOrChangeShowsTheSecret() throws {
        let config = SecretConfig(store: InMemoryStore())
        let changes = Locked<[String]>([])
        let token = config.observe { change in changes.withLock { $0.append(change.description) } }
        config.apiToken = Self.planted
        #expect(config.apiToken == Self.planted)
        #expect(config.$apiToken.valueText == Self.planted)
        var dumped = ""
        dump(config, to: &dumped)
        dump(config.$apiToken, to: &dumped)
        let texts =
            [
                config.description, config.debugDescription, config.$apiToken.description,
                config.$apiToken.debugDescription, String(reflecting: config.$apiToken), dumped,
            ] + changes.withLock { $0 }
        for text in texts { #expect(!text.contains(Self.planted), "\(text)") }
        #expect(config.description.contains("apiToken: <redacted>"))
        #expect(changes.withLock { $0 } == ["apiToken: <redacted> → <redacted>"])
        #expect(dumped.contains("<redacted>"))
        token.cancel()
    }

    @Test func noReportedErrorShowsTheSecret() throws {
        ReportedErrors.install()
        let store = InMemoryStore([
            "secret.SecretConfig.pin": .string(Self.planted), "secret.SecretConfig.apiToken": .int(7),
        ])
        let config = SecretConfig(store: store)
        config.apiToken = "short-\(Self.planted)"
        #expect(throws: StorableConfigError.self) { try config.$pin.assign(parsing: Self.planted) }
        do {
            try config.$apiToken.set("x")
        } catch {
            #expect(!"\(error)".contains("x\""))
        }
        let reported = ReportedErrors.mentioning("secret.SecretConfig")
        #expect(reported.count == 2)
        for error in reported {
            #expect(!error.description.contains(Self.planted), "\(error)")
            #expect(!"\(error)".contains(Self.planted))
        }
    }

    @Test func neitherAMoveNorAnImportNamesASecretOfTheWrongType() throws {
        ReportedErrors.install()
        let store = InMemoryStore(["secret.MovedSecretConfig.oldToken": .int(4242)])
        let config = MovedSecretConfig(store: store)
        let reported = ReportedErrors.mentioning("secret.MovedSecretConfig.oldToken")
        #expect(reported.count == 1)
        #expect(!"\(reported)".contains("4242"))
        let document = ConfigDocument(configs: [
            "MovedSecretConfig": .init(namespace: "secret", schemaVersion: 0, settings: ["token": .int(4242)])
        ])
        #expect {
            try document.apply(to: [config])
        } throws: { error in
            "\(error)".contains("MovedSecretConfig.token") && !"\(error)".contains("4242")
        }
    }

    @Test func anExportLeavesSecretsOutSaysSoAndAnImportLeavesThemAlone() throws {
        let store = InMemoryStore()
        let config = SecretConfig(store: store)
        config.apiToken = Self.planted
        config.userName = "nkysu1"
        let text = try ConfigDocument(exporting: [config]).jsonText()
        #expect(!text.contains(Self.planted))
        #expect(text.contains("\"secretsOmitted\""))
        try ConfigDocument(jsonText: text).apply(to: [config], mode: .replace)
        #expect(config.apiToken == Self.planted)
        #expect(try ConfigDocument(exporting: [config], includingSecrets: true).jsonText().contains(Self.planted))
    }

    @Test func theDemoShowsTheSecretOnlyWhenAskedForByName() throws {
        let home = DemoHome()
        let set = try home.run("set", "twitter.apiToken", Self.planted)
        #expect(set.status == 0)
        let outputs = try [
            set, home.run("list"), home.run("list", "--json"), home.run("export"), home.run(),
            home.run("set", "twitter.apiToken", "--", "-\(Self.planted)"), home.run("get", "twitter.apiToken", "x"),
        ]
        for output in outputs {
            #expect(!output.output.contains(Self.planted), "\(output.output)")
            #expect(!output.errorOutput.contains(Self.planted), "\(output.errorOutput)")
        }
        #expect(try home.run("get", "twitter.apiToken").output == "-\(Self.planted)\n")
        #expect(try home.run("export", "--include-secrets").output.contains(Self.planted))
    }
}

final class SecretConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "secret" }
    @Setting var userName = ""
    @Setting(validate: { $0.count < 3 ? "too short" : nil }, secret: true) var apiToken = "unset"
    @Setting(secret: true) var pin = 0
}

final class MovedSecretConfig: StorableConfig {
    override class var namespace: String { "secret" }
    @Setting(previousNames: ["oldToken"], secret: true) var token = ""
}
