import OpenCombine
import OpenCombineStorableConfig
import StorableConfig
import Testing

struct ObjectWillChangeTests {
    @Test func sendsBeforeTheNewValueReachesThePublisher() {
        let config = ProfileConfig(store: InMemoryStore())
        let events = Recorder<String>()
        let willChange = config.objectWillChange.sink { events.append("will change") }
        let values = config.$userName.publisher.sink { events.append("value \($0)") }
        config.userName = "nkysu1"
        #expect(events.all == ["value ", "will change", "value nkysu1"])
        withExtendedLifetime((willChange, values)) {}
    }

    @Test func sendsOncePerAssignmentThatChangesAValue() {
        let config = ProfileConfig(store: InMemoryStore())
        let sent = Recorder<Void>()
        let subscription = config.objectWillChange.sink { sent.append(()) }
        config.userName = "a"
        config.fontSize = 14
        config.fontSize = 14  // keeps the value
        config.batch {
            config.userName = "b"
            config.userName = "c"
        }
        #expect(sent.all.count == 3)
        withExtendedLifetime(subscription) {}
    }

    @Test func sendsForChangesMadeOutsideTheConfig() throws {
        let store = InMemoryStore()
        let config = ProfileConfig(store: store)
        let other = ProfileConfig(store: store)
        let sent = Recorder<Void>()
        let subscription = config.objectWillChange.sink { sent.append(()) }
        other.userName = "from another config"
        #expect(sent.all.count == 1)
        store.setValue(.int(20), forKey: config.$fontSize.key)
        try config.reload()
        #expect(sent.all.count == 2)
        #expect(config.fontSize == 20)
        withExtendedLifetime(subscription) {}
    }

    @Test func worksWhereAnObservableObjectIsExpected() {
        let config = ProfileConfig(store: InMemoryStore())
        let sent = Recorder<Void>()
        let subscription = Self.watch(config) { sent.append(()) }
        config.userName = "a"
        subscription.cancel()
        config.userName = "b"
        #expect(sent.all.count == 1)
    }

    /// What `@ObservedObject` and `@StateObject` do: subscribe to `objectWillChange` of any `ObservableObject`.
    private static func watch<Object: ObservableObject>(
        _ object: Object, _ handler: @escaping () -> Void
    ) -> AnyCancellable {
        object.objectWillChange.sink { _ in handler() }
    }
}
