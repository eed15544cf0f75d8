import Foundation
import StorableConfig
import Testing

/// Two classes that read one key, by its explicit key.
final class SharedKeyReader: StorableConfig, @unchecked Sendable {
    @Setting(key: "receivers.shared") var shared = 0
    @Setting var own = 0
}

final class SharedKeyOtherReader: StorableConfig, @unchecked Sendable {
    @Setting var first = ""
    @Setting(key: "receivers.shared") var shared = 0
}

/// Who hears of a write: every other config that reads the key, whenever it came, and nobody on another storage.
/// A write by a config alone of its class, of a key no other class reads, skips the search for readers; these
/// tests hold that skip to what it must not skip.
@Suite(.serialized)
struct ReceiverTests {
    @Test func aClassThatComesLaterHearsOfAKeyTheFirstClassWroteAlone() {
        let store = InMemoryStore()
        let first = SharedKeyReader(store: store)
        first.shared = 1
        first.own = 1
        let later = SharedKeyOtherReader(store: store)
        #expect(later.shared == 1)
        first.shared = 2
        #expect(later.shared == 2)
        later.shared = 3
        #expect(first.shared == 3)
        // A key only one class reads still reaches nobody else, and is still written.
        first.own = 4
        #expect(store.value(forKey: first.$own.key) == .int(4))
        withExtendedLifetime((first, later)) {}
    }

    @Test func aSecondConfigOfTheClassHearsOfTheFirstOnesWrites() {
        let store = InMemoryStore()
        let first = SharedKeyReader(store: store)
        first.own = 1
        let second = SharedKeyReader(store: store)
        first.own = 2
        #expect(second.own == 2)
        second.own = 3
        #expect(first.own == 3)
        withExtendedLifetime(second) {}
        // Alone again, it writes on.
        first.own = 4
        #expect(store.value(forKey: first.$own.key) == .int(4))
        withExtendedLifetime(first) {}
    }

    @Test func classesThatMetOnAStorageStillHearOfEachOtherAfterEveryConfigWent() {
        let store = InMemoryStore()
        do {
            let first = SharedKeyReader(store: store)
            let other = SharedKeyOtherReader(store: store)
            first.shared = 1
            #expect(other.shared == 1)
        }
        // Every config went; the storage stays, and with it what its hub knows of the two classes.
        let first = SharedKeyReader(store: store)
        let other = SharedKeyOtherReader(store: store)
        first.shared = 2
        #expect(other.shared == 2)
        other.shared = 3
        #expect(first.shared == 3)
        withExtendedLifetime((first, other)) {}
    }

    /// A storage that went leaves nothing to the next one, even at its address: the keys that a class of the
    /// first one renamed are not renamed on the next.
    @Test func aNewStorageKeepsNothingOfOneThatWent() {
        for round in 1...200 {
            do {
                let old = InMemoryStore()
                let renaming = ChainV2(store: old)
                renaming.volume = round
                #expect(old.value(forKey: "chain.b") == .int(Int64(round)))
            }
            let store = InMemoryStore()
            let config = ChainV1(store: store)
            config.volume = round
            #expect(store.value(forKey: "chain.a") == .int(Int64(round)), "round \(round)")
            #expect(store.value(forKey: "chain.b") == nil, "round \(round)")
            withExtendedLifetime(config) {}
        }
    }
}
