#if canImport(Observation)
    import Observation
#endif

extension StorableConfig {
    /// Every change to any of this config's settings, as it happens.
    ///
    /// ```swift
    /// for await change in config.changes {
    ///     print(change.name, change.oldValue, "→", change.newValue)
    /// }
    /// ```
    ///
    /// Unlike a setting's ``Setting/changes``, this does not start with the current values. It finishes when
    /// the config is released. The rules of ``Setting/changes`` apply: no element for an assignment that keeps
    /// the value, one per setting for a batch.
    ///
    /// The stream holds at most the 1,000 newest changes that its consumer has not read: a consumer that falls
    /// further behind skips the oldest, so it ends on the last change, but may miss every change of a setting
    /// that changed only among those skipped; read the settings themselves when that matters.
    public var changes: AsyncStream<ConfigChange> {
        AsyncStream(bufferingPolicy: .bufferingNewest(ChangeBuffer.limit)) { continuation in
            let identifier = context.addChangeObserver(
                onChange: { continuation.yield($0) }, onEnd: { continuation.finish() })
            guard let identifier else { return }
            continuation.onTermination = { [context] _ in context.removeChangeObserver(identifier) }
        }
    }

    /// Calls `handler` after every change to any of this config's settings, until the returned token is
    /// released or cancelled.
    ///
    /// ```swift
    /// let token = config.observe { change in log("\(change)") }
    /// ```
    public func observe(_ handler: @escaping @Sendable (ConfigChange) -> Void) -> ObservationToken {
        guard let identifier = context.addChangeObserver(onChange: handler, onEnd: nil) else { return .inert }
        return ObservationToken { [context] in context.removeChangeObserver(identifier) }
    }

    /// Calls `handler` each time one of this config's settings changes, before anyone else hears of the change,
    /// until the returned token is released or cancelled.
    ///
    /// ```swift
    /// let token = config.observeWillChange { redrawSoon() }
    /// ```
    ///
    /// It is the hook that `objectWillChange` is built on where Combine exists: `handler` runs where the
    /// Observation framework is told `willSet`, before the setting's observers, its ``Setting/changes``, its
    /// Combine publisher and this config's ``changes`` hear of the change, so a subscriber of both sees the
    /// announcement first. The setting itself may already read the new value. It runs for every change that
    /// ``changes`` reports, made by this config, by another config bound to the same storage, or outside the
    /// process, once per change: not for an assignment that keeps the value, and once per setting for a
    /// ``batch(_:)``. It runs on the thread that made the change, after the framework's locks are released.
    public func observeWillChange(_ handler: @escaping @Sendable () -> Void) -> ObservationToken {
        guard let identifier = context.addWillChangeObserver(handler) else { return .inert }
        return ObservationToken { [context] in context.removeChangeObserver(identifier) }
    }
}

#if canImport(Observation)
    /// Configs work with `withObservationTracking`, and so with SwiftUI, the way `@Observable` models do:
    /// reading a setting inside tracking, then assigning it, fires the change handler; assigning another
    /// setting does not.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension StorableConfig: Observable {}
#endif
