import Foundation

// NSUbiquitousKeyValueStore is on every Apple platform this package supports (watchOS from 9.0, the package's
// floor there), and in no Foundation elsewhere. This part cannot be compiled on Linux: it is written against
// Apple's documented API, and the translation of its notices, below the `#if`, is tested here.
#if canImport(Darwin)
    // `@unchecked`: its stored property is the store, which keeps its own state safe across threads as
    // `UserDefaults` does, but which not every SDK this package supports marks `Sendable`.
    /// A key-value cloud over iCloud's key-value store, `NSUbiquitousKeyValueStore`.
    ///
    /// It hands ``CloudSync`` the store's values as data, and the store's
    /// `didChangeExternallyNotification` as ``CloudChange``s, with their reasons. The app needs the iCloud
    /// capability with key-value storage turned on (the `com.apple.developer.ubiquity-kvstore-identifier`
    /// entitlement); without it, ``synchronize()`` returns `false`, and nothing reaches other devices.
    ///
    /// ```swift
    /// let sync = CloudSync(cloud: UbiquitousKeyValueCloud(), local: UserDefaultsStore())
    /// let app = AppConfig(store: sync.store)
    /// sync.sync(app, only: [\.$userName])
    /// ```
    ///
    /// Its ``KeyValueCloud/name`` is `iCloud`.
    public final class UbiquitousKeyValueCloud: KeyValueCloud, @unchecked Sendable {
        /// The iCloud key-value store.
        public let store: NSUbiquitousKeyValueStore

        /// Creates a cloud over `store`: by default the app's iCloud key-value store.
        public init(_ store: NSUbiquitousKeyValueStore = .default) {
            self.store = store
        }

        /// The data the store holds for `key`, or `nil`.
        public func data(forKey key: String) -> Data? {
            store.data(forKey: key)
        }

        /// Sets the data of `key` in the store, which sends it to iCloud when it can.
        public func setData(_ data: Data, forKey key: String) {
            store.set(data, forKey: key)
        }

        /// The keys the store holds.
        public var keys: [String] {
            Array(store.dictionaryRepresentation.keys)
        }

        /// Asks the store to exchange its values with iCloud; `false` when it cannot (no entitlement, for
        /// example).
        @discardableResult
        public func synchronize() -> Bool {
            store.synchronize()
        }

        /// Calls `handler` for each `didChangeExternallyNotification` of the store, on the thread that posts it,
        /// until the returned observation is cancelled or released.
        public func observeChanges(_ handler: @escaping @Sendable (CloudChange) -> Void) -> CloudObservation {
            let observer = NotificationCenter.default.addObserver(
                forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
            ) { [weak self] notification in
                let change = CloudChange(
                    ubiquitousUserInfo: notification.userInfo ?? [:],
                    reasonKey: NSUbiquitousKeyValueStoreChangeReasonKey,
                    changedKeysKey: NSUbiquitousKeyValueStoreChangedKeysKey,
                    allKeys: { self?.keys ?? [] })
                handler(change)
            }
            let token = ObserverToken(observer)
            return CloudObservation { NotificationCenter.default.removeObserver(token.observer) }
        }
    }

    /// The token of a notification observer, carried to the observation that removes it.
    // `@unchecked`: the token is only handed back to `NotificationCenter.removeObserver`, which may be called from
    // any thread.
    private final class ObserverToken: @unchecked Sendable {
        let observer: any NSObjectProtocol

        init(_ observer: any NSObjectProtocol) {
            self.observer = observer
        }
    }
#endif

extension CloudChange.Reason {
    /// The reason that a number under `NSUbiquitousKeyValueStoreChangeReasonKey` names, by the values of
    /// Foundation's constants; `nil` for a number this version does not know.
    init?(ubiquitousReason number: Int) {
        switch number {
        case 0: self = .serverChange  // NSUbiquitousKeyValueStoreServerChange
        case 1: self = .initialSyncChange  // NSUbiquitousKeyValueStoreInitialSyncChange
        case 2: self = .quotaViolationChange  // NSUbiquitousKeyValueStoreQuotaViolationChange
        case 3: self = .accountChange  // NSUbiquitousKeyValueStoreAccountChange
        default: return nil
        }
    }
}

extension CloudChange {
    /// The change that the user info of a `didChangeExternallyNotification` describes: the reason, a number
    /// under `reasonKey`, and the keys, an array of strings under `changedKeysKey`.
    ///
    /// Apple documents both entries as ones the notice "can" hold. A notice without a reason, or with one this
    /// version does not know, is taken as a server change: merging a key again changes nothing unless the cloud's
    /// stamp is later. A notice without keys is taken to concern all of them (`allKeys`).
    init(
        ubiquitousUserInfo userInfo: [AnyHashable: Any], reasonKey: String, changedKeysKey: String,
        allKeys: () -> [String]
    ) {
        // An NSNumber and an NSArray of strings, which bridge to these.
        let reason = (userInfo[reasonKey] as? Int).flatMap(Reason.init(ubiquitousReason:)) ?? .serverChange
        self.init(reason: reason, keys: userInfo[changedKeysKey] as? [String] ?? allKeys())
    }
}
