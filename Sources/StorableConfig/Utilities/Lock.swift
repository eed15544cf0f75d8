import Foundation

#if canImport(os)
    import os
#endif

/// A mutual-exclusion lock that the system knows the owner of: `OSAllocatedUnfairLock` on Apple platforms,
/// Foundation's `NSLock` (a pthread mutex) elsewhere.
///
/// Neither spins: a thread that finds the lock held sleeps until the holder releases it, so a low-priority
/// holder cannot be starved by high-priority waiters (on Apple platforms the kernel also lends the owner the
/// waiter's priority). Copies of a `Lock` are the same lock.
///
/// Not `Synchronization.Mutex` on Linux: with Swift 6.3.1, ThreadSanitizer reports "Swift access race" on the
/// value a `Mutex` guards even when every access is inside `withLock` (eight threads incrementing one counter
/// under it: three to five reports per run; the same program with `NSLock` or a pthread mutex: none), and
/// `swift test --sanitize=thread` is how the package proves its locking (Docs/Design.md, "Locks").
///
/// Public so that the package's other modules, and stores and providers that you write, use the same lock:
///
/// ```swift
/// let lock = Lock()
/// lock.withLock { counter += 1 }
/// ```
public struct Lock: Sendable {
    #if canImport(os)
        private let base = OSAllocatedUnfairLock()
    #else
        private let base = NSLock()
    #endif

    /// Creates a lock.
    public init() {}

    /// Takes the lock, waiting while another thread holds it. Not across an `await`: the thread that takes the
    /// lock must release it.
    @available(*, noasync, message: "use withLock(_:), which cannot hold the lock across a suspension")
    public func lock() {
        base.lock()
    }

    /// Releases the lock, which this thread holds.
    @available(*, noasync, message: "use withLock(_:), which cannot hold the lock across a suspension")
    public func unlock() {
        base.unlock()
    }

    /// Takes the lock if no thread holds it, without waiting; returns whether it did. Release it with
    /// ``unlock()``.
    @available(*, noasync, message: "use withLock(_:), which cannot hold the lock across a suspension")
    public func tryLock() -> Bool {
        #if canImport(os)
            base.lockIfAvailable()
        #else
            base.try()
        #endif
    }

    /// Runs `body` with the lock held. `body` must not allocate, take another lock or run code the user
    /// wrote when the lock is a setting's; see Docs/Design.md.
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value guarded by a ``Lock``: reached only through ``withLock(_:)``.
///
/// ```swift
/// let seen = Locked<[String]>([])
/// seen.withLock { $0.append(key) }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    // Only ever reached through `withLock`.
    private var value: Value

    /// Creates a value behind a lock of its own.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the lock held and the value to read or change; see ``Lock/withLock(_:)`` for what `body`
    /// must not do.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
