import Foundation

/// A value that a layer gives (an override, or a file source above or below the store), read from its candidate. A
/// class, so that reading whether a setting has one looks up no generic type.
final class SettingOverride<Value> {
    let value: Value
    /// What the layer gave: where it comes from, whether it is secret, the layer's identity.
    let candidate: OverrideCandidate
    /// The text or JSON the value was read from: two values from one origin with one text are the same.
    let text: String
    /// The JSON object given, when it leaves out fields of the type: they are read from the stored value, else
    /// from the layer below, else from the declared default, as `value` has them (see
    /// `Setting.valueFilledFromLayersBelow`).
    let partialForm: StoredValue?

    init(_ value: Value, readFrom candidate: OverrideCandidate, partialForm: StoredValue?) {
        self.value = value
        self.candidate = candidate
        text = candidate.value.text
        self.partialForm = partialForm
    }

    /// Whether `self` and `other` are the same value from the same place, or both `nil`.
    static func areSame(_ one: SettingOverride<Value>?, _ other: SettingOverride<Value>?) -> Bool {
        guard let one, let other else { return one == nil && other == nil }
        return one === other || (one.candidate.origin == other.candidate.origin && one.text == other.text)
    }
}

/// The value of a layer above the store that gives some fields, filled from a stored value: valid while the
/// setting's layer is still `layer`.
final class FilledLayer<Value> {
    let layer: SettingOverride<Value>
    let value: Value

    init(layer: SettingOverride<Value>, value: Value) {
        self.layer = layer
        self.value = value
    }
}

extension StoredValue {
    /// This value with `other`'s members put over it, through nested dictionaries; `other` itself where either is
    /// not a dictionary.
    func overlaid(with other: StoredValue) -> StoredValue {
        guard case .dictionary(var members) = self, case .dictionary(let others) = other else { return other }
        for (name, member) in others { members[name] = members[name]?.overlaid(with: member) ?? member }
        return .dictionary(members)
    }
}

/// What a layer gives for a setting: text (an environment variable, a launch argument, a `.env` line, a file of a
/// directory) read in the grammar of `assign(parsing:)`, or a stored value (a member of a JSON file).
enum CandidateValue: Sendable {
    case text(String)
    case stored(StoredValue)

    /// The text, or the value as compact JSON.
    var text: String {
        switch self {
        case .text(let text): text
        case .stored(let stored): JSONText.string(from: stored, pretty: false)
        }
    }
}

/// A value that a layer gives for a setting.
struct OverrideCandidate: Sendable {
    let source: SettingLayer
    /// `environment variable APP_CONFIG_USER_NAME`, `launch argument --app-config-user-name`.
    let origin: String
    let value: CandidateValue
    /// The source's identity, for the last good value a live source gave; empty for launch arguments and
    /// environment variables, which never change.
    var layer = ""
    /// Whether the source is declared secret.
    var isSecret = false
}

/// What resolving a setting's layers found.
struct LayerOutcome {
    /// A problem for each value that did not fit, with the layer that gave it (empty for a launch argument or an
    /// environment variable).
    var problems: [(layer: String, problem: StorableConfigError)] = []
    /// Whether the value above the store, or the one below it, is another than before.
    var changed = false
    /// A source below the store whose new value the store or an override hides: its layer and origin.
    var hidden: (layer: String, origin: String)?
}

extension Setting {
    /// The layer that gave the value the setting holds, if one did.
    private var appliedLayerValue: SettingOverride<Value>? {
        guard let extras else { return nil }
        return locked { () -> SettingOverride<Value>? in
            switch extras.appliedLayer {
            case .none: nil
            case .above: extras.overridden
            case .below: extras.fallback
            }
        }
    }

    /// Where the value comes from: a launch argument, an environment variable, a file source, the store, or the
    /// default.
    public var layer: SettingLayer {
        if let layer = appliedLayerValue { return layer.candidate.source }
        return isSet ? .stored : .default
    }

    /// Where the value comes from, as a person would say it: `launch argument --app-config-port`,
    /// `environment variable APP_CONFIG_PORT`, `file /etc/app/conf.d/APP_CONFIG_PORT`, `.env file ./.env line 3`,
    /// `the store` (or what the store says of the value, such as `iCloud (device "iPad")`: see
    /// ``ConfigStore/origin(forKey:)``), or `the declared default`.
    public var origin: String {
        if let layer = appliedLayerValue { return layer.candidate.origin }
        guard isSet else { return "the declared default" }
        return store?.origin(forKey: storeKey) ?? "the store"
    }

