extension Setting {
    /// The setting's values as they change, starting with the current value.
    ///
    /// ```swift
    /// for await name in config.$userName.changes {
    ///     label.text = name
    /// }
    /// ```
    ///
    /// Every change is delivered, in order, whoever makes it: this config, another config bound to the same
    /// storage, or another process (after ``StorableConfig/reload()``, or at once when a ``JSONFileStore``
    /// watches its file). An assignment that does not change the value (by `==` for `Equatable` values, by
    /// stored form otherwise) yields nothing, and a ``StorableConfig/batch(_:)`` yields once per setting,
    /// after it ends. The sequence finishes when the config is released.
    ///
    /// The stream holds at most the 1,000 newest values that its consumer has not read: a consumer that falls
    /// further behind skips the oldest, and still ends on the setting's last value.
    public var changes: AsyncStream<Value> {
        AsyncStream(bufferingPolicy: .bufferingNewest(ChangeBuffer.limit)) { continuation in
            let identifier = addObserver(
                initial: true, onChange: { continuation.yield($0) }, onEnd: { continuation.finish() })
            guard let identifier else { return }
            continuation.onTermination = { [weak self] _ in self?.removeObserver(identifier) }
        }
    }

    /// Calls `handler` with the new value after every change of the setting, until the returned token is
    /// released or cancelled.
    ///
    /// ```swift
    /// let token = config.$isFirstLaunch.observe { isFirst in print("first launch:", isFirst) }
    /// ```
    ///
    /// `handler` runs on the thread that made the change, after the framework's locks are released: it may read
    /// and assign settings. Changes reach it in order, by the rules of ``changes``. It should not capture the
    /// config strongly if the config is to be freed while the token lives.
    ///
    /// - Parameters:
    ///   - initial: Whether `handler` is first called with the current value, before any later change (on this
    ///     thread, or on a thread delivering a change at the same time); by default it is not.
    ///   - onEnd: Called once when the config is released, after the last change; at once if it already is.
    ///   - handler: Called with each new value.
    /// - Returns: The token that keeps `handler` registered.
    public func observe(
        initial: Bool = false, onEnd: (@Sendable () -> Void)? = nil, _ handler: @escaping @Sendable (Value) -> Void
    ) -> ObservationToken {
        guard let identifier = addObserver(initial: initial, onChange: handler, onEnd: onEnd) else { return .inert }
        return ObservationToken { [weak self] in self?.removeObserver(identifier) }
    }
}
