/// A setting's observers and the changes not yet told to them; guarded by the setting's lock.
final class ObservationState<Value> {
    struct Observer {
        /// The change count when the observer was added; it is told only of later changes.
        let since: UInt64
        let onChange: @Sendable (Value) -> Void
        let onEnd: (@Sendable () -> Void)?
    }

    var observers: [UInt64: Observer] = [:]
    var changeCount: UInt64 = 0
    /// Writes in version order; the delivering thread skips those that kept the value.
    var undelivered: [(number: UInt64, old: Value, new: Value, stored: StoredValue?)] = []
    var isDelivering = false
    /// The value before a batch's first assignment, which the batch's change is measured from.
    var valueBeforeBatch: Value?
}
