/// How a setting's changes reach its observers: queued under the setting's lock, delivered outside it.
extension Setting {
    /// Tells the observers of every undelivered change, in order, outside the lock.
    ///
    /// One thread at a time delivers; a change made meanwhile, by another thread or by an observer itself,
    /// is queued and delivered by the thread already delivering, so observers see changes in the order they
    /// happened, an observer may read and write settings, and other writers never wait for observers.
    func deliverChanges(_ binding: SettingBinding, traits: ValueTraits<Value>) {
        let lock = self.lock
        // The last node delivered, emptied, kept as the state's spare for the next change if it has none.
        var delivered: PendingChange<Value>?
        while true {
            lock.lock()
            if let delivered, let state = observation, state.spare == nil { state.spare = delivered }
            guard let state = observation, let head = state.first else {
                observation?.isDelivering = false
                lock.unlock()
                return
            }
            state.first = nil
            state.last = nil
            let observers = state.observers
            lock.unlock()
            delivered = nil
            var next: PendingChange<Value>? = head
            while let change = next {
                next = change.next
                change.next = nil  // released one by one, not as a deep chain
                deliver(change, to: observers, binding: binding, traits: traits)
                // Emptied here, outside the lock, where the values it held may be freed.
                change.old = nil
                change.new = nil
                change.stored = nil
                change.initialFor = nil
                delivered = change
            }
        }
    }

    func deliver(
        _ change: PendingChange<Value>, to observers: [ObservationState<Value>.Observer], binding: SettingBinding,
        traits: ValueTraits<Value>
    ) {
        guard case .some(let new) = change.new else { return }
        if let identifier = change.initialFor {
            observers.first { $0.identifier == identifier }?.onChange(new)
            return
        }
        guard case .some(let old) = change.old,
            Self.hasChanged(from: old, to: new, stored: change.stored, traits: traits, listening: true)
        else { return }
        binding.observationDidChange()
        // Where the Observation framework hears `willSet`: before any observer, so that an `objectWillChange`
        // built on it comes before the new value reaches a publisher's subscriber.
        if binding.context.hasChangeObservers { binding.context.tellWillChangeObservers() }
        for observer in observers where change.number > observer.since {
            observer.onChange(new)
        }
        if binding.context.hasChangeObservers { binding.tellChangeObservers(old: old, new: new, isSecret: isRedacted) }
    }

    /// Adds an observer of later changes; with `initial`, also calls it with the current value, before any
    /// later change. Returns `nil`, after ending it, if the config is already gone.
    func addObserver(
        initial: Bool, onChange: @escaping @Sendable (Value) -> Void, onEnd: (@Sendable () -> Void)? = nil
    ) -> UInt64? {
        let identifier = ObservationToken.nextIdentifier()
        // The initial value is queued like a change, in the same critical section that adds the observer, so
        // no later change can overtake it, and it is delivered outside the lock.
        let initialNode = initial ? PendingChange<Value>(new: nil, stored: nil) : nil
        initialNode?.initialFor = identifier
        let observer = ObservationState<Value>.Observer(identifier: identifier, onChange: onChange, onEnd: onEnd)
        var mustDeliver = false
        let added = updateObservers { observers in
            observers.append(observer)
        } whenSwapped: { state in
            observer.since = state.changeCount
            guard let initialNode else { return }
            initialNode.new = value
            initialNode.number = state.changeCount
            state.enqueue(initialNode)
            mustDeliver = !state.isDelivering
            state.isDelivering = true
        }
        guard added else {
            onEnd?()
            return nil
        }
        if mustDeliver, let (binding, traits) = locked({ binding.map { ($0, traits!) } }) {
            deliverChanges(binding, traits: traits)
        } else if mustDeliver {
            // Not a property of a config: nothing else delivers, so deliver the initial value here.
            locked { observation?.isDelivering = false }
            if let initialNode, case .some(let value) = initialNode.new { onChange(value) }
        }
        return identifier
    }

    func removeObserver(_ identifier: UInt64) {
        _ = updateObservers({ observers in observers.removeAll { $0.identifier == identifier } })
    }

    /// Replaces the observer list by a copy that `transform` changed, built outside the lock, and swapped in
    /// under it if no one replaced the list meanwhile (else built again); `whenSwapped` runs under the lock
    /// right after the swap. The old list is released after the lock. Returns `false` if the config is gone.
    private func updateObservers(
        _ transform: (inout [ObservationState<Value>.Observer]) -> Void,
        whenSwapped: (ObservationState<Value>) -> Void = { _ in }
    ) -> Bool {
        let state = observationState()
        while true {
            let (current, generation, ended) = locked { (state.observers, state.observersGeneration, observationEnded) }
            if ended { return false }
            var updated = current
            transform(&updated)
            let swapped = locked { () -> Bool in
                guard state.observersGeneration == generation, !observationEnded else { return false }
                state.observers = updated
                state.observersGeneration &+= 1
                observerCount = Int32(clamping: updated.count)
                whenSwapped(state)
                return true
            }
            withExtendedLifetime(current) {}
            if swapped { return true }
        }
    }

    /// Finishes every observer: the config is going away. No observer can be added after.
    func endObservation() {
        let lock = self.lock
        lock.lock()
        observationEnded = true
        // Most settings were never observed: nothing to take, and no observer list (a generic type to look up).
        guard let state = observation else {
            lock.unlock()
            return
        }
        let ended = state.observers
        state.observers = []
        state.observersGeneration &+= 1
        observerCount = 0
        lock.unlock()
        for observer in ended { observer.onEnd?() }
    }
}
