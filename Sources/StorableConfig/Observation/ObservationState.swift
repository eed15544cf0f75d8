/// A setting's observers and the changes not yet told to them; guarded by the setting's lock.
///
/// Shaped so that the setting's critical sections neither allocate nor release anything: the observer list
/// is replaced whole (a new array built outside the lock, swapped in under it, the old one released after),
/// and a change is queued as a node that the writer allocated before taking the lock.
final class ObservationState<Value> {
    /// A class, made outside the lock, so that `since` can be set in the critical section that adds it.
    final class Observer {
        let identifier: UInt64
        /// The change count when the observer was added; it is told only of later changes.
        // Set in the critical section that adds the observer, before any delivery can see it.
        var since: UInt64 = 0
        let onChange: @Sendable (Value) -> Void
        let onEnd: (@Sendable () -> Void)?

        init(identifier: UInt64, onChange: @escaping @Sendable (Value) -> Void, onEnd: (@Sendable () -> Void)?) {
            self.identifier = identifier
            self.onChange = onChange
            self.onEnd = onEnd
        }
    }

    /// Never mutated in place under the lock; see ``Setting``'s `updateObservers`.
    var observers: [Observer] = []
    /// Bumped whenever `observers` is replaced, so that a replacement built from an older list is retried.
    var observersGeneration: UInt64 = 0
    var changeCount: UInt64 = 0
    /// The queue of changes not yet delivered, in the order they were made.
    var first: PendingChange<Value>?
    var last: PendingChange<Value>?
    var isDelivering = false

    /// A delivered node kept for the next change, so that a setting someone observes does not allocate and free
    /// one per change. Moved in and out under the lock (no retain count reaches zero there); its values are
    /// cleared, outside the lock, before it is kept.
    var spare: PendingChange<Value>?

    init() {}

    /// Appends `node`. Releases nothing: the previous last node stays referenced by its predecessor.
    func enqueue(_ node: PendingChange<Value>) {
        if let last { last.next = node } else { first = node }
        last = node
    }
}

/// One queued change of a setting, or the initial value owed to one new observer.
final class PendingChange<Value> {
    var number: UInt64 = 0
    var old: Value?
    var new: Value?
    var stored: StoredValue?
    /// The identifier of the observer that asked for the current value when it was added; `nil` for a change.
    var initialFor: UInt64?
    var next: PendingChange<Value>?

    init(new: Value?, stored: StoredValue?) {
        self.new = new
        self.stored = stored
    }

    // A writer fills a node through these rather than through its optional fields, so that the unspecialised
    // `Setting.apply` needs no metadata for `Value?`: the runtime's lookup of it was a tenth of an assignment
    // (Performance.md, "In-memory assignments").
    @inline(never)
    static func made(new: Value, stored: StoredValue?) -> PendingChange<Value> {
        PendingChange(new: new, stored: stored)
    }

    @inline(never)
    func fill(new: Value, stored: StoredValue?) {
        self.new = new
        self.stored = stored
    }

    @inline(never)
    func fill(old: Value) {
        self.old = old
    }
}
