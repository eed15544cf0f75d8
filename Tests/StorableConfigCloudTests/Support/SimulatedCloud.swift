import Foundation
import StorableConfig
import StorableConfigCloud

/// Apple's key-value service, simulated: a server per account that holds, per key, the last value to reach it,
/// and devices with their own copies. What travels (uploads, notices) waits in queues until a test moves it, so a
/// test decides what is late, reordered, doubled or lost.
final class SimulatedCloud: @unchecked Sendable {
    private let lock = NSLock()
    private var servers: [String: [String: Data]] = [:]
    private var devices: [String: Device.State] = [:]
    /// The most bytes (keys and values) an account holds; a value that would go past it is refused, and its
    /// device told of a quota violation.
    var quota = CloudLimits.totalBytes

    /// One device's copy of the cloud.
    final class Device: KeyValueCloud, @unchecked Sendable {
        struct State {
            var account = "alice"
            var copy: [String: Data] = [:]
            var outbox: [(key: String, data: Data)] = []
            /// Notices and the values they bring, in the order they were sent.
            var inbox: [(change: CloudChange, values: [String: Data])] = []
            var handlers: [UUID: @Sendable (CloudChange) -> Void] = [:]
            var isOnline = true
        }

        let cloud: SimulatedCloud
        let deviceName: String

        init(cloud: SimulatedCloud, name: String) {
            self.cloud = cloud
            deviceName = name
        }

        func data(forKey key: String) -> Data? { cloud.withDevice(deviceName) { $0.copy[key] } }

        func setData(_ data: Data, forKey key: String) {
            cloud.withDevice(deviceName) { state in
                state.copy[key] = data
                // As Apple's does, the copy sends only the latest value of a key.
                state.outbox.removeAll { $0.key == key }
                state.outbox.append((key, data))
            }
        }

        var keys: [String] { cloud.withDevice(deviceName) { Array($0.copy.keys) } }

        /// Sends this device's changes and takes the server's values into its copy; `false` while offline.
        func synchronize() -> Bool {
            guard cloud.withDevice(deviceName, { $0.isOnline }) else { return false }
            cloud.upload(from: deviceName)
            cloud.withLock {
                let account = cloud.devices[deviceName]!.account
                for (key, data) in cloud.servers[account] ?? [:] { cloud.devices[deviceName]!.copy[key] = data }
            }
            return true
        }

        func observeChanges(_ handler: @escaping @Sendable (CloudChange) -> Void) -> CloudObservation {
            let id = UUID()
            cloud.withDevice(deviceName) { $0.handlers[id] = handler }
            return CloudObservation { [cloud, deviceName] in cloud.withDevice(deviceName) { $0.handlers[id] = nil } }
        }
    }

    private func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func withDevice<Result>(_ name: String, _ body: (inout Device.State) -> Result) -> Result {
        withLock { body(&devices[name, default: Device.State()]) }
    }

    /// A new device, signed in to `account`, with an empty copy (a fresh install).
    func device(_ name: String, account: String = "alice") -> Device {
        withLock { devices[name] = Device.State(account: account) }
        return Device(cloud: self, name: name)
    }

    /// Whether the device's uploads reach the server and the server's notices reach it.
    func setOnline(_ name: String, _ online: Bool) { withDevice(name) { $0.isOnline = online } }

    /// What the server of `account` holds for `key`.
    func serverData(_ key: String, account: String = "alice") -> Data? { withLock { servers[account]?[key] } }

    /// The device's waiting uploads reach the server, in order (`duplicate`: each twice, the second after the
    /// others); the other online devices of the account are sent a notice each. A value past the quota is refused.
    func upload(from name: String, duplicate: Bool = false) {
        var refused: [String] = []
        withLock {
            guard devices[name]!.isOnline else { return }
            let account = devices[name]!.account
            var sent = devices[name]!.outbox
            devices[name]!.outbox = []
            if duplicate { sent += sent }
            for (key, data) in sent {
                var server = servers[account] ?? [:]
                server[key] = data
                guard server.reduce(0, { $0 + $1.key.utf8.count + $1.value.count }) <= quota else {
                    refused.append(key)
                    continue
                }
                servers[account] = server
                for (other, state) in devices where other != name && state.account == account {
                    devices[other]!.inbox.append((CloudChange(reason: .serverChange, keys: [key]), [key: data]))
                }
            }
            if !refused.isEmpty {
                devices[name]!.inbox.append((CloudChange(reason: .quotaViolationChange, keys: refused), [:]))
            }
        }
    }

    /// Delivers the device's waiting notices (if it is online): each brings its values into the copy, then
    /// calls the handlers. `order` reorders them; `lose` drops the ones whose index it contains (values and
    /// notice); `silent` brings the values without calling the handlers (a notice the app never received).
    func deliver(
        to name: String, order: (([Int]) -> [Int])? = nil, lose: Set<Int> = [], silent: Set<Int> = []
    ) {
        let (inbox, handlers) = withLock {
            () -> ([(change: CloudChange, values: [String: Data])], [@Sendable (CloudChange) -> Void]) in
            guard devices[name]!.isOnline else { return ([], []) }
            defer { devices[name]!.inbox = [] }
            return (devices[name]!.inbox, Array(devices[name]!.handlers.values))
        }
        let indices = order?(Array(inbox.indices)) ?? Array(inbox.indices)
        for index in indices where !lose.contains(index) {
            withDevice(name) { state in
                for (key, data) in inbox[index].values { state.copy[key] = data }
            }
            if !silent.contains(index) { for handler in handlers { handler(inbox[index].change) } }
        }
    }

    /// Signs the device in to `account`: its copy becomes that account's values, and it is told.
    func switchAccount(of name: String, to account: String) {
        let (keys, handlers) = withLock { () -> ([String], [@Sendable (CloudChange) -> Void]) in
            let old = devices[name]!.copy.keys
            devices[name]!.account = account
            devices[name]!.copy = servers[account] ?? [:]
            devices[name]!.outbox = []
            devices[name]!.inbox = []
            return (Array(Set(old).union(devices[name]!.copy.keys)), Array(devices[name]!.handlers.values))
        }
        for handler in handlers { handler(CloudChange(reason: .accountChange, keys: keys)) }
    }

    /// Every device uploads and takes every notice, until nothing travels: the network after the weather.
    func settle(_ names: [String]) {
        for _ in 0..<10 {
            for name in names { upload(from: name) }
            for name in names { deliver(to: name) }
            let idle = withLock { names.allSatisfy { devices[$0]!.outbox.isEmpty && devices[$0]!.inbox.isEmpty } }
            if idle { return }
        }
    }
}
