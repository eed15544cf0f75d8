import Testing

@testable import StorableConfigCloud

/// The hybrid clock at its ends: each reading later than the one before and every stamp seen, or none at all.
struct HybridClockTests {
    @Test func aCounterAtItsEndCarriesIntoTheNextMillisecond() {
        var clock = HybridClock(device: "A")
        clock.witness(CloudStamp(milliseconds: 5_000, counter: .max, device: "Z"))
        let reading: CloudStamp? = clock.tick(now: 10)
        #expect(reading == CloudStamp(milliseconds: 5_001, counter: 0, device: "A"))
    }

    @Test(arguments: PlantedValues.pastTheLimit)
    func aStampPastTheLimitDoesNotMoveTheClock(stamp: CloudStamp) {
        var clock = HybridClock(device: "A")
        clock.witness(stamp)
        let reading: CloudStamp? = clock.tick(now: 1_000)
        #expect(reading == CloudStamp(milliseconds: 1_000, counter: 0, device: "A"))
    }

    @Test func aWallClockPastTheLimitIsNotReadAndTheCounterCarriesTheOrder() {
        var clock = HybridClock(device: "A")
        clock.witness(CloudStamp(milliseconds: 2_000, counter: 0, device: "Z"))
        let farPast: CloudStamp? = clock.tick(now: .max)
        let justPast: CloudStamp? = clock.tick(now: PlantedValues.lastMilliseconds + 1)
        let atTheLimit: CloudStamp? = clock.tick(now: PlantedValues.lastMilliseconds)
        #expect(farPast == CloudStamp(milliseconds: 2_000, counter: 1, device: "A"))
        #expect(justPast == CloudStamp(milliseconds: 2_000, counter: 2, device: "A"))
        #expect(atTheLimit == CloudStamp(milliseconds: PlantedValues.lastMilliseconds, counter: 0, device: "A"))
    }

    @Test func theClockAtTheLastStampGivesNoReadingRatherThanATie() {
        var clock = HybridClock(device: "A")
        clock.witness(PlantedValues.lastStamp)
        let last = clock.last
        for now: Int64 in [1_000, PlantedValues.lastMilliseconds, .max] {
            let reading: CloudStamp? = clock.tick(now: now)
            #expect(reading == nil, "wall clock \(now)")
        }
        #expect(clock.last == last)
    }

    @Test func aStampPastTheStartOfTheYear10000IsNoStampAndOneAtItIs() throws {
        #expect(try CloudStamp(text: "253402300800000.4294967295@Z") == PlantedValues.lastStamp)
        for stamp in PlantedValues.pastTheLimit {
            #expect(throws: CloudValueError.self, "\(stamp)") { try CloudStamp(text: stamp.description) }
        }
    }
}
