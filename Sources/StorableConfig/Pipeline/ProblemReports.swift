/// Holds back problem reports while the current thread is inside the framework's locks.
///
/// ``StorableConfig/errorHandler`` is user code, and a handler that writes a setting (to record the error, say)
/// would wait forever for a lock its own thread holds. So code that holds a lock runs inside ``deferring(_:)``,
/// and reports made meanwhile reach the handler when the outermost such region ends, after every lock is
/// released.
enum ProblemReports {
    private final class ThreadState {
        var depth = 0
        var pending: [StorableConfigError] = []
    }

    private static let threadState = ThreadLocal { ThreadState() }

    private static var state: ThreadState { threadState.value }

    /// Runs `body`, holding back this thread's reports until the outermost `deferring` returns.
    static func deferring<Result>(_ body: () throws -> Result) rethrows -> Result {
        let state = state
        state.depth += 1
        defer {
            state.depth -= 1
            if state.depth == 0, !state.pending.isEmpty {
                let pending = state.pending
                state.pending = []
                for error in pending { StorableConfig.errorHandler(error) }
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
