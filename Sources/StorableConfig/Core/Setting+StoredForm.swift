/// What a module that reads or writes the store itself for a setting needs: the key and store, and a stored
/// value read, shown and checked as the setting would (history and rollback, in StorableConfigEtcd).
extension Setting {
    /// The key under which the store holds the value now: see ``AnySetting/storeKey``.
    public var storeKey: String {
        guard let binding = locked({ binding }) else { return "" }
        return binding.context.hub.storeKey(binding.key)
    }

    /// The store of the setting's config; `nil` for a setting that belongs to no config.
    public var store: (any ConfigStore)? { locked { binding }?.context.store }

    /// The value that `stored` reads as in this setting, as a load reads it: fields that another version of the
    /// type lacks are filled from the default. `nil` if it is not a value of the type, or a field it has is not
    /// of the field's type. The value's range or check is not applied.
    public func value(of stored: StoredValue) -> Value? {
        var fallbacks: [ValueEvolution.FieldFallback] = []
        guard let value = try? decodeFillingGaps(stored, traits: ValueTraits<Value>.shared, fallbacks: &fallbacks),
            fallbacks.isEmpty
        else { return nil }
        return value
    }

    /// `stored` as text in the form of ``valueText``: see ``AnySetting/valueText(of:)``.
    public func valueText(of stored: StoredValue) -> String? {
        value(of: stored).flatMap { try? ValueTraits<Value>.shared.encode($0) }.map(text(of:))
    }

    /// What an assignment of the value that `stored` holds writes: see ``AnySetting/storedValueToAssign(_:)``.
    public func storedValueToAssign(_ stored: StoredValue) throws -> StoredValue {
        let traits = ValueTraits<Value>.shared
        let value: Value
        do {
            // A value stored by another version of the type reads as it does in the setting.
            var fallbacks: [ValueEvolution.FieldFallback] = []
            value = try decodeFillingGaps(stored, traits: traits, fallbacks: &fallbacks)
            if let fallback = fallbacks.first {
                throw StoredValueCoding.Failure(
                    description: "its field \(fallback.path) is not of the field's type"
                        + (isSecret ? "" : " (\(fallback.reason))"))
            }
        } catch {
            // A decoder's message may quote the value.
            throw StorableConfigError.typeMismatch(
                key: key, expectedType: valueTypeName,
                found: isSecret ? .string(StorableConfigError.redacted) : stored,
                reason: isSecret ? "it is not \(TypeName.withArticle(valueTypeName))" : "\(error)")
        }
        if let error = validationError(value) { throw error }
        var encoded: StoredValue
        do {
            encoded = try traits.encode(value)
        } catch {
            throw StorableConfigError.encodingFailed(
                key: key, reason: isSecret ? StorableConfigError.redacted : "\(error)")
        }
        // The members of `stored` that this version of the type does not know are written with it.
        if let known = knownMembers(of: stored, writing: encoded) {
            encoded = ValueEvolution.carrying(stored, into: encoded, known: known) ?? encoded
        }
        if let overridden { reportAssignment(overriddenBy: overridden) }
        return encoded
    }
}