    /// A value that a file source below the store gives but the setting does not read, because a stored value or
    /// an override hides it: ``reset()`` brings it back when the store hides it. `nil` when nothing is hidden.
    public var hiddenSourceValue: HiddenSourceValue? {
        guard let extras else { return nil }
        let fallback = locked { extras.appliedLayer == .below ? nil : extras.fallback }
        guard let fallback else { return nil }
        let shown = isSecret || fallback.candidate.isSecret ? StorableConfigError.redacted : fallback.text
        return HiddenSourceValue(valueText: shown, origin: fallback.candidate.origin)
    }

    /// Whether the value is never shown: the setting is declared secret, or the value it reads comes from a source
    /// declared secret.
    public var isRedacted: Bool {
        if isSecret { return true }
        return appliedLayerValue?.candidate.isSecret ?? false
    }

    /// Makes the setting ready to take layers (see ``takeLayers(above:below:isFirstLoad:generation:)``): in the
    /// config's initializer, before anyone else can reach it. `hasLayerBelow`: a `nil` assigned to an optional whose
    /// default is `nil` is then stored as "no value" rather than removing the stored value, which would bring the
    /// source's value.
    func prepareForLayers(hasLayerBelow: Bool) {
        let extras = self.extras ?? SettingExtras(declaredKeys: .derived, rules: nil)
        locked {
            self.extras = extras
            extras.assignmentHasRules = true
            extras.hasLayers = true
            if hasLayerBelow { removesOnNil = false }
        }
    }

    /// The value of the layer above the store, when it gives only some fields of the value: those fields over
    /// `stored` (the store's value), the others as `stored` has them; with nothing stored, over the value of the
    /// layer below the store, if there is one. `nil` when no such layer applies, or the result does not read or
    /// fails the setting's check (the layer's own value, filled from the declared default, is read then). Runs the value type's own decoding:
    /// call it without holding a lock.
    @inline(never)
    func valueFilledFromLayersBelow(stored: StoredValue?) -> FilledLayer<Value>? {
        guard let extras else { return nil }
        let (above, below) = locked { (extras.overridden, extras.fallback) }
        guard let above, let partial = above.partialForm else { return nil }
        let traits = ValueTraits<Value>.shared
        guard let base = stored ?? below.flatMap({ try? traits.encode($0.value) }) else { return nil }
        var fallbacks: [ValueEvolution.FieldFallback] = []
        guard let value = try? decodeFillingGaps(base.overlaid(with: partial), traits: traits, fallbacks: &fallbacks),
            rules?.check?(value) == nil
        else { return nil }
        return FilledLayer(layer: above, value: value)
    }

    /// Whether the managed app configuration, a launch argument, an environment variable or a file source above the
    /// store overrides the stored value.
    public var isOverridden: Bool { overridden != nil }

