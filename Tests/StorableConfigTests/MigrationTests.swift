import Foundation
import StorableConfig
import Testing

/// Versioned migrations: a type or unit change, run once per store, all or nothing, never backwards.
struct MigrationTests {
    static let fadeKey = "mig.PlayerConfig.fadeDuration"
    static let versionKey = "mig.PlayerConfig.@schemaVersion"

    @Test(arguments: StoreKind.allCases)
    func anIntOfMillisecondsBecomesADoubleOfSecondsOncePerStore(kind: StoreKind) throws {
        let fixture = StoreFixture(kind)
        do {
            let store = fixture.open()
            try store.setValue(.int(1500), forKey: Self.fadeKey)
            try store.setValue(.string("kept"), forKey: "mig.Other.value")
        }
        do {
            let config = PlayerConfig(store: fixture.open())
            #expect(config.fadeDuration == 1.5)
        }
        let store = fixture.open()
        #expect(try store.value(forKey: Self.fadeKey) == .double(1.5))
        #expect(try store.value(forKey: Self.versionKey) == .int(2))
        #expect(try store.value(forKey: "mig.Other.value") == .string("kept"))
        // The next start finds version 2 and runs nothing: 1.5 is not divided again.
        let again = PlayerConfig(store: store)
        #expect(again.fadeDuration == 1.5)
    }

    @Test func aStoreWithNothingStoredIsStampedAndReadsDefaults() {
        let store = InMemoryStore()
        let config = PlayerConfig(store: store)
        #expect(config.fadeDuration == 0.25)
        #expect(config.$fadeDuration.isSet == false)
        #expect(store.value(forKey: Self.versionKey) == .int(2))
    }

    @Test func aFailingStepChangesNothingAndIsReportedWithConfigStepAndKey() {
        ReportedErrors.install()
        let store = InMemoryStore([
            "mig.FailingConfig.limit": .int(10), "mig.FailingConfig.mode": .string("not a number"),
        ])
        let config = FailingConfig(store: store)
        // Step 2 doubled the limit in memory, step 3 failed: nothing was written, not even step 2's change.
        #expect(config.limit == 10)
        #expect(store.value(forKey: "mig.FailingConfig.limit") == .int(10))
        #expect(store.value(forKey: "mig.FailingConfig.@schemaVersion") == nil)
        let reported = ReportedErrors.mentioning("FailingConfig")
        #expect(reported.count == 1)
        guard case .migrationFailed(let configName, let step, let key, _)? = reported.first else {
            Issue.record("expected migrationFailed, got \(reported)")
            return
        }
        #expect(configName == "FailingConfig")
        #expect(step == "mode as a number")
        #expect(key == "mig.FailingConfig.mode")
    }

    @Test func aStoreWrittenByANewerVersionIsReadAndNeitherMigratedNorRewritten() {
        ReportedErrors.install()
        let store = InMemoryStore([
            "mig.DowngradedConfig.@schemaVersion": .int(5), "mig.DowngradedConfig.fadeDuration": .double(2.5),
            "mig.DowngradedConfig.introducedLater": .string("a later setting"),
        ])
        let config = DowngradedConfig(store: store)
        #expect(config.fadeDuration == 2.5)
        #expect(store.value(forKey: "mig.DowngradedConfig.@schemaVersion") == .int(5))
        #expect(store.value(forKey: "mig.DowngradedConfig.introducedLater") == .string("a later setting"))
        #expect(
            ReportedErrors.mentioning("DowngradedConfig")
                == [.newerSchemaVersion(config: "DowngradedConfig", stored: 5, known: 2)])
    }

    @Test func aStepCannotStoreAValueOfTheWrongTypeForASetting() {
        ReportedErrors.install()
        let store = InMemoryStore()
        _ = WrongTypeMigrationConfig(store: store)
        let reported = ReportedErrors.mentioning("WrongTypeMigrationConfig")
        #expect(reported.count == 1)
        #expect(reported.first?.key == "mig.WrongTypeMigrationConfig.count")
        #expect(reported.first?.description.contains("Int") == true)
        #expect(store.value(forKey: "mig.WrongTypeMigrationConfig.count") == nil)
    }

    @Test func twoProcessesStartingTheNewVersionOnOneFileMigrateItOnceAndLoseNothing() throws {
        let rounds = isRunningUnderThreadSanitizer ? 3 : 15
        let processes = 4
        var doubleMigrations = 0
        var lost = 0
        for _ in 0..<rounds {
            let directory = TemporaryDirectory()
            let url = directory.file("race.json")
            do {
                let store = try JSONFileStore(url: url)
                try store.setValues(
                    [
                        "stress.RaceConfig.fadeDuration": .int(1500), "stress.RaceConfig.level": .double(0.9),
                        "stress.Untouched.value": .int(7),
                    ],
                    removingValuesForKeys: [])
            }
            let go = directory.file("go")
            let pipes = (0..<processes).map { _ in Pipe() }
            let children = try pipes.map { pipe in
                try launchProduct("storable-config-stress", ["open-race-config", url.path, go.path], output: pipe)
            }
            // Every child has opened the file and waits; they go at once.
            usleep(isRunningUnderThreadSanitizer ? 1_000_000 : 300_000)
            _ = FileManager.default.createFile(atPath: go.path, contents: nil)
            var migrations = 0
            for (child, pipe) in zip(children, pipes) {
                let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                child.waitUntilExit()
                #expect(child.terminationStatus == 0)
                if output.hasPrefix("migrated ") { migrations += 1 }
            }
            if migrations != 1 { doubleMigrations += 1 }
            let file = try jsonObject(at: url)
            let fade = file["stress.RaceConfig.fadeDuration"] as? Double
            let volume = file["stress.RaceConfig.volume"] as? Double
            if fade != 1.5 || volume != 0.9 || file["stress.Untouched.value"] as? Int != 7
                || file["stress.RaceConfig.level"] != nil
            {
                lost += 1
            }
        }
        #expect(doubleMigrations == 0)
        #expect(lost == 0)
    }
}

final class PlayerConfig: StorableConfig {
    override class var namespace: String { "mig" }
    @Setting var fadeDuration = 0.25

    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 2, "fade duration in seconds") { values in
                if let milliseconds = try values.value("fadeDuration", as: Int.self) {
                    try values.setValue(Double(milliseconds) / 1000, for: "fadeDuration")
                }
            }
        ]
    }
}

final class FailingConfig: StorableConfig {
    override class var namespace: String { "mig" }
    @Setting var limit = 1

    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 3, "mode as a number") { values in
                _ = try values.value("mode", as: Int.self)
            },
            ConfigMigration(to: 2, "double the limit") { values in
                try values.setValue((try values.value("limit", as: Int.self) ?? 1) * 2, for: "limit")
            },
        ]
    }
}

final class DowngradedConfig: StorableConfig {
    override class var namespace: String { "mig" }
    @Setting var fadeDuration = 0.25
    override class var migrations: [ConfigMigration] {
        [ConfigMigration(to: 2) { values in values.removeValue(for: "fadeDuration") }]
    }
}

final class WrongTypeMigrationConfig: StorableConfig {
    override class var namespace: String { "mig" }
    @Setting var count = 0
    override class var migrations: [ConfigMigration] {
        [ConfigMigration(to: 1) { values in try values.setValue("three", for: "count") }]
    }
}
