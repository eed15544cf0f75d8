#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Holds back problem reports and announcements of outside changes while the current thread is inside the
/// framework's locks.
///
/// ``StorableConfig/errorHandler`` and observers are user code, and one that writes a setting (to record the
/// error, say) would wait forever for a lock its own thread holds. So code that holds a lock runs inside
/// ``deferring(_:)``, and what is reported or announced meanwhile happens when the outermost such region
/// ends, after every lock is released.
///
/// Every write enters and leaves a region, so the depth, a "something is held back" flag and the number of
/// batches open on the thread (``StorableConfig/batch(_:)`` holds back a thread's writes in the same way, so that
/// every assignment can ask without a lock whether one is open) are kept in one thread-specific value (a pthread
/// key created once per process, the number itself in place of a pointer: no allocation); the held-back items,
/// rare, wait in a table keyed by thread, taken out by the thread that put them there. Should the process have
/// used up its pthread keys, the state goes into that table too: slower, never wrong.
enum OutsideLocks {
    private struct HeldBack {
        /// Each with the handler it goes to, chosen when it was reported.
        var reports: [(error: StorableConfigError, handler: @Sendable (StorableConfigError) -> Void)] = []
        var work: [() -> Void] = []
    }

    private static let heldBack = Locked<[pthread_t: HeldBack]>([:])

    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    private static let stateWithoutKey = Locked<[pthread_t: Int]>([:])

    /// Bit 0 of `state`: something is held back.
    private static let heldBackFlag = 1
    /// Bits 1–15 of `state`: the batches open on this thread.
    private static let batchUnit = 1 << 1
    private static let batchMask = 0xFFFE
    /// The bits above: the depth inside the framework's locks.
    private static let depthUnit = 1 << 16

    /// This thread's depth inside the framework's locks, its open batches, and whether something is held back.
    private static var state: Int {
        get { load(key) }
        set { save(newValue, key) }
    }

    /// `state`, through `key` as read once by the caller: each read of a `static let` is a call (`swift_once`),
    /// and every write enters and leaves a region.
    private static func load(_ key: pthread_key_t?) -> Int {
        guard let key else { return stateWithoutKey.withLock { $0[pthread_self()] ?? 0 } }
        return Int(bitPattern: pthread_getspecific(key))
    }

    private static func save(_ state: Int, _ key: pthread_key_t?) {
        guard let key else {
            let thread = pthread_self()
            stateWithoutKey.withLock { $0[thread] = state == 0 ? nil : state }
            return
        }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: state))
    }

    /// Runs `body`, holding back this thread's reports until the outermost `deferring` returns.
    static func deferring<Result>(_ body: () throws -> Result) rethrows -> Result {
        let key = self.key
        save(load(key) + depthUnit, key)
        defer {
            let left = load(key) - depthUnit
            save(left, key)
            if left < depthUnit, left & heldBackFlag != 0 { release() }
        }
        return try body()
    }

    /// Counts a batch opened on this thread.
    static func batchOpened() { state += batchUnit }

    /// Counts a batch closed on this thread.
    static func batchClosed() { state -= batchUnit }

    /// Whether a batch is open on this thread (of any config): one thread-specific read.
    static var threadHasOpenBatch: Bool { state & batchMask != 0 }

    /// Hands what was held back to the error handler and runs the held-back work, now that this thread is
    /// outside every lock.
    private static func release() {
        state &= batchMask
        let thread = pthread_self()
        guard let held = heldBack.withLock({ $0.removeValue(forKey: thread) }) else { return }
        for report in held.reports { report.handler(report.error) }
        for item in held.work { item() }
    }

    /// Hands `error` to the error handler now, or when this thread leaves the framework's locks.
    static func report(_ error: StorableConfigError) {
        if state >= depthUnit {
            let thread = pthread_self()
            let handler = StorableConfig.currentErrorHandler
            heldBack.withLock { $0[thread, default: HeldBack()].reports.append((error, handler)) }
            state |= heldBackFlag
        } else {
            StorableConfig.currentErrorHandler(error)
        }
    }

    /// Runs `work` now, or when this thread leaves the framework's locks.
    static func run(_ work: @escaping () -> Void) {
        if state >= depthUnit {
            let thread = pthread_self()
            heldBack.withLock { $0[thread, default: HeldBack()].work.append(work) }
            state |= heldBackFlag
        } else {
            work()
        }
    }
}
