// See ObserverSubscription.swift for where this file is compiled and why only public API is used.
import StorableConfig

#if canImport(Combine)
    import Combine
#elseif STORABLE_CONFIG_OPENCOMBINE
    import OpenCombine
#endif

#if canImport(Combine) || STORABLE_CONFIG_OPENCOMBINE
    /// Configs work with `@ObservedObject` and `@StateObject`, and so with SwiftUI before iOS 17 and macOS 14,
    /// where Combine exists: ``objectWillChange`` sends before each change of any setting. Retroactive: this module
    /// owns neither the class nor the protocol, and is the one place that declares the conformance.
    extension StorableConfig: @retroactive ObservableObject {}

    extension StorableConfig {
        /// A publisher that sends before each change of any of this config's settings, where Combine exists.
        ///
        /// ```swift
        /// struct SettingsView: View {
        ///     @ObservedObject var config: AppConfig
        ///     var body: some View { Toggle("Sounds", isOn: $config.playsSounds) }
        /// }
        /// ```
        ///
        /// It sends for every change that ``changes`` reports, once per change, whoever makes it: an assignment,
        /// another config bound to the same storage, another process once the store sees it. It sends before
        /// the setting's ``Setting/publisher`` and observers hear of the change (see ``observeWillChange(_:)``),
        /// on the thread that made the change: SwiftUI wants changes on the main thread. Each access returns a
        /// new publisher of the same changes; like Combine's own, it never finishes. A subclass's own
        /// `@Published` properties do not send through it.
        public var objectWillChange: AnyPublisher<Void, Never> {
            ConfigWillChangePublisher(config: self).eraseToAnyPublisher()
        }
    }

    /// The publisher behind ``StorableConfig/objectWillChange``.
    struct ConfigWillChangePublisher: Publisher {
        typealias Output = Void
        typealias Failure = Never

        let config: StorableConfig

        func receive<Downstream: Subscriber>(subscriber: Downstream)
        where Downstream.Input == Void, Downstream.Failure == Never {
            let subscription = ObserverSubscription(subscriber, limit: 1_000)
            subscriber.receive(subscription: subscription)
            subscription.start { inbox in
                config.observeWillChange { inbox.receive(()) }
            }
        }
    }
#endif
