// See ObserverSubscription.swift for where this file is compiled and why only public API is used.
import StorableConfig

#if canImport(Combine)
    import Combine
#elseif STORABLE_CONFIG_OPENCOMBINE
    import OpenCombine
#endif
#if canImport(Combine) || STORABLE_CONFIG_OPENCOMBINE
    extension Setting {
        /// A publisher of the setting's current value, then of each change, where Combine exists.
        ///
        /// ```swift
        /// config.$userName.publisher
        ///     .sink { name in label.text = name }
        ///     .store(in: &cancellables)
        /// ```
        ///
        /// Each subscriber gets the value the setting holds when it subscribes, then every change, in order, by
        /// the rules of ``changes``: whoever makes it (this config, another config bound to the same storage,
        /// another process once the store sees it), nothing for an assignment that keeps the value, one value
        /// per setting for a ``StorableConfig/batch(_:)``. Values come on the thread that made the change. A
        /// subscriber that asks for fewer values than come is held at most the 1,000 newest, as ``changes``
        /// holds them. The publisher finishes when the config is released.
        public var publisher: AnyPublisher<Value, Never> {
            SettingPublisher(setting: self).eraseToAnyPublisher()
        }
    }

    /// The publisher behind ``Setting/publisher``: each subscriber observes the setting from its current value.
    struct SettingPublisher<Value: Codable & Sendable>: Publisher {
        typealias Output = Value
        typealias Failure = Never

        let setting: Setting<Value>

        func receive<Downstream: Subscriber>(subscriber: Downstream)
        where Downstream.Input == Value, Downstream.Failure == Never {
            let subscription = ObserverSubscription(subscriber, limit: 1_000)
            subscriber.receive(subscription: subscription)
            subscription.start { inbox in
                setting.observe(initial: true, onEnd: { inbox.end() }) { inbox.receive($0) }
            }
        }
    }
#endif
