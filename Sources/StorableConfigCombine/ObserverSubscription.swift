// The module StorableConfigCombine, on the core's public API alone: compiled where Apple's Combine exists, and, to
// prove it on Linux, in Checks/Combine against OpenCombine, whose target links this folder and defines
// STORABLE_CONFIG_OPENCOMBINE (a define, not `canImport(OpenCombine)`, which a Linux app that depends on both
// packages could make true inside this library's own build). Elsewhere, as in the library's Linux build, the
// module is empty.
import StorableConfig

#if canImport(Combine)
    import Combine
#elseif STORABLE_CONFIG_OPENCOMBINE
    import OpenCombine
#endif
#if canImport(Combine) || STORABLE_CONFIG_OPENCOMBINE
    import Foundation

    /// What the library's observer hands a subscription: the subscription without its subscriber's type, which
    /// the observer, a `@Sendable` closure, may not capture.
    protocol ObserverInbox<Input>: AnyObject, Sendable {
        associatedtype Input: Sendable
        /// A value for the subscriber.
        func receive(_ input: Input)
        /// The config is gone: no more values.
        func end()
    }

    /// One subscriber's subscription to a config's publisher: the values of the observer it registers are
    /// held here until the subscriber asks for them, at most `limit` of them (the newest, as `changes` keeps).
    final class ObserverSubscription<Downstream: Subscriber>: Subscription, ObserverInbox, @unchecked Sendable
    where Downstream.Failure == Never, Downstream.Input: Sendable {
        typealias Input = Downstream.Input

        // Every mutable property is guarded by `lock`: the thread delivering the library's changes and the
        // subscriber's threads (`request`, `cancel`) meet here. The subscriber is called, and what is dropped
        // is released, after the unlock.
        private let lock = Lock()
        private var downstream: Downstream?
        private var demand = Subscribers.Demand.none
        private var buffer: [Input] = []
        private var hasEnded = false
        /// Whether a thread is sending to the subscriber: one at a time, so values arrive in order; a value
        /// that comes meanwhile is sent by that thread.
        private var isSending = false
        private var token: ObservationToken?
        private let limit: Int

        init(_ downstream: Downstream, limit: Int) {
            self.downstream = downstream
            self.limit = limit
        }

        /// Registers the library's observer with `register`, which hands its values to ``receive(_:)`` and its
        /// end to ``end()``, and keeps the token until the subscription is cancelled.
        func start(_ register: (any ObserverInbox<Input>) -> ObservationToken) {
            let token = register(self)
            lock.lock()
            let cancelled = downstream == nil
            if !cancelled { self.token = token }
            lock.unlock()
            if cancelled { token.cancel() }
        }

        func receive(_ input: Input) {
            var dropped: Input?
            lock.lock()
            guard downstream != nil else {
                lock.unlock()
                return
            }
            buffer.append(input)
            if buffer.count > limit { dropped = buffer.removeFirst() }
            lock.unlock()
            withExtendedLifetime(dropped) {}
            send()
        }

        /// The subscriber finishes once it has had the values held.
        func end() {
            lock.lock()
            hasEnded = true
            lock.unlock()
            send()
        }

        func request(_ more: Subscribers.Demand) {
            lock.lock()
            demand += more
            lock.unlock()
            send()
        }

        func cancel() {
            lock.lock()
            let released = (downstream, buffer, token)
            downstream = nil
            buffer = []
            token = nil
            lock.unlock()
            released.2?.cancel()
            withExtendedLifetime(released) {}
        }

        private func send() {
            lock.lock()
            guard !isSending else {
                lock.unlock()
                return
            }
            isSending = true
            while let downstream {
                if demand > .none, !buffer.isEmpty {
                    let next = buffer.removeFirst()
                    demand -= 1
                    lock.unlock()
                    let more = downstream.receive(next)
                    lock.lock()
                    demand += more
                } else if hasEnded, buffer.isEmpty {
                    let token = self.token
                    self.downstream = nil
                    self.token = nil
                    lock.unlock()
                    downstream.receive(completion: .finished)
                    withExtendedLifetime(token) {}
                    lock.lock()
                } else {
                    break
                }
            }
            isSending = false
            lock.unlock()
        }
    }
#endif
