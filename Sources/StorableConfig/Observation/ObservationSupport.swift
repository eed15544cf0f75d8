import CStorableConfigSupport

#if canImport(Observation)
    import Observation

    /// The Observation framework's registrar for one config, where the framework exists.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    final class ObservationSupport: Sendable {
        let registrar = ObservationRegistrar()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension ConfigContext: Observable {}
#endif

/// The argument of the key path that names a setting to the Observation framework: its position in its
/// config's schema.
///
/// Its hashing is how the library learns that someone tracks settings. The Observation framework hashes a key
/// path only to file an access under a tracking (`withObservationTracking`, SwiftUI) and to install that
/// tracking in the registrar; until it has done so once, no one can be observing a setting through it, so a
/// write may skip the registrar's `willSet` and `didSet` (two lock round trips and two generic calls each, a
/// fifth of an assignment). The flag is set before the tracking is installed, and never cleared: a write that
/// comes after an installed tracking (that the tracking's installation happens before) sees it. A write
/// concurrent with the installation may be missed, as the registrar itself misses one made between the
/// tracked read and the installation.
@usableFromInline
struct ObservedSetting: Hashable, Sendable {
    let index: Int

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        storable_config_observation_set_tracked()
        hasher.combine(index)
    }

    /// Whether the Observation framework has ever tracked a setting in this process.
    @inlinable
    static var isTracked: Bool { storable_config_observation_is_tracked() != 0 }

    /// The key paths of positions `0..<count`. A key path names a position, not a class, so they are made once
    /// per position for the process, each when a class first needs it, and shared: making one resolves its
    /// argument's type and conformance from mangled names (about 9,000 instructions), which was a fifth of the
    /// first instance of a 100-setting class when each class made its own. Only the missing positions are
    /// made, outside the lock.
    static func keyPaths(count: Int) -> [KeyPath<ConfigContext, Int>] {
        let known = sharedKeyPaths.withLock { $0 }
        if known.count >= count { return Array(known.prefix(count)) }
        let made = (known.count..<count).map { index -> KeyPath<ConfigContext, Int> in
            \ConfigContext.[observed: ObservedSetting(index: index)]
        }
        return sharedKeyPaths.withLock { shared in
            // Another class may have added some meanwhile; `shared` only grows, and its first positions are
            // those `known` had.
            if shared.count < count { shared += made[(shared.count - known.count)...] }
            return Array(shared.prefix(count))
        }
    }

    private static let sharedKeyPaths = Locked<[KeyPath<ConfigContext, Int>]>([])
}

extension ConfigContext {
    /// One key path per setting position, naming the setting to the Observation framework; see
    /// ``ObservedSetting``.
    subscript(observed setting: ObservedSetting) -> Int { setting.index }

    /// Makes the Observation framework record a read of the setting at `keyPath`.
    @inline(__always)
    func observationAccess(_ keyPath: KeyPath<ConfigContext, Int>) {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let observation {
                unsafeDowncast(observation, to: ObservationSupport.self).registrar.access(self, keyPath: keyPath)
            }
        #endif
    }

    /// Tells the Observation framework that the setting at `keyPath` changed.
    func observationDidChange(_ keyPath: KeyPath<ConfigContext, Int>) {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), ObservedSetting.isTracked, let observation {
                let registrar = unsafeDowncast(observation, to: ObservationSupport.self).registrar
                registrar.willSet(self, keyPath: keyPath)
                registrar.didSet(self, keyPath: keyPath)
            }
        #endif
    }

    static func makeObservationSupport() -> (any AnyObject & Sendable)? {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) { return ObservationSupport() }
        #endif
        return nil
    }
}
