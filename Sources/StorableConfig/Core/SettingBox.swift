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
    /// Returns why the declared default cannot be stored and read back, or `nil` if it can.
    func declarationProblem() -> String?
    /// Reads the default at once, inside a batch whose write will remove the stored value.
    func showPendingReset()
    /// Takes the value that the store holds at `version`, unless the setting already holds a newer one.
    func load(_ stored: StoredValue?, typedValue: (any Sendable)?, version: UInt64)
}
