/// What a config needs from a setting without knowing its value type.
protocol SettingBox: AnySetting {
    /// Connects the setting to its config, at `index` of the class's schema; called once, from the config's
    /// initializer.
    func bind(schema: ConfigSchema, index: Int, context: ConfigContext)
    /// Finishes every observer: the config is going away.
    func endObservation()
    /// The explicit key and earlier names and keys given in the declaration.
    var declaredKeys: DeclaredKeys { get }
    /// Returns why `stored` is not a value of the setting's type, or `nil` if it is one. Runs the value type's
    /// own decoding: call it without holding a lock.
    func readProblem(_ stored: StoredValue) -> String?
    /// The places of the members of `old` and `new` that this version of the value's type knows, for
    /// ``ValueEvolution/carrying(_:into:known:)`` to keep the others when `new` is written over `old`; `nil` when
    /// nothing is to be kept. Runs the value type's own decoding: call it without holding a lock.
    func knownMembers(of old: StoredValue, writing new: StoredValue) -> Set<[String]>?
    /// Whether the setting is a record collection, whose moves from an earlier key keep the records of both keys.
    var isRecordCollection: Bool { get }
    /// Returns why the declared default cannot be stored and read back, or `nil` if it can.
    func declarationProblem() -> String?
    /// Reads the default (or a file source's value below the store) while a write that removes the stored value
    /// is under way; returns the number to end it with (``endShowing(_:)``).
    func showPendingReset() -> UInt64
    /// Stops showing the value of the write numbered `number`.
    func endShowing(_ number: UInt64)
    /// Whether the value type is `Bool`, for which a bare launch argument means `true`.
    var isBool: Bool { get }
    /// The value type's ``ValueTraits`` and the type they are for, kept by the class's schema so that binding
    /// later instances looks up none; `nil` for a setting without them.
    var valueTraits: SchemaTraits? { get }
    /// Resolves the values that layers above and below the store give, after ``prepareForLayers(hasLayerBelow:)``:
    /// see `Setting.takeLayers`.
    func takeLayers(
        above: [OverrideCandidate], below: [OverrideCandidate]?, isFirstLoad: Bool, generation: UInt64
    ) -> LayerOutcome
    /// Makes the setting ready to take layers; in the config's initializer.
    func prepareForLayers(hasLayerBelow: Bool)
    /// Where an override comes from (`environment variable APP_CONFIG_PORT`), if the setting is overridden.
    var overrideOrigin: String? { get }
    /// Takes the value that the store holds at `version`, unless the setting already holds a newer one.
    ///
    /// A value that is not of the setting's type or fails its check is reported; at the config's first load
    /// (`isFirstLoad`) the setting then reads its default, and afterwards it keeps its last good value.
    /// Returns what is left to tell the observers: call it once every setting of the change has taken its value.
    @discardableResult
    func load(_ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64, isFirstLoad: Bool) -> (() -> Void)?
}

extension SettingBox {
    var isRecordCollection: Bool { false }
}
