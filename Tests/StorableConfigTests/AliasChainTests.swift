import Foundation
import StorableConfig
import Testing

/// Three generations of one setting: each renames the key of the one before.
final class ChainV1: StorableConfig, @unchecked Sendable {
    @Setting(key: "chain.a") var volume = 0
}

final class ChainV2: StorableConfig, @unchecked Sendable {
    @Setting(key: "chain.b", previousKeys: ["chain.a"]) var volume = 0
}

final class ChainV3: StorableConfig, @unchecked Sendable {
    @Setting(key: "chain.c", previousKeys: ["chain.b"]) var volume = 0
}

final class ImportOld: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "imp" }
    @Setting var s1 = 0
    @Setting var s2 = 0
    @Setting var s3 = 0
    @Setting var s4 = 0
    @Setting var s5 = 0
    @Setting var s6 = 0
}

final class ImportNew: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "imp" }
    override class var previousConfigNames: [String] { ["ImportOld"] }
    @Setting var s1 = 0
    @Setting var s2 = 0
    @Setting var s3 = 0
    @Setting var s4 = 0
    @Setting var s5 = 0
    @Setting var s6 = 0
}

/// Found by a review of the aliases: chains of renames, exports and imports of an old class beside its
/// successor.
@Suite(.serialized)
struct AliasChainTests {
    @Test func aConfigOfTheFirstGenerationWritesWhereTheLatestReads() {
        let store = InMemoryStore()
        let v3 = ChainV3(store: store)
        let v2 = ChainV2(store: store)
        let v1 = ChainV1(store: store)
        v1.volume = 5
        #expect(v3.volume == 5)
        #expect(v2.volume == 5)
        v3.volume = 6
        #expect(v1.volume == 6)
        #expect(v2.volume == 6)
        #expect(store.value(forKey: "chain.c") == .int(6))
        withExtendedLifetime((v1, v2, v3)) {}
    }

    @Test func theMiddleGenerationMovesItsEarlierValueWhereItReads() {
        let store = InMemoryStore()
        store.setValue(.int(7), forKey: "chain.a")
        let v3 = ChainV3(store: store)
        let v2 = ChainV2(store: store)
        #expect(v2.volume == 7)
        #expect(v3.volume == 7)
        #expect(store.value(forKey: "chain.c") == .int(7))
        #expect(store.value(forKey: "chain.a") == nil)
        withExtendedLifetime((v2, v3)) {}
    }

    /// Until 2026-11-28 the aliases went with the last config on the storage: an old class created after every
    /// config of the new one went wrote its old key again, where the new class never reads.
    @Test func anOldClassCreatedAfterTheNewOneWentWritesWhereTheNewOneReads() {
        let store = InMemoryStore()
        store.setValue(.int(7), forKey: "chain.a")
        do {
            let v2 = ChainV2(store: store)
            #expect(v2.volume == 7)
        }
        let v1 = ChainV1(store: store)
        #expect(v1.volume == 7)
        v1.volume = 8
        #expect(store.value(forKey: "chain.b") == .int(8))
        #expect(store.value(forKey: "chain.a") == nil)
        #expect(ChainV2(store: store).volume == 8)
        withExtendedLifetime(v1) {}
    }

    @Test func anExportOfTheOldConfigHoldsWhatItReads() throws {
        let store = InMemoryStore()
        store.setValue(.int(3), forKey: "live.LivePrefs.volume")
        let new = LivePreferences(store: store)
        let old = LivePrefs(store: store)
        #expect(old.volume == 3)
        let exported = try ConfigDocument(exporting: [old]).configs["LivePrefs"]?.settings["volume"]
        #expect(exported == StoredValue.int(3))
        withExtendedLifetime(new) {}
    }

    @Test func replacingFromADocumentOfBothClassesKeepsTheNewClassesValues() throws {
        for _ in 0..<5 {
            let store = InMemoryStore()
            for index in 1...6 { store.setValue(.int(Int64(index)), forKey: "imp.ImportOld.s\(index)") }
            let new = ImportNew(store: store)
            let old = ImportOld(store: store)
            let document = try ConfigDocument(exporting: [old, new])
            try document.apply(to: [old, new], mode: .replace)
            let expected: [Int] = [1, 2, 3, 4, 5, 6]
            let newValues: [Int] = [new.s1, new.s2, new.s3, new.s4, new.s5, new.s6]
            let oldValues: [Int] = [old.s1, old.s2, old.s3, old.s4, old.s5, old.s6]
            #expect(newValues == expected)
            #expect(oldValues == expected)
            withExtendedLifetime((new, old)) {}
        }
    }
}
