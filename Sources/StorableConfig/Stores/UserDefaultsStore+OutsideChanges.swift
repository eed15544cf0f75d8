import Foundation

extension UserDefaultsStore {
    /// Reads again the keys this store knows and announces those that differ from what it last read or wrote:
    /// a value written straight into the defaults (an `@AppStorage` view, code that does not use the library,
    /// a widget or an extension writing the shared suite) becomes an ordinary change of the settings it
    /// concerns, and the configs read it and tell their observers. The store's own writes were noted before
    /// they were made, so they are not announced again.
    ///
    /// Two things call it, because neither says which keys changed:
    /// - `UserDefaults.didChangeNotification` for this store's defaults object, a change in this process.
    ///   Apple's Foundation posts it synchronously from `set(_:forKey:)` and `removeObject(forKey:)`, on the
    ///   writing thread; corelibs Foundation posts none (Docs/Platforms.md).
    /// - On Apple platforms, the Darwin notification that a store on the same suite posts after each write, in
    ///   this or another process (`SuiteChangeNotice`). Its own notification reaches this store too, and reads
    ///   as no change.
    func announceOutsideChanges() {
        let keys = known.withLock { Array($0.keys) }
        guard !keys.isEmpty else { return }
        let current = storedValues(forKeys: keys)
        let changed = known.withLock { known -> Set<String> in
            var changed: Set<String> = []
            for key in keys where known[key] != .some(current[key]) {
                known[key] = .some(current[key])
                changed.insert(key)
            }
            return changed
        }
        // No lock held: the configs read the store again from inside this call.
        if !changed.isEmpty { storageDidChange(forKeys: changed) }
    }
}
