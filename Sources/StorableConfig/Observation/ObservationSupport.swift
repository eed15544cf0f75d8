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

extension ConfigContext {
    /// One key path per setting position, naming the setting to the Observation framework.
    subscript(observed index: Int) -> Int { index }

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
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let observation {
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
