/// How an assignment reaches the store and comes back: encoded outside every lock, written through the
/// storage's hub, then taken under the setting's lock and, when someone listens, queued for delivery (see
/// Setting+Delivery.swift and Docs/Design.md).
extension Setting {
    func assign(_ newValue: Value) {
        // `bind` sets the traits and the binding once, in the config's initializer, before anyone else can
        // reach this setting, and nothing changes them after: read without the lock, as the getter reads them.
        guard let traits, let binding else {
            assignBeforeBinding(newValue)
            return
        }
        if assignmentHasRules, !mayAssign(newValue) { return }
        assign(newValue, through: binding, traits: traits)
    }

    /// Encodes `newValue` and writes it.
    func assign(_ newValue: Value, through binding: SettingBinding, traits: ValueTraits<Value>) {
        var stored: StoredValue?
        if removesOnNil, traits.isNil?(newValue) == true {
            stored = nil
        } else {
            do {
                stored = try traits.encode(newValue)
            } catch {
                encodingFailed(newValue, error: error, binding: binding)
                return
            }
            if !traits.isNative, case .dictionary? = stored {
                assignKeepingUnknownMembers(newValue, stored: stored, through: binding, traits: traits)
                return
            }
        }
        write(newValue, stored: stored, through: binding, traits: traits)
    }

    /// Writes `encoded`, the stored form of `newValue`, with the members of the stored value that this version of
    /// the type does not know (fields a newer version added) carried over, so that a newer version reading it
    /// again loses nothing (see ``ValueEvolution/knownMembers(of:writing:as:filling:)``). The store is read
    /// for them unless the setting holds the value it last wrote and that value carried none.
    @inline(never)
    func assignKeepingUnknownMembers(
        _ newValue: Value, stored encoded: StoredValue?, through binding: SettingBinding, traits: ValueTraits<Value>
    ) {
        guard let encoded else {
            write(newValue, stored: nil, through: binding, traits: traits)
            return
        }
        var carried: StoredValue?
        if let old = storedValueToKeep(binding: binding), let known = knownMembers(of: old, writing: encoded) {
            carried = ValueEvolution.carrying(old, into: encoded, known: known)
        }
        guard let written = write(newValue, stored: carried ?? encoded, through: binding, traits: traits) else {
            return
        }
        // While the setting holds this write's version, the store holds nothing more to keep.
        locked {
            binding.context.onlyKnownMembers[binding.index] = carried == nil && version == written ? written : nil
        }
    }

    /// The stored value whose unknown members an assignment keeps: this thread's batch's change of the key if
    /// it has one (a reset in the batch leaves nothing to keep), else what the store holds under the key (or the
    /// earlier key that still holds it); `nil` when the setting holds the value it last wrote, with nothing to
    /// keep.
    private func storedValueToKeep(binding: SettingBinding) -> StoredValue? {
        let context = binding.context
        if context.isBatching, let batched = context.batchedChange(forKey: binding.key) { return batched.stored }
        guard locked({ context.onlyKnownMembers[binding.index] != version }) else { return nil }
        return (try? context.hub.values(forKeys: [binding.key], in: context.store))?[binding.key]
    }

    /// Not bound yet: the subclass's initializer is assigning before `super.init`, which sets the default,
    /// exactly like the declaration's initial value does. (A setting that is no config's property is never
    /// bound.) Out of line, to keep `assign` free of its locals.
    @inline(never)
    func assignBeforeBinding(_ newValue: Value) {
        let lock = self.lock
        lock.lock()
        guard binding == nil else {
            // Bound meanwhile, on this thread: cannot happen in a config's initializer, but stay correct.
            lock.unlock()
            assign(newValue)
            return
        }
        let replacedValue = value
        let replacedDefault = declaredDefault
        value = newValue
        declaredDefault = newValue
        lock.unlock()
        withExtendedLifetime(replacedValue) {}
        withExtendedLifetime(replacedDefault) {}
    }

