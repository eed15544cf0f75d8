/// A change to write: a `nil` stored value removes the key; the typed value spares receivers a decode.
struct SettingChange {
    let key: String
    let stored: StoredValue?
    let typedValue: (any Sendable)?
}
