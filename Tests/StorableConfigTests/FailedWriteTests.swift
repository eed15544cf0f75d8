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

    /// A full disk under busy writers: one report per key and cause until a write succeeds, not one per attempt
    /// (four writers made 4,807 reports in three seconds).
    @Test func aFailingStoreIsReportedOncePerKeyUntilAWriteSucceeds() {
        ReportedErrors.install()
        let store = RefusingStore(keepsFailedWrites: true)
        let config = BusyWriterConfig(store: store)
        func reports(_ key: String) -> Int { ReportedErrors.mentioning("'\(key)'").count }
        store.refusing.withLock { $0 = true }
        DispatchQueue.concurrentPerform(iterations: 4) { writer in
            for round in 0..<250 {
                if writer.isMultiple(of: 2) { config.count = round } else { config.note = "\(round)" }
            }
        }
        config.batch {
            config.count = -1
            config.note = "in a batch"
        }
        #expect(reports(config.$count.key) == 1)
        #expect(reports(config.$note.key) == 1)
        #expect(config.count == -1, "each assignment is still read")
        // Another cause is reported (another value too large, say).
        store.reason.withLock { $0 = "refused: the value is too large" }
        config.count = 5
        #expect(reports(config.$count.key) == 2)
        // A write succeeds; the next failure of each key is reported again.
        store.refusing.withLock { $0 = false }
        config.count = 7
        store.refusing.withLock { $0 = true }
        config.count = 8
        config.note = "again"
        #expect(reports(config.$count.key) == 3)
        #expect(reports(config.$note.key) == 2)
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

final class BusyWriterConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "busywriters" }
    @Setting var count = 0
    @Setting var note = ""
}

final class RefusingConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "refusing" }
    @Setting var token = ""
}

/// An in-memory store whose writes fail while `refusing` is set, as a cluster that no member answers does.
final class RefusingStore: IdentifiedConfigStore {
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    let inner = InMemoryStore()
    let refusing = Locked(false)
    /// Runs inside each `setValue`, before it refuses or applies the value.
    let insideSetValue = Locked<(@Sendable () -> Void)?>(nil)
    /// Why a write is refused.
    let reason = Locked("refused: no member answers")
    let keepsFailedWrites: Bool

    init(keepsFailedWrites: Bool = false) {
        self.keepsFailedWrites = keepsFailedWrites
    }

    var storageIdentity: AnyObject { inner }
    func value(forKey key: String) -> StoredValue? { inner.value(forKey: key) }

    func setValue(_ value: StoredValue, forKey key: String) throws {
        insideSetValue.withLock { $0 }?()
        if refusing.withLock({ $0 }) { throw Refused(description: reason.withLock { $0 }) }
        inner.setValue(value, forKey: key)
    }

    func removeValue(forKey key: String) throws {
        if refusing.withLock({ $0 }) { throw Refused(description: reason.withLock { $0 }) }
        inner.removeValue(forKey: key)
    }
}
