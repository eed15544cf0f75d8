import StorableConfig

/// The store that synced configs are created over (``CloudSync/store``): the local store, with the synced keys'
/// writes stamped and sent to the cloud.
///
/// It names the local store's storage as its own, so that configs over it and configs over the local store see
/// each other's writes, and the local store's reports of outside changes reach both.
final class SyncedStore: IdentifiedConfigStore, WrappingConfigStore {
    let engine: SyncEngine

    init(engine: SyncEngine) {
        self.engine = engine
    }

    var wrappedStore: any ConfigStore { engine.local }

    var storageIdentity: AnyObject { (engine.local as? any IdentifiedConfigStore)?.storageIdentity ?? engine.local }

    func value(forKey key: String) throws -> StoredValue? { try engine.local.value(forKey: key) }

    func values(forKeys keys: [String]) throws -> [String: StoredValue] { try engine.local.values(forKeys: keys) }

    func setValue(_ value: StoredValue, forKey key: String) throws {
        try engine.write([key: value], removing: [])
    }

    func removeValue(forKey key: String) throws {
        try engine.write([:], removing: [key])
    }

    func setValues(_ values: [String: StoredValue], removingValuesForKeys keysToRemove: [String]) throws {
        try engine.write(values, removing: keysToRemove)
    }

    @discardableResult
    func updateValues(
        forKeys keys: [String], _ transform: (inout [String: StoredValue]) throws -> Void
    ) throws -> [String: StoredValue] {
        try engine.update(keys, transform)
    }

    var updateAtomicity: ConfigStoreAtomicity { engine.local.updateAtomicity }

    var keepsFailedWrites: Bool { engine.local.keepsFailedWrites }

    func reload() throws { try engine.local.reload() }

    func origin(forKey key: String) -> String? { engine.origin(forKey: key) }
}