    /// Shows `newValue` at once, then writes `stored` (`nil` removes the key) and tells the observers once the
    /// write has its version; inside a batch on this thread, leaves the write, and telling the observers, to the
    /// end of the batch.
    ///
    /// Code that the store runs inside its call (Apple's `UserDefaults` posts `didChangeNotification` there, and
    /// key-value observers run there) reads the value being written, and so does any thread from then on; the
    /// observers hear of it only after the store call returns, as the change from the value they last heard of.
    /// A failed call of a store that keeps no failed writes has every config read the key again, which puts the
    /// stored value back without telling them of a change that never was.
    /// (`newValue` also goes to the other configs on the storage as the typed value, sparing them a decode;
    /// they use it only with a stored value.) Returns the write's version; `nil` inside a batch, or when the
    /// write failed and was discarded.
    @discardableResult
    func write(
        _ newValue: Value, stored: StoredValue?, through binding: SettingBinding, traits: ValueTraits<Value>
    ) -> UInt64? {
        let isSet = stored != nil
        let context = binding.context
        let number = showWhileWriting(newValue, isSet: isSet, context: context)
        guard !context.isBatching else {
            let change = SettingChange(key: binding.key, stored: stored, typedValue: newValue)
            context.deferToBatch(change) { [self] version in
                apply(
                    newValue, isSet: isSet, version: version, stored: stored, fromStore: isSet, telling: false,
                    endingShow: number)
            }
            return nil
        }
        let (version, discarded) = context.writeOne(
            key: binding.key, index: binding.index, stored: stored, typedValue: newValue)
        guard discarded else {
            apply(newValue, isSet: isSet, version: version, stored: stored, fromStore: isSet, endingShow: number)
            return version
        }
        endShowing(number)
        // A read made during the store call (a view's, under Observation tracking) saw the value that failed.
        binding.observationDidChange()
        return nil
    }

    /// Makes reads give `newValue` (with `isSet`), the value of an assignment whose write is about to start, and
    /// returns the assignment's number for ``endShowing(_:)``. An assignment that starts meanwhile (another
    /// thread's, or a handler's inside the store call) shows its own value in turn. An overridden setting shows
    /// nothing: the layer above the store keeps being read, as it is after the write; a removal shows what a
    /// file source below the store gives, if one does, else the default.
    func showWhileWriting(_ newValue: Value, isSet: Bool, context: ConfigContext) -> UInt64 {
        let lock = self.lock
        lock.lock()
        // Numbered by the config (under its lock, which this is): a setting keeps no counter of its own.
        context.lastPendingNumber &+= 1
        let number = context.lastPendingNumber
        if hasLayers, extras?.overridden != nil {
            lock.unlock()
            return number
        }
        // Swapped in: the value replaced is released after the unlock, with `held`.
        var held = newValue
        if !isSet {
            if hasLayers, let fallback = extras?.fallback { held = fallback.value } else { held = declaredDefault }
        }
        swap(&pendingValue, &held)
        pendingNumber = number
        pendingIsSet = isSet
        lock.unlock()
        withExtendedLifetime(held) {}
        return number
    }

    /// Stops showing the value of assignment `number`, unless a later assignment shows its own.
    func endShowing(_ number: UInt64) {
        let lock = self.lock
        lock.lock()
        if pendingNumber == number { pendingNumber = 0 }
        lock.unlock()
    }

    /// Whether `newValue` may be assigned: it passes the setting's check (otherwise the failure is reported).
    /// An assignment to an overridden setting is reported, once, and goes on: it is stored.
    @inline(never)
    func mayAssign(_ newValue: Value) -> Bool {
        if let error = validationError(newValue) {
            StorableConfig.report(error)
            return false
        }
        if let overridden { reportAssignment(overriddenBy: overridden) }
        return true
    }

    /// Under the lock: replaces `shown`, what the store gives (`fromStore` false: the store gives nothing usable),
    /// with the value the setting reads: the layer above the store, else the store's value, else the layer below
    /// the store, else the default; returns whether it is the store's value. Records which layer it is. Resolved in the
    /// critical section that checks and sets the version, so that a value worked out from layers that have
    /// changed since can never be taken.
    /// `filled`: the value of a layer above that gives some fields, filled from the layers below it.
    @inline(never)
    func layeredValueLocked(_ shown: inout Value, fromStore: Bool, filled: FilledLayer<Value>?) -> Bool {
        guard let extras else { return true }
        extras.layersUnapplied = false
        if let above = extras.overridden {
            extras.appliedLayer = .above
            if let filled, filled.layer === above { shown = filled.value } else { shown = above.value }
            return false
        }
        if !fromStore, let below = extras.fallback {
            extras.appliedLayer = .below
            shown = below.value
            return false
        }
        extras.appliedLayer = .none
        if !fromStore { shown = declaredDefault }
        return fromStore
    }

    /// Reports a value that cannot be encoded, and holds it in memory only.
    @inline(never)
    func encodingFailed(_ newValue: Value, error: any Error, binding: SettingBinding) {
        StorableConfig.report(
            .encodingFailed(key: binding.key, reason: isSecret ? StorableConfigError.redacted : "\(error)"))
        apply(newValue, isSet: isSet, version: nil, stored: nil)
    }

    /// Returns the observation state, making it, outside the lock, on first use.
    func observationState() -> ObservationState<Value> {
        let lock = self.lock
        lock.lock()
        let existing = observation
        lock.unlock()
        if let existing { return existing }
        let made = ObservationState<Value>()
        lock.lock()
        if let observation {
            lock.unlock()
            return observation
        }
        observation = made
        lock.unlock()
        return made
    }

