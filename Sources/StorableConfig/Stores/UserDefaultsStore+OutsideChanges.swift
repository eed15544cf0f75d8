import Foundation

extension UserDefaultsStore {
    /// After `UserDefaults.didChangeNotification` for this store's defaults: a value written straight into them
    /// (an `@AppStorage` view, code that does not use the library, a widget or an extension writing the shared
    /// suite in this process) becomes an ordinary change of the settings it concerns. The keys this store knows
    /// are read again and compared with what it last read or wrote; those that differ are announced, and the
    /// configs read them and tell their observers. The store's own writes were noted before they were made, so
    /// they are not announced again.
    ///
    /// Apple's Foundation posts the notification synchronously from `set(_:forKey:)` and `removeObject(forKey:)`,
    /// on the writing thread; corelibs Foundation posts none (Docs/Platforms.md).
    func defaultsDidChange() {
        let keys = known.withLock { Array($0.keys) }
        guard !keys.isEmpty else { return }
        let current = storedValues(forKeys: keys)
        let changed = known.withLock { known -> Set<String> in
            var changed: Set<String> = []
            for key in keys {
                let now = current[key]
                if let before = known[key], before == now { continue }
                known[key] = .some(now)
                changed.insert(key)
            }
            return changed
        }
        if !changed.isEmpty { storageDidChange(forKeys: changed) }
    }
}
