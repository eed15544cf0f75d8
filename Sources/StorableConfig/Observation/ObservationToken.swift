/// Keeps an observer registered: the observer is removed when the token is released or cancelled.
///
/// ```swift
/// let token = config.$userName.observe { name in print("now", name) }
/// // … until `token` goes away, or:
/// token.cancel()
/// ```
public final class ObservationToken: Sendable {
    private let removal: Locked<(@Sendable () -> Void)?>

    init(_ removal: @escaping @Sendable () -> Void) {
        self.removal = Locked(removal)
    }

    /// A token that observes nothing, for an observer added after its config went away.
    static let inert = ObservationToken {}

    /// Removes the observer now; later calls do nothing.
    public func cancel() {
        let removal = removal.withLock { removal in
            defer { removal = nil }
            return removal
        }
        removal?()
    }

    deinit {
        cancel()
    }

    private static let counter = Locked<UInt64>(0)

    static func nextIdentifier() -> UInt64 {
        counter.withLock { counter in
            counter += 1
            return counter
        }
    }
}
