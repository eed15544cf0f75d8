/// Holds back problem reports and announcements of outside changes while the current thread is inside the
/// framework's locks.
///
/// ``StorableConfig/errorHandler`` and observers are user code, and one that writes a setting (to record the
/// error, say) would wait forever for a lock its own thread holds. So code that holds a lock runs inside
/// ``deferring(_:)``, and what is reported or announced meanwhile happens when the outermost such region
/// ends, after every lock is released.
enum OutsideLocks {
    fileprivate final class ThreadState {
        var depth = 0
        var pending: [StorableConfigError] = []
        var work: [() -> Void] = []
    }

    fileprivate static let threadState = ThreadLocal { ThreadState() }

    private static var state: ThreadState { threadState.value }

    /// Runs `body`, holding back this thread's reports until the outermost `deferring` returns.
    static func deferring<Result>(_ body: () throws -> Result) rethrows -> Result {
        let state = state
        state.depth += 1
        defer {
            state.depth -= 1
            if state.depth == 0, !state.pending.isEmpty || !state.work.isEmpty {
                let pending = state.pending
                let work = state.work
                state.pending = []
                state.work = []
                for error in pending { StorableConfig.errorHandler(error) }
                for item in work { item() }
            }
        }
        return try body()
    }

    /// Hands `error` to the error handler now, or when this thread leaves the framework's locks.
    static func report(_ error: StorableConfigError) {
        let state = state
        if state.depth > 0 {
            state.pending.append(error)
        } else {
            StorableConfig.errorHandler(error)
        }
    }
}

extension OutsideLocks {
    /// Runs `work` now, or when this thread leaves the framework's locks.
    static func run(_ work: @escaping () -> Void) {
        let state = threadState.value
        if state.depth > 0 {
            state.work.append(work)
        } else {
            work()
        }
    }
}
