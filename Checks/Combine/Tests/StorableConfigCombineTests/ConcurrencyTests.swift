import Dispatch
import OpenCombine
import OpenCombineStorableConfig
import StorableConfig
import Testing

struct ConcurrencyTests {
    /// Writers on several threads, and a subscriber asking for one value at a time on another: every subscriber
    /// ends on the setting's last value, and `objectWillChange` sends once for each value the publisher sends
    /// after the first.
    @Test func subscribersOfConcurrentWritersEndOnTheFinalValue() {
        let config = ProfileConfig(store: InMemoryStore())
        let values = Recorder<Int>()
        let willChange = Recorder<Void>()
        let sink = config.$fontSize.publisher.sink { values.append($0) }
        let announcements = config.objectWillChange.sink { willChange.append(()) }
        let slow = DemandingSubscriber<Int>()
        config.$fontSize.publisher.subscribe(slow)
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            if thread == 4 {
                for _ in 0..<400 { slow.request(.max(1)) }
            } else {
                for step in 1...200 { config.fontSize = thread * 1_000 + step }
            }
        }
        slow.request(.unlimited)
        #expect(values.all.last == config.fontSize)
        #expect(slow.received.all.last == config.fontSize)
        #expect(slow.received.all == values.all)
        #expect(willChange.all.count == values.all.count - 1)
        withExtendedLifetime((sink, announcements)) {}
    }
}
