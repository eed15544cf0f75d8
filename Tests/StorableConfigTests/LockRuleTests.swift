import Foundation
import Testing

@testable import StorableConfig

/// A value whose `==`, `encode(to:)` and `init(from:)` read the very setting that holds it, as user code may:
/// if any ran under the setting's lock, these tests would deadlock.
struct SelfReading: Codable, Equatable, Sendable {
    static let config = Locked<SelfReadingConfig?>(nil)
    var number: Int

    init(number: Int) {
        self.number = number
    }

    static func == (lhs: SelfReading, rhs: SelfReading) -> Bool {
        _ = config.withLock { $0 }?.value
        return lhs.number == rhs.number
    }

    func encode(to encoder: any Encoder) throws {
        _ = Self.config.withLock { $0 }?.value
        var container = encoder.singleValueContainer()
        try container.encode(number)
    }

    init(from decoder: any Decoder) throws {
        _ = Self.config.withLock { $0 }?.value
        number = try decoder.singleValueContainer().decode(Int.self)
    }
}

final class SelfReadingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "test" }
    @Setting var value = SelfReading(number: 0)
}

@Suite(.serialized)
struct LockRuleTests {
    @Test func aValuesOwnCodeMayReadItsSettingDuringAWriteADeliveryAndALoad() throws {
        let store = InMemoryStore()
        let config = SelfReadingConfig(store: store)
        let other = SelfReadingConfig(store: store)
        SelfReading.config.withLock { $0 = config }
        defer { SelfReading.config.withLock { $0 = nil } }
        let seen = Locked<[Int]>([])
        let token = config.$value.observe { value in
            seen.withLock { $0.append(value.number) }
            _ = config.value  // an observer reads the setting it observes
        }
        defer { token.cancel() }
        config.value = SelfReading(number: 1)  // encode(to:) and == run, and the observer
        other.value = SelfReading(number: 2)  // delivered to `config`: == runs there
        store.setValue(.int(3), forKey: config.$value.key)
        try config.reload()  // init(from:) runs
        #expect(config.value.number == 3)
        #expect(seen.withLock { $0 } == [1, 2, 3])
    }
}
