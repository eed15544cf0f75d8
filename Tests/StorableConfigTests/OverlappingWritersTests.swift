import Foundation
import Testing

@testable import StorableConfig

/// Writers on several configs of one storage whose store calls overlap: observers on other configs hear the values
/// in the order the store applied them, and never a value again after a later one (the shared-core issue's second
/// probe finding: `132, 133, 134, 3000210, 134` in 3 of 20 rounds on today's main).
@Suite struct OverlappingWritersTests {
    final class Counter: StorableConfig, @unchecked Sendable {
        override class var namespace: String { "overlap" }
        @Setting var x = 0
    }

    /// Writer `w` assigns `(w + 1) * 1,000,000 + i` for increasing `i`: for each writer, what an observer hears
    /// must increase, and every config ends at what the store holds.
    @Test(arguments: StoreKind.allCases)
    func observersOfOtherConfigsNeverHearAValueAgainAfterALaterOne(kind: StoreKind) {
        let fixture = StoreFixture(kind)
        let store = fixture.open()
        let rounds = isRunningUnderThreadSanitizer ? 3 : 8
        let writes = kind == .memory ? 2_000 : 250
        var stale: [String] = []
        for round in 0..<rounds {
            let writers = (0..<4).map { _ in Counter(store: store) }
            let listeners = (0..<2).map { _ in Counter(store: store) }
            let heard = listeners.map { _ in Locked<[Int]>([]) }
            let heardByConfig = listeners.map { _ in Locked<[Int]>([]) }
            var tokens: [ObservationToken] = []
            for (index, listener) in listeners.enumerated() {
                tokens.append(listener.$x.observe { [heard] value in heard[index].withLock { $0.append(value) } })
                tokens.append(
                    listener.observe { [heardByConfig] change in
                        if let value = change.newValue as? Int { heardByConfig[index].withLock { $0.append(value) } }
                    })
            }
            DispatchQueue.concurrentPerform(iterations: writers.count) { writer in
                for i in 1...writes { writers[writer].x = (writer + 1) * 1_000_000 + i }
            }
            for list in heard + heardByConfig {
                var last: [Int: Int] = [:]
                for value in list.withLock({ $0 }) {
                    let writer = value / 1_000_000
                    if let earlier = last[writer], value <= earlier {
                        stale.append("round \(round): \(value) after \(earlier)")
                    }
                    last[writer] = max(last[writer] ?? 0, value)
                }
            }
            let stored = try? store.value(forKey: writers[0].$x.key)
            for config in writers + listeners where StoredValue.int(Int64(config.x)) != stored {
                stale.append(
                    "round \(round): a config reads \(config.x), the store holds \(String(describing: stored))")
            }
            withExtendedLifetime(tokens) {}
        }
        #expect(stale.isEmpty, "\(stale.count): \(stale.prefix(6))")
    }
}
