import Foundation
import StorableConfig

/// Syncs chosen settings across a user's devices through a key-value cloud: iCloud's key-value store on Apple
/// platforms (``UbiquitousKeyValueCloud``), or any ``KeyValueCloud``.
///
/// The local store stays the source of truth; the cloud mirrors the synced keys. Create the configs over
/// ``store``, then say which of their settings sync:
///
/// ```swift
/// let sync = CloudSync(cloud: UbiquitousKeyValueCloud(), local: UserDefaultsStore())
/// let app = AppConfig(store: sync.store)
/// sync.sync(app, only: [\.$userName, \.$selectedHobbies])   // or sync.sync(app): every setting
/// ```
///
/// Each synced value goes to the cloud with a stamp (a hybrid logical clock reading and the device's identifier)
/// inside the same cloud value; the later stamp wins, per key, and per record for ``Records``. A reset or `nil`
/// leaves a tombstone, so that the deletion reaches every device. A default is never sent: a new device takes the
/// cloud's values. A value this device held before sync was turned on loses to any value already in the cloud,
/// and goes up where there is none. A value that arrives from the cloud is written to the local store and reaches
/// observers as an outside change does; ``StorableConfig/Setting/origin`` and ``StorableConfig/ConfigChange/origin``
/// name the device it came from. What cannot be synced is reported to ``StorableConfig/StorableConfig/errorHandler``
/// as ``StorableConfig/StorableConfigError/notSynced(key:reason:)``. See Docs/CloudSync.md.
public final class CloudSync: Sendable {
    let engine: SyncEngine
    private let syncedStore: SyncedStore
    private let observation: Locked<CloudObservation?> = Locked(nil)

    /// Creates a sync between `local` and `cloud`, and starts listening to the cloud's changes.
    ///
    /// - Parameters:
    ///   - cloud: The key-value cloud.
    ///   - local: The store the configs keep their values in.
    ///   - device: This device's identifier, which breaks ties between writes in one millisecond. By default one
    ///     made once and kept in `local` under `StorableConfigCloud.device`.
    ///   - now: The wall clock.
    public init(
        cloud: any KeyValueCloud, local: any ConfigStore, device: String? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        let device = device ?? Self.deviceIdentifier(in: local)
        engine = SyncEngine(cloud: cloud, local: local, device: device, now: now)
        syncedStore = SyncedStore(engine: engine)
        engine.syncedStore.withLock { [syncedStore] in $0.store = syncedStore }
        let observation = cloud.observeChanges { [weak engine] change in engine?.received(change) }
        self.observation.withLock { $0 = observation }
    }

    /// The store to create synced configs over: the local store, with the synced keys' changes sent to the cloud.
    public var store: any IdentifiedConfigStore { syncedStore }

    /// The cloud.
    public var cloud: any KeyValueCloud { engine.cloud }

    /// This device's identifier.
    public var device: String { engine.device }

    /// The keys of the settings synced, in no order.
    public var syncedKeys: [String] { engine.syncedKeys }

    /// Syncs every setting of `config` (a secret one is reported and left out: see ``sync(_:only:)``).
    public func sync(_ config: StorableConfig) {
        sync(config, config.allSettings)
    }

    /// Syncs the settings of `config` that `settings` name (`\.$userName`): per setting.
    ///
    /// A setting declared secret is not synced (the key-value cloud is no place for a secret): it is reported.
    /// A key path that names no setting stops the program, naming it.
    public func sync<Config: StorableConfig>(_ config: Config, only settings: [PartialKeyPath<Config>]) {
        sync(config, settings.map { Self.setting(at: $0, of: config) })
    }

    /// Syncs the settings of `config` but those that `settings` name.
    public func sync<Config: StorableConfig>(_ config: Config, except settings: [PartialKeyPath<Config>]) {
        let left = Set(settings.map { ObjectIdentifier(Self.setting(at: $0, of: config)) })
        sync(config, config.allSettings.filter { !left.contains(ObjectIdentifier($0)) })
    }

    /// Exchanges changes with the cloud now and merges every synced key: what to call when the app becomes
    /// active, since the cloud may have missed telling of a change. Returns what the cloud's `synchronize()`
    /// returned.
    @discardableResult
    public func synchronize() -> Bool { engine.synchronize() }

    private func sync(_ config: StorableConfig, _ settings: [any AnySetting]) {
        guard config.store === syncedStore else {
            for setting in settings {
                engine.report(setting.key, "its config was created over another store than the sync's store")
            }
            return
        }
        var synced: [(key: String, holdsRecords: Bool)] = []
        for setting in settings {
            if setting.isSecret {
                engine.report(setting.key, "it is secret, and the key-value cloud is no place for a secret")
            } else {
                synced.append((setting.key, setting.holdsRecords))
            }
        }
        engine.attach(synced)
    }

    private static func setting<Config: StorableConfig>(at path: PartialKeyPath<Config>, of config: Config)
        -> any AnySetting
    {
        guard let setting = config[keyPath: path] as? any AnySetting else {
            preconditionFailure("\(path) names no setting of \(Config.self): name the setting, as in \\.$userName")
        }
        return setting
    }

    private static func deviceIdentifier(in local: any ConfigStore) -> String {
        let key = "StorableConfigCloud.device"
        if case .string(let device)? = try? local.value(forKey: key), !device.isEmpty { return device }
        let device = UUID().uuidString
        try? local.setValue(.string(device), forKey: key)
        return device
    }
}
