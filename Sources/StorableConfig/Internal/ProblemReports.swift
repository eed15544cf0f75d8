#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { state in
            #if canImport(Darwin)
            Unmanaged<AnyObject>.fromOpaque(state).release()
            #else
            if let state { Unmanaged<AnyObject>.fromOpaque(state).release() }
            #endif
        }
        precondition(result == 0, "pthread_key_create failed with \(result)")
        return key
    }()

    private static var state: ThreadState {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadState>.fromOpaque(pointer).takeUnretainedValue()
        }
        let state = ThreadState()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

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
