import Foundation
import StorableConfig
import StorableConfigCloud

struct Note: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var text: String
}

struct Chore: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var order: Int
}

final class SyncedSettings: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "cloud.test" }
    @Setting var userName = ""
    @Setting var fontSize = 12
    @Setting var hobbies: [String] = []
    @Setting var nickname: String? = nil
    @Setting(secret: true) var token = ""
    @Records var notes: RecordCollection<Note>
    @Records(orderedBy: \.order) var chores: RecordCollection<Chore>
}

/// A wall clock a test sets.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: Int64

    init(_ milliseconds: Int64) { self.milliseconds = milliseconds }

    var now: @Sendable () -> Date {
        { [self] in lock.withLock { Date(timeIntervalSince1970: Double(milliseconds) / 1000) } }
    }

    func set(_ milliseconds: Int64) { lock.withLock { self.milliseconds = milliseconds } }
    func advance(_ by: Int64) { lock.withLock { milliseconds += by } }
}

/// One of the user's devices: its own store, its copy of the cloud, its clock, and the app's config on them.
final class Phone {
    let name: String
    let cloud: SimulatedCloud
    let device: SimulatedCloud.Device
    let local: InMemoryStore
    let clock: TestClock
    private(set) var sync: CloudSync!
    private(set) var config: SyncedSettings!

    /// A device with the app installed and not yet launched.
    init(_ name: String, on cloud: SimulatedCloud, account: String = "alice", at milliseconds: Int64 = 1_000_000) {
        self.name = name
        self.cloud = cloud
        device = cloud.device(name, account: account)
        local = InMemoryStore()
        clock = TestClock(milliseconds)
    }

    /// Launches the app: every setting syncs but the secret one.
    @discardableResult
    func launch() -> Self {
        sync = CloudSync(cloud: device, local: local, device: name, now: clock.now)
        config = SyncedSettings(store: sync.store)
        sync.sync(config, except: [\.$token])
        return self
    }

    /// Quits the app: the config and the sync go.
    func quit() {
        config = nil
        sync = nil
    }
}
