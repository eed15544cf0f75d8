import Foundation
import Testing

@testable import StorableConfig

/// A declared range or check: an invalid value never becomes the setting's value, from any source.
struct ValidationTests {
    @Test func anInvalidAssignmentIsReportedAndTheSettingKeepsItsValue() {
        ReportedErrors.install()
        let store = InMemoryStore()
        let config = ValidatedConfig(store: store)
        config.volume = 0.3
        config.volume = 2
        #expect(config.volume == 0.3)
        #expect(store.value(forKey: "valid.ValidatedConfig.volume") == .double(0.3))
        let reported = ReportedErrors.mentioning("valid.ValidatedConfig.volume")
        #expect(reported.count == 1)
        #expect(reported.first?.description.contains("0.0...1.0") == true)
        #expect(reported.first?.description.contains("2") == true)
    }

    @Test(arguments: [StoreKind.memory, .jsonFile])
    func aLiveValueOfTheWrongTypeOrOutOfRangeKeepsTheLastGoodValueAndIsReported(kind: StoreKind) throws {
        ReportedErrors.install()
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let config = LiveValidatedConfig(store: store)
        config.volume = 0.5
        let seen = Locked<[Double]>([])
        let token = config.$volume.observe { value in seen.withLock { $0.append(value) } }
        let key = "valid.LiveValidatedConfig.volume"
        for (text, shown) in [("5", "5"), (#""loud""#, "loud")] {
            // Another process (or a person) writes the value; this process reloads.
            switch kind {
            case .jsonFile: try Data(#"{"\#(key)": \#(text)}"#.utf8).write(to: fixture.fileURL)
            default: try store.setValue(try StoredValue(jsonText: text), forKey: key)
            }
            try config.reload()
            #expect(config.volume == 0.5)
            #expect(config.$volume.isSet)
            #expect(seen.withLock { $0 }.isEmpty)
            let reported = ReportedErrors.mentioning("'\(key)'").filter { $0.description.contains(shown) }
            #expect(reported.contains { $0.description.contains("keeps its last good value") })
        }
        // Only a config created over the mistake reads the default.
        #expect(LiveValidatedConfig(store: store).volume == 0.8)
        token.cancel()
    }

    @Test func setThrowsTheReasonAndChangesNothing() throws {
        let config = ValidatedConfig(store: InMemoryStore())
        #expect(
            throws: StorableConfigError.invalidValue(
                key: "valid.ValidatedConfig.userName", value: "\"\"", reason: "a name is needed")
        ) {
            try config.$userName.set("")
        }
        #expect(config.userName == "guest")
        try config.$volume.set(1)
        #expect(config.volume == 1)
        #expect {
            try config.$volume.assign(parsing: "1.5")
        } throws: { error in
            guard case .invalidValue(_, _, let reason) = error as? StorableConfigError else { return false }
            return reason.contains("range")
        }
    }

    @Test func anInvalidStoredValueReadsAsTheDefaultIsReportedAndIsLeftInTheStore() {
        ReportedErrors.install()
        let store = InMemoryStore(["valid.HandEditedConfig.retries": .int(99)])
        let config = HandEditedConfig(store: store)
        #expect(config.retries == 3)
        #expect(store.value(forKey: "valid.HandEditedConfig.retries") == .int(99))
        #expect(ReportedErrors.mentioning("valid.HandEditedConfig.retries").count == 1)
    }

    @Test func anInvalidValueUnderAnEarlierKeyIsNotMoved() {
        ReportedErrors.install()
        let store = InMemoryStore(["valid.MovedValidatedConfig.oldLimit": .int(-4)])
        let config = MovedValidatedConfig(store: store)
        #expect(config.limit == 10)
        #expect(store.value(forKey: "valid.MovedValidatedConfig.oldLimit") == .int(-4))
        #expect(store.value(forKey: "valid.MovedValidatedConfig.limit") == nil)
    }

    @Test func aMigrationCannotStoreAnInvalidValueAndAnImportCannotEither() {
        ReportedErrors.install()
        let store = InMemoryStore()
        _ = InvalidMigrationConfig(store: store)
        #expect(ReportedErrors.mentioning("InvalidMigrationConfig").count == 1)
        #expect(store.value(forKey: "valid.InvalidMigrationConfig.level") == nil)
        let config = ValidatedConfig(store: InMemoryStore())
        let document = ConfigDocument(configs: [
            "ValidatedConfig": .init(namespace: "valid", schemaVersion: 0, settings: ["volume": .double(3)])
        ])
        #expect(throws: ConfigDocumentError.self) { try document.apply(to: [config]) }
    }

    @Test func aDefaultThatFailsItsOwnCheckStopsTheProgramNamingClassAndProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = BadDefaultConfig(store: InMemoryStore())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("BadDefaultConfig.level"))
        #expect(message.contains("range"))
    }
}

final class ValidatedConfig: StorableConfig {
    override class var namespace: String { "valid" }
    @Setting(in: 0...1) var volume = 0.8
    @Setting(validate: { $0.isEmpty ? "a name is needed" : nil }) var userName = "guest"
}

final class LiveValidatedConfig: StorableConfig {
    override class var namespace: String { "valid" }
    @Setting(in: 0...1) var volume = 0.8
}

final class HandEditedConfig: StorableConfig {
    override class var namespace: String { "valid" }
    @Setting(in: 0...10) var retries = 3
}

final class MovedValidatedConfig: StorableConfig {
    override class var namespace: String { "valid" }
    @Setting(previousNames: ["oldLimit"], in: 1...100) var limit = 10
}

final class InvalidMigrationConfig: StorableConfig {
    override class var namespace: String { "valid" }
    @Setting(in: 0...5) var level = 1
    override class var migrations: [ConfigMigration] {
        [ConfigMigration(to: 1) { values in try values.setValue(9, for: "level") }]
    }
}

final class BadDefaultConfig: StorableConfig {
    override class var namespace: String { "valid" }
    @Setting(in: 0...5) var level = 7
}
