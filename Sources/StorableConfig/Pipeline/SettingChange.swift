/// A change to write: a `nil` stored value removes the key; the typed value spares receivers a decode.
struct SettingChange {
    let key: String
    let stored: StoredValue?
    let typedValue: (any Sendable)?
    /// Whether `key` is an earlier key of the writer's own setting (a reset removing what is left there): the
    /// store's key itself, which aliases never send to a current key.
    let isEarlierKey: Bool

    init(key: String, stored: StoredValue?, typedValue: (any Sendable)?, isEarlierKey: Bool = false) {
        self.key = key
        self.stored = stored
        self.typedValue = typedValue
        self.isEarlierKey = isEarlierKey
    }
}
