import Foundation
import OpenCombine
import StorableConfig

// Its only stored properties are settings, which guard themselves.
final class ProfileConfig: StorableConfig, @unchecked Sendable {
    @Setting var userName = ""
    @Setting var fontSize = 12
}

/// What a subscriber was sent, in order, from whichever thread sent it.
final class Recorder<Element: Sendable>: @unchecked Sendable {
    // Guards `elements`.
    private let lock = NSLock()
    private var elements: [Element] = []

    func append(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }
}

/// A subscriber that asks for nothing by itself: the test asks through ``request(_:)``.
final class DemandingSubscriber<Input: Sendable>: Subscriber, @unchecked Sendable {
    typealias Failure = Never

    let received = Recorder<Input>()
    // Guards `subscription` and `isFinished`.
    private let lock = NSLock()
    private var subscription: (any Subscription)?
    private var finished = false

    func receive(subscription: any Subscription) {
        lock.lock()
        self.subscription = subscription
        lock.unlock()
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        received.append(input)
        return .none
    }

    func receive(completion: Subscribers.Completion<Never>) {
        lock.lock()
        finished = true
        lock.unlock()
    }

    func request(_ demand: Subscribers.Demand) {
        lock.lock()
        let subscription = subscription
        lock.unlock()
        subscription?.request(demand)
    }

    var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }
}
