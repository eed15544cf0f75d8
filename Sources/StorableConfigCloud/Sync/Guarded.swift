import Foundation

/// A value behind a lock: Foundation's `NSLock`, which every platform has.
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    // Only ever reached through `withLock`.
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
