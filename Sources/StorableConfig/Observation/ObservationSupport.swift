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
struct ObservedSetting: Hashable, Sendable {
    let index: Int

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
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let support = observation as? ObservationSupport {
                support.registrar.access(self, keyPath: keyPath)
            }
        #endif
    }

    /// Tells the Observation framework that the setting at `keyPath` changed.
    func observationDidChange(_ keyPath: KeyPath<ConfigContext, Int>) {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let support = observation as? ObservationSupport {
                support.registrar.willSet(self, keyPath: keyPath)
                support.registrar.didSet(self, keyPath: keyPath)
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
