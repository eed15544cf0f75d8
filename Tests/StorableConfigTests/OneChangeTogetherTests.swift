import Foundation
import Testing

@testable import StorableConfig

/// A certificate and its key: two settings that must never be seen from two versions.
private final class PairConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "together" }
    @Setting var certificate = "v0"
    @Setting var privateKey = "v0"
}

/// What observers of one setting read of the other when they are told: every setting of one change has taken its
/// value before any observer hears of it, whichever way the change arrives.
struct OneChangeTogetherTests {
    /// Observes both settings of `config` and records, at each call, the pair as the observer reads it.
    private func recordPairs(of config: PairConfig) -> (Locked<[String]>, [ObservationToken]) {
        let seen = Locked<[String]>([])
        let record: @Sendable (String) -> Void = { _ in
            seen.withLock { $0.append("\(config.certificate)/\(config.privateKey)") }
        }
        return (seen, [config.$certificate.observe(record), config.$privateKey.observe(record)])
    }

    @Test func anotherConfigsBatchReachesObserversWithBothValuesTaken() {
        let store = InMemoryStore()
        let writer = PairConfig(store: store)
        let reader = PairConfig(store: store)
        let (seen, tokens) = recordPairs(of: reader)
        writer.batch {
            writer.certificate = "v1"
            writer.privateKey = "v1"
        }
        withExtendedLifetime(tokens) {}
        #expect(seen.withLock { $0 } == ["v1/v1", "v1/v1"])
    }

    @Test func aReloadThatFindsBothChangedReachesObserversWithBothValuesTaken() throws {
        let store = InMemoryStore()
        let config = PairConfig(store: store)
        let (seen, tokens) = recordPairs(of: config)
        // Written behind the config's back (as another process would), then read again.
        store.setValues(
            [config.$certificate.key: .string("v2"), config.$privateKey.key: .string("v2")],
            removingValuesForKeys: [])
        try config.reload()
        withExtendedLifetime(tokens) {}
        #expect(seen.withLock { $0 } == ["v2/v2", "v2/v2"])
    }

    @Test func aResetReachesObserversWithEverySettingAtItsDefault() {
        let store = InMemoryStore()
        let config = PairConfig(store: store)
        config.batch {
            config.certificate = "v3"
            config.privateKey = "v3"
        }
        let (seen, tokens) = recordPairs(of: config)
        config.reset()
        withExtendedLifetime(tokens) {}
        #expect(seen.withLock { $0 } == ["v0/v0", "v0/v0"])
    }

    @Test func aBatchShowsItsValuesAndWhetherTheyAreStoredAtOnce() {
        let store = InMemoryStore()
        let config = PairConfig(store: store)
        config.batch {
            config.certificate = "v4"
            #expect(config.certificate == "v4")
            #expect(config.$certificate.isSet)
            #expect(store.value(forKey: config.$certificate.key) == nil)
            config.$certificate.reset()
            #expect(config.certificate == "v0")
            #expect(!config.$certificate.isSet)
        }
        #expect(config.certificate == "v0")
        #expect(!config.$certificate.isSet)
    }
}
