import Foundation
import StorableConfig

/// A config whose version 1 stored `fadeDuration` as whole milliseconds and a renamed `volume` as `level`;
/// version 2 stores seconds, and records in `migratedBy` the process whose migration was written, so that a
/// second migration of one store shows (two processes each reading their own id).
final class RaceConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting var fadeDuration = 0.25
    @Setting(previousNames: ["level"]) var volume = 0.5
    @Setting var migratedBy: Int32 = 0

    override class var migrations: [ConfigMigration] {
        [
            ConfigMigration(to: 2, "fade duration in seconds") { values in
                if let milliseconds = try values.value("fadeDuration", as: Int.self) {
                    try values.setValue(Double(milliseconds) / 1000, for: "fadeDuration")
                }
                try values.setValue(ProcessInfo.processInfo.processIdentifier, for: "migratedBy")
            }
        ]
    }
}

/// A config whose secret setting a settings file may hold in plain form, from before secret stores: the processes
/// that create it at once move the value to the secret store once.
final class SecretRaceConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "stress" }
    @Setting(secret: true) var token = ""
}
