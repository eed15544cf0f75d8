import Foundation

extension Setting: SettingBox {
    func bind(schema: ConfigSchema, index: Int, context: ConfigContext) {
        // The schema's traits for this position, made by the class's first instance; looked up (a locked
        // dictionary and the generic type's metadata, about 450 instructions a setting) only if they are for
        // another type, which would be a registration gone wrong.
        let traits: ValueTraits<Value>
        if index < schema.traits.count, let known = schema.traits[index],
            known.valueType == ObjectIdentifier(Value.self)
        {
            traits = known.traits as? ValueTraits<Value> ?? ValueTraits<Value>.shared
        } else {
            traits = ValueTraits<Value>.shared
        }
        let binding = SettingBinding(context: context, schema: schema, index: index)
        let removesOnNil = traits.isNil?(defaultValue) ?? false
        locked {
            self.traits = traits
            self.removesOnNil = removesOnNil
            self.binding = binding
        }
        // From here on the config's lock guards the setting: nobody else can reach it yet.
        lock = context.settingsLock
    }

    var valueTraits: SchemaTraits? {
        SchemaTraits(valueType: ObjectIdentifier(Value.self), traits: ValueTraits<Value>.shared)
    }

    func showPendingReset() -> UInt64 {
        guard let context = locked({ binding })?.context else { return 0 }
        return showWhileWriting(defaultValue, isSet: false, context: context)
    }

    func readProblem(_ stored: StoredValue) -> String? {
        do {
            // Fields that a value written by another version of the type lacks are filled; a field that is
            // there must be valid.
            var fallbacks: [ValueEvolution.FieldFallback] = []
            let value = try decodeFillingGaps(stored, traits: ValueTraits<Value>.shared, fallbacks: &fallbacks)
            if let fallback = fallbacks.first {
                return isSecret
                    ? "its field \(fallback.path) is not of the field's type" : "\(fallback.path): \(fallback.reason)"
            }
            return rules?.check?(value)
        } catch {
            // A decoder's message may quote the value.
            return isSecret ? "it is not \(TypeName.withArticle(valueTypeName))" : "\(error)"
        }
    }

    func knownMembers(of old: StoredValue, writing new: StoredValue) -> Set<[String]>? {
        let traits = ValueTraits<Value>.shared
        guard !traits.isNative else { return nil }
        return ValueEvolution.knownMembers(of: old, writing: new, as: Value.self) { try? traits.encode(defaultValue) }
    }

    func declarationProblem() -> String? {
        let traits = ValueTraits<Value>.shared
        do {
            _ = try traits.decode(try traits.encode(defaultValue))
            if let reason = rules?.check?(defaultValue) {
                return "its declared default \(isSecret ? StorableConfigError.redacted : Self.describe(defaultValue)) "
                    + "fails its own check: \(reason)"
            }
            return nil
        } catch {
            return "values of type \(traits.typeName) cannot be stored and read back "
                + "(\(error)); declare a Codable type whose encoding round-trips"
        }
    }