    /// Resolves the values that the layers give: the first valid one of `above` is read in place of the stored
    /// value, the first valid one of `below` (`nil`: leave the one below as it is) in place of the default.
    ///
    /// A live source's value that does not fit is reported; after the config's first load (`isFirstLoad` false)
    /// the source then keeps giving the last valid value it gave, and otherwise the next candidate is read.
    /// Runs the value type's own decoding and checks: call it without holding a lock. Does not change the value
    /// the setting holds: the caller reads the store again for the settings whose layers changed.
    /// Layers of an older `generation` of the sources than those the setting holds are not taken. Call
    /// ``prepareForLayers(hasLayerBelow:)`` first.
    func takeLayers(
        above: [OverrideCandidate], below: [OverrideCandidate]?, isFirstLoad: Bool, generation: UInt64
    ) -> LayerOutcome {
        guard let extras else { preconditionFailure("takeLayers before prepareForLayers") }
        var outcome = LayerOutcome()
        let lastGood = locked { extras.lastGood }
        var good: [String: SettingOverride<Value>] = [:]
        func resolve(_ candidates: [OverrideCandidate]) -> SettingOverride<Value>? {
            for candidate in candidates {
                let problem: String
                do {
                    let value: Value
                    let traits = ValueTraits<Value>.shared
                    // A JSON object that leaves out fields of the type: they come from the layers below it.
                    var partialForm: StoredValue?
                    switch candidate.value {
                    case .text(let text):
                        value = try parse(text)
                        if !traits.isNative, let json = try? JSONText.parse(Data(text.utf8)), case .dictionary = json,
                            (try? traits.decode(json)) == nil
                        {
                            partialForm = json
                        }
                    case .stored(let stored):
                        // A field the source gives must be valid.
                        var fallbacks: [ValueEvolution.FieldFallback] = []
                        do {
                            value = try traits.decode(stored)
                        } catch {
                            value = try decodeFillingGaps(stored, traits: traits, fallbacks: &fallbacks)
                            partialForm = stored
                        }
                        if let fallback = fallbacks.first {
                            throw StoredValueCoding.Failure(description: fallback.reason)
                        }
                    }
                    if let error = validationError(value), case .invalidValue(_, _, let reason) = error {
                        problem = reason
                    } else {
                        let taken = SettingOverride(value, readFrom: candidate, partialForm: partialForm)
                        if !candidate.layer.isEmpty { good[candidate.layer] = taken }
                        return taken
                    }
                } catch {
                    problem = "it is not \(TypeName.withArticle(valueTypeName)) (expected \(expectedFormat))"
                }
                // The managed app configuration keeps no last valid value: the layer below is read.
                let kept =
                    isFirstLoad || candidate.layer.isEmpty || candidate.source == .managed
                    ? nil : lastGood[candidate.layer]
                let shown = isSecret || candidate.isSecret ? StorableConfigError.redacted : candidate.value.text
                guard let kept else {
                    let error = StorableConfigError.invalidOverride(
                        origin: candidate.origin, key: key, value: shown, reason: problem)
                    outcome.problems.append((candidate.layer, error))
                    continue
                }
                let reason =
                    "\(problem) (given by the \(candidate.origin)); the setting keeps the last valid value that "
                    + "source gave"
                outcome.problems.append((candidate.layer, .invalidValue(key: key, value: shown, reason: reason)))
                good[candidate.layer] = kept
                return kept
            }
            return nil
        }
        let newAbove = resolve(above)
        let newBelow = below.map(resolve)
        var releasedLastGood: [String: SettingOverride<Value>] = [:]
        var unappliedNewer = false
        let (replaced, hidden, taken) = locked {
            () -> ((SettingOverride<Value>?, SettingOverride<Value>?), Bool, Bool) in
            let old = (extras.overridden, extras.fallback)
            guard generation >= extras.layerGeneration else {
                unappliedNewer = extras.layersUnapplied
                return (old, false, false)
            }
            extras.layerGeneration = generation
            let aboveChanged = !SettingOverride.areSame(newAbove, old.0)
            var belowChanged = false
            if let newBelow {
                belowChanged = !SettingOverride.areSame(newBelow, old.1)
                extras.fallback = newBelow
            }
            extras.overridden = newAbove
            // The old values are released after the unlock: a value's `deinit` is code the user wrote.
            releasedLastGood = extras.lastGood
            extras.lastGood = good
            // Unchanged layers that another thread took and has not applied yet count as a change: this thread
            // applies them too.
            outcome.changed = aboveChanged || belowChanged || extras.layersUnapplied
            if outcome.changed { extras.layersUnapplied = true }
            return (old, belowChanged && !isFirstLoad && (newAbove != nil || hasStoredValue), true)
        }
        withExtendedLifetime(replaced) {}
        withExtendedLifetime(releasedLastGood) {}
        // Layers of an older generation than those the setting holds were not taken: nothing to report, but newer
        // ones that another thread took and has not applied yet are applied by this one too.
        guard taken else {
            var outcome = LayerOutcome()
            outcome.changed = unappliedNewer
            return outcome
        }
        if hidden, let below = newBelow ?? nil { outcome.hidden = (below.candidate.layer, below.candidate.origin) }
        return outcome
    }

    /// Reports, once, that an assignment to an overridden setting is stored but not read.
    func reportAssignment(overriddenBy override: SettingOverride<Value>) {
        let first = locked { () -> Bool in
            guard let extras, !extras.reportedOverriddenAssignment else { return false }
            extras.reportedOverriddenAssignment = true
            return true
        }
        if first { StorableConfig.report(.assignedWhileOverridden(key: key, origin: override.candidate.origin)) }
    }

    var isBool: Bool { Value.self == Bool.self }

    var overrideOrigin: String? { overridden?.candidate.origin }
}
