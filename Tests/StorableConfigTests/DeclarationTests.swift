import Foundation
import Testing

@testable import StorableConfig

/// A mistake in a subclass's declarations stops the program at first use, naming the class and property.
struct DeclarationTests {
    @Test func twoSettingsWithOneKeyStopTheProgramNamingClassAndProperty() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ShadowingConfig(store: InMemoryStore())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ShadowingConfig.token"))
        #expect(message.contains("ns.ShadowingConfig.token"))
        #expect(message.contains("ShadowedBase"))
    }

    @Test func aTypeThatCannotBeStoredStopsTheProgramNamingClassAndProperty() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = UnstorableConfig(store: InMemoryStore())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("UnstorableConfig.broken"))
        #expect(message.contains("Unencodable"))
    }

    @Test func aCustomMirrorThatHidesTheSettingsStopsTheProgram() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MirroringConfig(store: InMemoryStore())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("MirroringConfig"))
        #expect(message.contains("CustomReflectable"))
    }

    @Test func theSchemaReportsTheDeclarationErrorWithoutStopping() throws {
        let setting = Setting(wrappedValue: Unencodable())
        #expect {
            try ConfigSchema.schema(
                for: UnstorableConfig.self,
                settings: [
                    ReflectedSetting(label: "broken", declaringType: UnstorableConfig.self, setting: setting)
                ])
        } throws: { error in
            guard case .invalidDeclaration(let className, let property, let reason) = error as? StorableConfigError
            else { return false }
            return className == "UnstorableConfig" && property == "broken" && reason.contains("Unencodable")
        }
    }
}

/// A type whose encoding always throws.
struct Unencodable: Codable, Sendable {
    init() {}
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "never encodes"))
    }
}

final class UnstorableConfig: StorableConfig {
    @Setting var fine = 1
    @Setting var broken = Unencodable()
}

final class MirroringConfig: StorableConfig, CustomReflectable {
    @Setting var hidden = 1
    var customMirror: Mirror { Mirror(self, children: []) }
}

final class ShadowingConfig: ShadowedBase {
    @Setting var token = "mine"
}