    func load(
        _ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64, isFirstLoad: Bool
    ) -> (() -> Void)? {
        // With layers, what the store gives is passed on and the layers are resolved under the lock; a stored
        // value that cannot be read is not reported while an override hides it.
        // A value that a layer gives stays the layer's to give: keeping "the last good value" is for a value the
        // store gave. A stored value that cannot be read while a layer gives the value was reported when it came.
        let (holdsLayerValue, wasStored) =
            hasLayers
            ? extras.map { extras in locked { (extras.appliedLayer != .none, hasStoredValue) } } ?? (false, false)
            : (false, false)
        // A layer above gives the value: a stored value that cannot be read is not kept in its place, the layer's
        // value is applied.
        let aboveGives = hasLayers && overridden != nil
        let quietly = aboveGives || (hasLayers && !isFirstLoad && holdsLayerValue && wasStored)
        guard let stored else {
            return apply(defaultValue, isSet: false, version: version, stored: nil, fromStore: false, telling: false)
        }
        // Unwrap first: `nil as? Value` succeeds when `Value` is itself an Optional.
        if let typedValue, let typed = typedValue as? Value, rules?.check?(typed) == nil {
            return apply(typed, isSet: true, version: version, stored: stored, telling: false)
        }
        let traits = ValueTraits<Value>.shared
        // Made only for a report: a description of every value loaded was a tenth of the load.
        var shown: String { isSecret ? StorableConfigError.redacted : "\(stored)" }
        do {
            var fallbacks: [ValueEvolution.FieldFallback] = []
            let value = try decodeFillingGaps(stored, traits: traits, fallbacks: &fallbacks)
            if !quietly {
                for fallback in fallbacks {
                    StorableConfig.report(
                        .invalidValue(
                            key: fallback.key(under: key),
                            value: isSecret ? StorableConfigError.redacted : "\(fallback.stored)",
                            // A decoder's message may quote the value.
                            reason: "\(isSecret ? "It is not of the field's type." : fallback.reason) The field reads "
                                + "the declared default's value, and the stored value is left in place"))
                }
            }
            if let check = rules?.check, let reason = check(value) {
                if isFirstLoad || holdsLayerValue || aboveGives {
                    if !quietly {
                        StorableConfig.report(
                            .invalidValue(
                                key: key, value: shown,
                                reason: "\(reason); the stored value is left in place and the setting reads its default"
                            ))
                    }
                    return apply(
                        defaultValue, isSet: true, version: version, stored: nil, fromStore: false, telling: false)
                } else {
                    if !quietly {
                        StorableConfig.report(
                            .invalidValue(key: key, value: shown, reason: "\(reason)\(Self.keptReason)"))
                    }
                    keepLastGoodValue(version: version)
                    return nil
                }
            }
            return apply(value, isSet: true, version: version, stored: stored, telling: false)
        } catch {
            let found = isSecret ? StoredValue.string(StorableConfigError.redacted) : stored
            let reason = isSecret ? "it is not \(TypeName.withArticle(traits.typeName))" : "\(error)"
            let key = key
            let typeName = traits.typeName
            func report(foundText: String?) {
                if isFirstLoad || holdsLayerValue {
                    StorableConfig.report(
                        .typeMismatch(
                            key: key, expectedType: typeName, found: found, reason: reason, foundText: foundText))
                } else {
                    StorableConfig.report(
                        .invalidValue(
                            key: key, value: foundText ?? shown,
                            reason: "it is not \(TypeName.withArticle(typeName)) (\(reason))\(Self.keptReason)"))
                }
            }
            if quietly {
                // An override hides the stored value: nothing to report while it does.
            } else if !isSecret,
                let source = locked({ binding })?.context.store.innermostStore as? any OriginalTextSource
            {
                // The store's lock is not taken under the framework's: ask once they are released.
                OutsideLocks.run { report(foundText: source.originalText(forKey: key, of: stored)) }
            } else {
                report(foundText: nil)
            }
            if isFirstLoad || holdsLayerValue || aboveGives {
                return apply(
                    defaultValue, isSet: true, version: version, stored: nil, fromStore: false, telling: false)
            }
            keepLastGoodValue(version: version)
            return nil
        }
    }

    /// Decodes `stored`; a value that does not decode as it is, written by another version of the type, is read
    /// with its missing fields, and the fields that do not decode, taken from the declared default (see
    /// ``ValueEvolution``), which are added to `fallbacks`. Throws the first error when that does not help either.
    /// (No tuple of `Value` is returned: it would cost a lookup of its metadata at every load.)
    func decodeFillingGaps(
        _ stored: StoredValue, traits: ValueTraits<Value>, fallbacks: inout [ValueEvolution.FieldFallback]
    ) throws -> Value {
        do {
            return try traits.decode(stored)
        } catch {
            guard let filled = fillingGaps(of: stored, traits: traits) else { throw error }
            fallbacks += filled.fallbacks
            return filled.value
        }
    }

    /// `stored`, which does not decode as it is, read with its gaps filled from the declared default; `nil` when
    /// a gap has nothing to fill it.
    func fillingGaps(
        of stored: StoredValue, traits: ValueTraits<Value>
    ) -> (value: Value, fallbacks: [ValueEvolution.FieldFallback])? {
        guard !traits.isNative else { return nil }
        return ValueEvolution.decode(Value.self, from: stored, filling: try? traits.encode(defaultValue))
            .map { ($0.value, $0.notes.fallbacks) }
    }

    /// What a report says of a value that arrives after the config's first load and cannot be taken.
    private static var keptReason: String {
        "; the setting keeps its last good value, and the stored value is left in place"
    }

    /// Takes a stored value that arrived after the config's first load (an outside change, a reload) and is not
    /// of the setting's type or fails its check: the setting keeps the value it holds, so that a typo made in
    /// another process, in a file or with etcdctl does not change what a running program reads. Only whether a
    /// value is stored, and the version, are taken, so that an older delivery does not follow.
    private func keepLastGoodValue(version newVersion: UInt64) {
        locked {
            guard newVersion >= version else { return }
            version = newVersion
            hasStoredValue = true
        }
    }
}
