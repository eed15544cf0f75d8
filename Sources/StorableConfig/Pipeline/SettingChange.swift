/// A change to write: a `nil` stored value removes the key; the typed value spares receivers a decode.
@usableFromInline
struct SettingChange {
    let key: String
    let stored: StoredValue?
    let typedValue: (any Sendable)?

    @usableFromInline
    init(key: String, stored: StoredValue?, typedValue: (any Sendable)?) {
        self.key = key
        self.stored = stored
        self.typedValue = typedValue
    }
}
