import Foundation
import StorableConfig
import Testing

@testable import StorableConfigCloud

/// Random operation sequences over three simulated devices: writes, resets, records, uploads, notices late,
/// reordered, doubled and lost, devices offline, clocks that jump, relaunches. Afterwards, with every device
/// online and synchronized, every device holds the same values, and each is the write with the latest stamp:
/// nothing written is lost except to a later write of the same key (or record), nothing deleted comes back.
@Suite("iCloud sync converges")
struct ConvergenceTests {
    static let names = ["A", "B", "C"]
    static let userNameKey = "cloud.test.SyncedSettings.userName"
    static let fontSizeKey = "cloud.test.SyncedSettings.fontSize"
    static let notesKey = "cloud.test.SyncedSettings.notes"

    @Test(arguments: 1...60)
    func randomOperationsOnThreeDevicesConverge(seed: UInt64) throws {
        try Self.runHistory(seed: seed, names: Self.names, planting: false)
    }

    /// As above, with values stamped past the last stamp (Docs/CloudSync.md, "Stamps") put in the cloud now and
    /// then by a device "Z", between the devices' identifiers ("A" and "B" sort before it, "c" after): no device
    /// takes one, and no write is lost to one.
    @Test(arguments: 1...30)
    func randomOperationsWithStampsPastTheLimitMixedInConverge(seed: UInt64) throws {
        try Self.runHistory(seed: seed, names: ["A", "B", "c"], planting: true)
    }

    /// What device "Z" plants: a value of one of the keys, stamped past the limit, that no device must take.
    static func valuePastTheLimit(_ random: inout SplitMix64) -> CloudEntry {
        let stamp = PlantedValues.pastTheLimit[Int(random.next() % 3)]
        switch random.next() % 3 {
        case 0: return PlantedValues.single(userNameKey, .string("poison"), at: stamp)
        case 1: return PlantedValues.single(fontSizeKey, .int(666), at: stamp)
        default:
            return PlantedValues.records(
                notesKey, id: "n1", .dictionary(["id": .string("n1"), "text": .string("poison")]), at: stamp)
        }
    }

    static func runHistory(seed: UInt64, names: [String], planting: Bool) throws {
        var random = SplitMix64(seed: seed)
        let cloud = SimulatedCloud()
        let phones = names.map { Phone($0, on: cloud, at: 1_000_000).launch() }
        var latest = LatestWrites()
        for _ in 0..<80 {
            let phone = phones[Int(random.next() % 3)]
            switch random.next() % (planting ? 12 : 11) {
            case 11: cloud.plant(valuePastTheLimit(&random))
            case 0: phone.config.userName = ["", "ann", "bob", "cy"][Int(random.next() % 4)]
            case 1: phone.config.fontSize = Int(random.next() % 5) + 10
            case 2: phone.config.$userName.reset()
            case 3: phone.config.notes.upsert(Note(id: "n\(random.next() % 4)", text: "t\(random.next() % 3)"))
            case 4: phone.config.notes.delete(id: "n\(random.next() % 4)")
            case 5: cloud.upload(from: phone.name, duplicate: random.next() % 3 == 0)
            case 6:
                let shuffle = random.next() % 2 == 0
                var lose: Set<Int> = []
                var silent: Set<Int> = []
                for index in 0..<4 where random.next() % 4 == 0 { lose.insert(index) }
                for index in 0..<4 where random.next() % 4 == 0 { silent.insert(index) }
                cloud.deliver(to: phone.name, order: shuffle ? { $0.reversed() } : nil, lose: lose, silent: silent)
            case 7: cloud.setOnline(phone.name, random.next() % 2 == 0)
            // Forward by up to a minute, or back by up to an hour (never past 30 days: no tombstone is dropped).
            case 8: phone.clock.advance(Int64(random.next() % 60_000))
            case 9: phone.clock.advance(-Int64(random.next() % 3_600_000))
            default:
                phone.quit()
                phone.launch()
            }
            for phone in phones { try latest.record(phone.local) }
        }
        for name in names { cloud.setOnline(name, true) }
        for _ in 0..<3 {
            for phone in phones { phone.sync.synchronize() }
            cloud.settle(names)
        }
        let expected = latest
        for phone in phones {
            #expect(phone.config.userName == expected.value(userNameKey, default: ""), "device \(phone.name)")
            #expect(phone.config.fontSize == expected.value(fontSizeKey, default: 12), "device \(phone.name)")
            let notes = Dictionary(uniqueKeysWithValues: phone.config.notes.all.map { ($0.id, $0.text) })
            #expect(notes == expected.recordTexts(), "device \(phone.name)")
            #expect(phone.config.userName != "poison" && phone.config.fontSize != 666, "device \(phone.name)")
            #expect(!notes.values.contains("poison"), "device \(phone.name)")
        }
    }
}

/// The latest stamped write of each key and record, as the devices' local stores recorded them.
struct LatestWrites {
    var singles: [String: Stamped] = [:]
    var records: [String: Stamped] = [:]

    mutating func record(_ store: InMemoryStore) throws {
        for key in [ConvergenceTests.userNameKey, ConvergenceTests.fontSizeKey] {
            guard case .string(let text)? = store.value(forKey: SyncEngine.metaKey(key)) else { continue }
            let stamped = Stamped(stamp: try CloudStamp(text: text), value: store.value(forKey: key))
            if singles[key].map({ $0.stamp < stamped.stamp }) ?? true { singles[key] = stamped }
        }
        guard let meta = store.value(forKey: SyncEngine.metaKey(ConvergenceTests.notesKey))?.members else { return }
        let stored = store.value(forKey: ConvergenceTests.notesKey)?.members ?? [:]
        for (id, text) in meta["stamps"]?.members ?? [:] {
            guard case .string(let text) = text else { continue }
            note(id, Stamped(stamp: try CloudStamp(text: text), value: stored[id]))
        }
        for (id, text) in meta["deleted"]?.members ?? [:] {
            guard case .string(let text) = text else { continue }
            note(id, Stamped(stamp: try CloudStamp(text: text), value: nil))
        }
    }

    private mutating func note(_ id: String, _ stamped: Stamped) {
        if records[id].map({ $0.stamp < stamped.stamp }) ?? true { records[id] = stamped }
    }

    func value<Value: Decodable>(_ key: String, default: Value) -> Value {
        guard let stored = singles[key]?.value else { return `default` }
        switch stored {
        case .string(let text): return text as? Value ?? `default`
        case .int(let number): return Int(number) as? Value ?? `default`
        default: return `default`
        }
    }

    func recordTexts() -> [String: String] {
        records.compactMapValues { stamped in
            guard case .dictionary(let fields)? = stamped.value, case .string(let text)? = fields["text"] else {
                return nil
            }
            return text
        }
    }
}

/// A small seeded generator (SplitMix64), so that a failing seed can be run again.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