    /// Takes `newValue` unless the setting already holds a newer version (`nil`: a change kept in memory
    /// only), then tells the observers if the value changed. `stored` is its stored form, when known.
    /// With layers, `newValue` is what the store gives (`fromStore` false: nothing usable, and `newValue` is the
    /// declared default), and the layers are resolved under the lock (see `layeredValueLocked`).
    ///
    /// This is where every value arrives: an assignment, a batch, another config's write, an outside change, a
    /// reload, a source's change. The version decides, in the critical section that sets the value; a change is
    /// queued there, and told after the lock, in order, by one thread at a time (`deliverChanges`). With `telling`
    /// false, what is left to tell is returned instead of told, so that the caller can have every setting of one
    /// change take its value before any observer hears of it. `endingShow`: the number of the assignment whose
    /// value `showWhileWriting` shows (0: none), which stops being shown in the critical section that takes it.
    @discardableResult
    func apply(
        _ newValue: Value, isSet: Bool, version newVersion: UInt64?, stored: StoredValue?, fromStore: Bool = true,
        telling: Bool = true, endingShow shownNumber: UInt64 = 0
    ) -> (() -> Void)? {
        let lock = self.lock
        // Set before the setting is reachable (`prepareForLayers`), so read once, without the lock.
        let hasLayers = self.hasLayers
        // A layer above that gives some fields takes the others from the layers below: read outside the lock.
        let filled = hasLayers ? valueFilledFromLayersBelow(stored: fromStore ? stored : nil) : nil
        // Made before the lock is taken, when someone listens: the queued change and the state that holds it.
        var node: PendingChange<Value>?
        var state: ObservationState<Value>?
        while true {
            lock.lock()
            if let newVersion, newVersion < version {
                if shownNumber != 0, pendingNumber == shownNumber { pendingNumber = 0 }
                lock.unlock()
                return nil
            }
            guard let binding, let traits else {
                let replaced = value
                value = newValue
                hasStoredValue = isSet
                lock.unlock()
                withExtendedLifetime(replaced) {}
                return nil
            }
            // The config's observers are counted under this lock, the config's.
            let listening = observerCount > 0 || binding.context.changeObserverCount > 0
            if listening, node == nil, let observation, let spare = observation.spare {
                // The node the last delivery emptied: moved out and filled under the lock (copies into empty
                // fields: nothing is allocated or released).
                observation.spare = nil
                spare.fill(new: newValue, stored: stored)
                node = spare
                state = observation
            }
            if listening, node == nil || state == nil {
                lock.unlock()
                node = node ?? PendingChange.made(new: newValue, stored: stored)
                state = state ?? observationState()
                continue
            }
            if let newVersion { version = newVersion }
            // With layers, what the setting reads is resolved here, with the version (a copy: the caller still
            // holds `newValue`, so the node's copy it replaces is not the last).
            var shown = newValue
            var shownStored = stored
            if hasLayers {
                if !layeredValueLocked(&shown, fromStore: fromStore, filled: filled) { shownStored = nil }
                node?.fill(new: shown, stored: shownStored)
            }
            let old = value
            value = shown
            hasStoredValue = isSet
            if shownNumber != 0, pendingNumber == shownNumber { pendingNumber = 0 }
            guard listening, let node, let state else {
                lock.unlock()
                // Nobody to tell in order: only the Observation framework needs to hear of a change.
                let changed = Self.hasChanged(
                    from: old, to: shown, stored: shownStored, traits: traits, listening: false)
                withExtendedLifetime(old) {}
                guard changed else { return nil }
                guard telling else { return binding.observationDidChange }
                binding.observationDidChange()
                return nil
            }
            // Queued in version order under the lock; whether it is a change at all is decided by the
            // delivering thread, outside the lock, because `==` and `encode(to:)` are the value type's own code.
            state.changeCount += 1
            node.number = state.changeCount
            node.fill(old: old)
            state.enqueue(node)
            let mustDeliver = !state.isDelivering
            state.isDelivering = true
            lock.unlock()
            withExtendedLifetime(old) {}
            guard mustDeliver else { return nil }
            guard telling else { return { [self] in deliverChanges(binding, traits: traits) } }
            deliverChanges(binding, traits: traits)
            return nil
        }
    }

    /// Whether `new` differs from `old`: by `==` for `Equatable` values, else, when someone listens, by stored
    /// form (a change that only Observation hears of is taken as a change without encoding). Called without
    /// the lock.
    static func hasChanged(
        from old: Value, to new: Value, stored: StoredValue?, traits: ValueTraits<Value>, listening: Bool
    ) -> Bool {
        if let isEqual = traits.isEqual { return !isEqual(old, new) }
        guard listening else { return true }
        return (try? traits.encode(old)) != (stored ?? (try? traits.encode(new)))
    }
}
