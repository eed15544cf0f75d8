import OpenCombine
import OpenCombineStorableConfig
import StorableConfig
import Testing

struct SettingPublisherTests {
    @Test func sendsTheCurrentValueThenEachChange() {
        let config = ProfileConfig(store: InMemoryStore())
        config.userName = "before"
        let seen = Recorder<String>()
        let subscription = config.$userName.publisher.sink { seen.append($0) }
        config.userName = "nkysu1"
        config.userName = "nkysu2"
        #expect(seen.all == ["before", "nkysu1", "nkysu2"])
        withExtendedLifetime(subscription) {}
    }

    @Test func followsTheRulesOfChanges() {
        let config = ProfileConfig(store: InMemoryStore())
        let seen = Recorder<Int>()
        let subscription = config.$fontSize.publisher.sink { seen.append($0) }
        config.fontSize = 12  // keeps the value: nothing
        config.batch {
            config.fontSize = 13
            config.fontSize = 14
        }
        config.$fontSize.reset()
        #expect(seen.all == [12, 14, 12])
        withExtendedLifetime(subscription) {}
    }

    @Test func includesChangesMadeOutsideTheConfig() throws {
        let store = InMemoryStore()
        let config = ProfileConfig(store: store)
        let other = ProfileConfig(store: store)
        let seen = Recorder<String>()
        let subscription = config.$userName.publisher.sink { seen.append($0) }
        other.userName = "from another config"
        store.setValue(.string("from the store"), forKey: config.$userName.key)
        try config.reload()
        #expect(seen.all == ["", "from another config", "from the store"])
        withExtendedLifetime(subscription) {}
    }

    @Test func cancellingStopsDelivery() {
        let config = ProfileConfig(store: InMemoryStore())
        let seen = Recorder<String>()
        let subscription = config.$userName.publisher.sink { seen.append($0) }
        config.userName = "seen"
        subscription.cancel()
        config.userName = "not seen"
        #expect(seen.all == ["", "seen"])
    }

    @Test func holdsValuesUntilAskedAndFinishesWhenTheConfigIsReleased() {
        var config: ProfileConfig? = ProfileConfig(store: InMemoryStore())
        let subscriber = DemandingSubscriber<String>()
        config!.$userName.publisher.subscribe(subscriber)
        #expect(subscriber.received.all.isEmpty)
        subscriber.request(.max(1))
        #expect(subscriber.received.all == [""])
        config!.userName = "a"
        config!.userName = "b"
        #expect(subscriber.received.all == [""])
        subscriber.request(.unlimited)
        #expect(subscriber.received.all == ["", "a", "b"])
        #expect(!subscriber.isFinished)
        config = nil
        #expect(subscriber.isFinished)
    }
}
