/// Which keys someone else changed: a read of the file compared with what this process held and wrote.
extension JSONFile {
    /// Records the keys whose values differ from `previous` and `previousRespellings`, other than this
    /// process's own changes. Called with `lock` held.
    func noteExternalChanges(
        from previous: [String: StoredValue], _ previousRespellings: [ExactKey: FileText.Respelling]
    ) {
        noteChanges(from: previous, to: values, key: { $0 })
        noteChanges(from: previousRespellings, to: respellings, key: \.string)
    }

    /// Records the keys of the members that differ between `previous` and `current`, other than this process's
    /// own changes. Called with `lock` held.
    private func noteChanges<Key: Hashable, Value: Equatable>(
        from previous: [Key: Value], to current: [Key: Value], key: (Key) -> String
    ) {
        guard previous != current else { return }
        let members = Set(previous.keys).union(current.keys)
        for member in members where previous[member] != current[member] && !isOwnChange(key(member)) {
            externallyChanged.insert(key(member))
        }
    }

    /// Whether this process changed `key`, in any spelling, and has not written it yet. Called with `lock` held.
    private func isOwnChange(_ key: String) -> Bool {
        unwritten[key] != nil || unwrittenRespellings.keys.contains { $0.string == key }
    }
}
