import Dispatch
import Foundation
import Testing

@testable import StorableConfig

/// A store whose writes wait at a gate, like a network store during an election.
final class GatedStore: IdentifiedConfigStore, @unchecked Sendable {
    let inner = InMemoryStore()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)

    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }

    func setValue(_ value: StoredValue, forKey key: String) {
        entered.signal()
        gate.wait()
        inner.setValue(value, forKey: key)
    }

    func removeValue(forKey key: String) { inner.removeValue(forKey: key) }

    var storageIdentity: AnyObject { inner }
}

struct SlowStoreTests {
    @Test func aWriteStuckInTheStoreBlocksNeitherReadsNorOutsideChangesNorObservers() throws {
        let store = GatedStore()
        let config = AppConfig(store: store)
        let seen = Locked<[String]>([])
        let token = config.$userName.observe { name in seen.withLock { $0.append(name) } }
        defer { token.cancel() }
        let writer = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            config.isFirstLaunch = false  // waits at the gate
            writer.signal()
        }
        store.entered.wait()
        // While that write is stuck (its gate opens only below, so a read that waited for it would never return):
        // reads answer,
        #expect(finishes { _ = config.userName })
        // and a change made outside the process reaches the config and its observers.
        store.inner.setValue(.string("changed elsewhere"), forKey: config.$userName.key)
        #expect(finishes { store.storageDidChange(forKeys: [config.$userName.key]) })
        #expect(config.userName == "changed elsewhere")
        #expect(seen.withLock { $0 } == ["changed elsewhere"])
        store.gate.signal()
        writer.wait()
        #expect(config.isFirstLaunch == false)
    }
}
