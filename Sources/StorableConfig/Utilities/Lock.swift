#if canImport(os)
    import os
#else
    import CStorableConfigSupport
#endif

#if canImport(os)
    @usableFromInline typealias LockPrimitive = os_unfair_lock
#else
    @usableFromInline typealias LockPrimitive = UInt32
#endif

/// A mutual-exclusion lock that the system knows the waiters of: `os_unfair_lock` on Apple platforms, a futex
/// on Linux.
///
/// Neither spins: a thread that finds the lock held sleeps in the kernel until the holder releases it, so a
/// low-priority holder cannot be starved by high-priority waiters (on Apple platforms the kernel also knows
/// the owner and lends it the waiter's priority). Taking and releasing a free lock is one atomic operation
/// each, inlined, which keeps a setting's read within a few nanoseconds of a plain property's.
///
/// Chosen over `Mutex` (macOS 15 / iOS 18, and about 26 ns uncontended here) and `NSLock` (an Objective-C
/// message send on Apple platforms). The primitive lives in a `ManagedBuffer`, at a stable address, as both
/// platforms require; copies of a `Lock` are the same lock.
@usableFromInline
struct Lock: @unchecked Sendable {
    @usableFromInline let storage: LockStorage

    init() {
        let buffer = LockStorage.create(minimumCapacity: 1) { buffer in
            buffer.withUnsafeMutablePointerToElements { $0.initialize(to: LockPrimitive()) }
        }
        storage = unsafeDowncast(buffer, to: LockStorage.self)
    }

    @inlinable @inline(__always)
    func lock() {
        storage.withUnsafeMutablePointerToElements { primitive in
            #if canImport(os)
                os_unfair_lock_lock(primitive)
            #else
                storable_config_futex_lock(primitive)
            #endif
        }
    }

    @inlinable @inline(__always)
    func unlock() {
        storage.withUnsafeMutablePointerToElements { primitive in
            #if canImport(os)
                os_unfair_lock_unlock(primitive)
            #else
                storable_config_futex_unlock(primitive)
            #endif
        }
    }

    /// Runs `body` with the lock held. `body` must not allocate, take another lock or run code the user
    /// wrote when the lock is a setting's; see Docs/Design.md.
    @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// The memory of a ``Lock``: its primitive, never moved.
@usableFromInline
final class LockStorage: ManagedBuffer<Void, LockPrimitive> {
    deinit {
        _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) }
    }
}

/// A value guarded by a ``Lock``.
final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    // Only ever reached through `withLock`, under the lock: the dynamic exclusivity check (a runtime call
    // on every access) would add nothing.
    @exclusivity(unchecked) private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
