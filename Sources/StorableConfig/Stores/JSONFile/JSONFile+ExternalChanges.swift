/// Which keys someone else changed: a read of the file compared with what this process held and wrote.
extension JSONFile {
    /// Records the keys whose values differ from `previous` and `previousRespellings`, other than this
    /// process's own changes. Called with `lock` held.
    func noteExternalChanges(
        from previous: [String: StoredValue], _ previousRespellings: [ExactKey: FileText.Respelling]
    ) {
        if previous != values {
            for (key, value) in values where previous[key] != value && !isOwnChange(key) {
                externallyChanged.insert(key)
            }
            for key in previous.keys where values[key] == nil && !isOwnChange(key) {
                externallyChanged.insert(key)
            }
        }
        guard !(previousRespellings.isEmpty && respellings.isEmpty), previousRespellings != respellings else { return }
        for (key, respelling) in respellings where previousRespellings[key] != respelling && !isOwnChange(key.string) {
            externallyChanged.insert(key.string)
        }
        for key in previousRespellings.keys where respellings[key] == nil && !isOwnChange(key.string) {
            externallyChanged.insert(key.string)
        }
    }

    /// Whether this process changed `key`, in any spelling, and has not written it yet. Called with `lock` held.
    private func isOwnChange(_ key: String) -> Bool {
        unwritten[key] != nil || unwrittenRespellings.keys.contains { $0.string == key }
    }
}
