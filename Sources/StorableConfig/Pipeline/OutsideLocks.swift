import CStorableConfigSupport

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
/// Every write enters and leaves a region, so the depth and a "something is held back" flag are C
/// thread-locals (a few instructions); the held-back items, rare, wait in a table keyed by thread, taken out
/// by the thread that put them there. (No `pthread_key_create`: it fails once a process has used up its keys,
/// and nothing here may stop the program for that.)
enum OutsideLocks {
    private struct HeldBack {
        var reports: [StorableConfigError] = []
        var work: [() -> Void] = []
    }

    private static let heldBack = Locked<[pthread_t: HeldBack]>([:])

    /// Runs `body`, holding back this thread's reports until the outermost `deferring` returns.
    @inline(__always)
    static func deferring<Result>(_ body: () throws -> Result) rethrows -> Result {
        storable_config_outside_locks_enter()
        defer {
            if storable_config_outside_locks_leave() == 0, storable_config_outside_locks_has_pending() != 0 {
                release()
            }
        }
        return try body()
    }

    /// Hands what was held back to the error handler and runs the held-back work, now that this thread is
    /// outside every lock.
    private static func release() {
        storable_config_outside_locks_set_pending(0)
        let thread = pthread_self()
        guard let held = heldBack.withLock({ $0.removeValue(forKey: thread) }) else { return }
        for error in held.reports { StorableConfig.errorHandler(error) }
        for item in held.work { item() }
    }

    /// Hands `error` to the error handler now, or when this thread leaves the framework's locks.
    static func report(_ error: StorableConfigError) {
        if storable_config_outside_locks_current_depth() > 0 {
            let thread = pthread_self()
            heldBack.withLock { $0[thread, default: HeldBack()].reports.append(error) }
            storable_config_outside_locks_set_pending(1)
        } else {
            StorableConfig.errorHandler(error)
        }
    }

    /// Runs `work` now, or when this thread leaves the framework's locks.
    static func run(_ work: @escaping () -> Void) {
        if storable_config_outside_locks_current_depth() > 0 {
            let thread = pthread_self()
            heldBack.withLock { $0[thread, default: HeldBack()].work.append(work) }
            storable_config_outside_locks_set_pending(1)
        } else {
            work()
        }
    }
}
