import Foundation
import StorableConfig

/// A key-value cloud that mirrors chosen settings across a user's devices: Apple's `NSUbiquitousKeyValueStore`
/// (``UbiquitousKeyValueCloud``), or a simulation of it.
///
/// An implementation is this device's copy of the cloud: ``data(forKey:)`` answers from it at once, ``setData(_:forKey:)``
/// changes it at once and sends the change to the service when it can, and changes that other devices made reach
/// the copy later, each announced to the handler of ``observeChanges(_:)`` with its reason. Like Apple's service,
/// it may deliver late, out of order, twice, or not at all until ``synchronize()``: ``CloudSync`` relies on
/// nothing but the values, whose stamps say which is later.
///
/// ```swift
/// final class ServerCloud: KeyValueCloud {
///     func data(forKey key: String) -> Data? { cache[key] }
///     func setData(_ data: Data, forKey key: String) { cache[key] = data; upload(key) }
///     var keys: [String] { Array(cache.keys) }
///     func synchronize() -> Bool { pullAndPush() }
///     func observeChanges(_ handler: @escaping @Sendable (CloudChange) -> Void) -> CloudObservation { … }
/// }
/// ```
public protocol KeyValueCloud: AnyObject, Sendable {
    /// What ``StorableConfig/Setting/origin`` calls the cloud: `iCloud (device "iPad")`. The default is `iCloud`.
    var name: String { get }

    /// The data this device's copy holds for `key`, or `nil`.
    func data(forKey key: String) -> Data?

    /// Sets the data of `key` in this device's copy, to be sent to the service.
    func setData(_ data: Data, forKey key: String)

    /// The keys this device's copy holds.
    var keys: [String] { get }

    /// Exchanges changes with the service now, where it can; `false` when it cannot (no account, no network).
    @discardableResult
    func synchronize() -> Bool

    /// Calls `handler`, on any thread, for each change that the service brings to this device's copy, until the
    /// returned observation is released or cancelled.
    func observeChanges(_ handler: @escaping @Sendable (CloudChange) -> Void) -> CloudObservation
}

extension KeyValueCloud {
    /// `iCloud`.
    public var name: String { "iCloud" }
}

/// A change that the service brought to a device's copy of the cloud: the keys, and why.
public struct CloudChange: Sendable, Hashable {
    /// Why the values changed, as `NSUbiquitousKeyValueStore`'s change reasons say it.
    public enum Reason: Sendable, Hashable {
        /// Another device changed the values.
        case serverChange
        /// The first download of the account's values to this device.
        case initialSyncChange
        /// The app's values are over the service's quota: some were not stored.
        case quotaViolationChange
        /// The user signed in to another account (or out): the values are that account's.
        case accountChange
    }

    /// Why.
    public let reason: Reason
    /// The keys that changed.
    public let keys: [String]

    /// Creates a change.
    public init(reason: Reason, keys: [String]) {
        self.reason = reason
        self.keys = keys
    }
}

/// Keeps a ``KeyValueCloud/observeChanges(_:)`` handler called: it stops when this is released or cancelled.
public final class CloudObservation: Sendable {
    private let stop: @Sendable () -> Void
    private let isStopped = Locked(false)

    /// Creates an observation that calls `cancel` once, when cancelled or released.
    public init(cancel: @escaping @Sendable () -> Void) {
        stop = cancel
    }

    /// Stops the calls.
    public func cancel() {
        let first = isStopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { stop() }
    }

    deinit { cancel() }
}
