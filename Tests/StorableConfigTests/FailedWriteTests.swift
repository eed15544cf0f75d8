import Foundation
import Testing

@testable import StorableConfig

/// What the configs read after a write fails, by ``ConfigStore/keepsFailedWrites``.
struct FailedWriteTests {
    @Test func aStoreThatKeepsNoFailedWriteHasEveryConfigReadItsValueAgainAndTellsNoObserver() throws {
        ReportedErrors.install()
        let store = RefusingStore()
        store.inner.setValue(.string("stored"), forKey: "refusing.RefusingConfig.token")
        let writer = RefusingConfig(store: store)
        let other = RefusingConfig(store: store)
        let seen = Locked<[String]>([])
        let token = writer.$token.observe { value in seen.withLock { $0.append(value) } }
        let otherToken = other.$token.observe { value in seen.withLock { $0.append("other " + value) } }
        store.refusing.withLock { $0 = true }
        writer.token = "believed by nobody"
        #expect(writer.token == "stored")
        #expect(other.token == "stored")
        #expect(ReportedErrors.mentioning("refusing.RefusingConfig.token").contains { "\($0)".contains("refused") })
        // A batch and a reset go back the same way.
        writer.batch { writer.token = "in a batch" }
        #expect(writer.token == "stored")
        writer.$token.reset()
        #expect(writer.token == "stored")
        #expect(other.token == "stored")
        // Nothing was queued: the next write that succeeds writes only its own value.
        store.refusing.withLock { $0 = false }
        writer.token = "written"
        #expect(other.token == "written")
        #expect(store.inner.value(forKey: "refusing.RefusingConfig.token") == .string("written"))
        #expect(seen.withLock { $0 }.sorted() == ["other written", "written"])
        token.cancel()
        otherToken.cancel()
    }

    /// While the store call runs, the value being written is what the setting reads; the call fails, and the
    /// setting goes back to the stored value without any observer hearing of either.
    @Test func aFailedWriteIsReadDuringItsStoreCallAndRevertedWithoutTellingObservers() throws {
        ReportedErrors.install()
        let store = RefusingStore()
        store.inner.setValue(.string("stored"), forKey: "refusing.RefusingConfig.token")
        let writer = RefusingConfig(store: store)
        let seen = Locked<[String]>([])
        let token = writer.$token.observe { value in seen.withLock { $0.append(value) } }
        let readInside = Locked<String?>(nil)
        store.insideSetValue.withLock { $0 = { readInside.withLock { $0 = writer.token } } }
        store.refusing.withLock { $0 = true }
        writer.token = "tried"
        #expect(readInside.withLock { $0 } == "tried")
        #expect(writer.token == "stored")
        #expect(seen.withLock { $0 }.isEmpty)
        token.cancel()
    }

    /// A failed write made from inside another store's call (a notification handler's), where the fresh read of
    /// its key waits until that call returns: the value is still believed nowhere, and nobody hears of it.
    @Test func aFailedWriteFromInsideAnotherStoresCallIsNotBelievedWhileItsFreshReadWaits() throws {
        ReportedErrors.install()
        let refusing = RefusingStore()
        refusing.inner.setValue(.string("stored"), forKey: "refusing.RefusingConfig.token")
        let writer = RefusingConfig(store: refusing)
        let seen = Locked<[String]>([])
        let token = writer.$token.observe { value in seen.withLock { $0.append(value) } }
        refusing.refusing.withLock { $0 = true }
        let outer = CallbackStore()
        let handlerConfig = HandlerConfig(store: outer)
        let readAfterTheFailedWrite = Locked<String?>(nil)
        outer.afterChange { _ in
            writer.token = "tried inside"
            readAfterTheFailedWrite.withLock { $0 = writer.token }
        }
        handlerConfig.volume = 1
        outer.afterChange(nil)
        #expect(readAfterTheFailedWrite.withLock { $0 } == "stored")
        #expect(writer.token == "stored")
        #expect(seen.withLock { $0 }.isEmpty)
        token.cancel()
    }

    @Test func aStoreThatKeepsFailedWritesShowsTheAssignedValueAsBefore() {
        ReportedErrors.install()
        let store = RefusingStore(keepsFailedWrites: true)
        let writer = RefusingConfig(store: store)
        let other = RefusingConfig(store: store)
        store.refusing.withLock { $0 = true }
        writer.token = "in memory"
        #expect(writer.token == "in memory")
        #expect(other.token == "in memory")
        #expect(InMemoryStore().keepsFailedWrites)
        #expect(FailingStore().keepsFailedWrites)
    }
}

final class RefusingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "refusing" }
    @Setting var token = ""
}

/// An in-memory store whose writes fail while `refusing` is set, as a cluster that no member answers does.
final class RefusingStore: SharedConfigStore {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "refused: no member answers" }
    }

    let inner = InMemoryStore()
    let refusing = Locked(false)
    /// Runs inside each `setValue`, before it refuses or applies the value.
    let insideSetValue = Locked<(@Sendable () -> Void)?>(nil)
    let keepsFailedWrites: Bool

    init(keepsFailedWrites: Bool = false) {
        self.keepsFailedWrites = keepsFailedWrites
    }

    var storageIdentity: AnyObject { inner }
    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }

    func setValue(_ value: StoredValue, forKey key: String) throws {
        insideSetValue.withLock { $0 }?()
        if refusing.withLock({ $0 }) { throw Refused() }
        inner.setValue(value, forKey: key)
    }

    func removeValue(forKey key: String) throws {
        if refusing.withLock({ $0 }) { throw Refused() }
        inner.removeValue(forKey: key)
    }
}
