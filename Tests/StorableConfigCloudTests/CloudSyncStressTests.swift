import Foundation
import StorableConfig
import Testing

@testable import StorableConfigCloud

/// Configs created, synced, written, observed and released on many tasks at once on one device, while another
/// device writes and the notices travel on a thread of their own: no race (ThreadSanitizer runs this suite too),
/// no deadlock, and afterwards both devices hold the same values.
@Suite("iCloud sync under concurrent life cycles")
struct CloudSyncStressTests {
    @Test func configsComingAndGoingOnManyTasksWhileNoticesArriveEndInAgreement() async {
        let cloud = SimulatedCloud()
        let phone = Phone("iPhone", on: cloud).launch()
        let pad = Phone("iPad", on: cloud).launch()
        let sync = phone.sync!
        let padConfig = pad.config!
        let running = Locked(true)
        let weather = Thread {
            while running.withLock({ $0 }) {
                cloud.settle(["iPhone", "iPad"])
                padConfig.fontSize = Int.random(in: 0..<100)
            }
        }
        weather.start()
        let rounds = isRunningUnderThreadSanitizer ? 15 : 60
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<rounds {
                        let config = SyncedSettings(store: sync.store)
                        sync.sync(config, only: [\.$fontSize, \.$userName, \.notes])
                        let token = config.observe { _ in _ = config.fontSize }
                        config.fontSize = task * 1000 + round
                        config.notes.upsert(Note(id: "t\(task)", text: "\(round)"))
                        if round % 7 == 0 { config.$userName.reset() } else { config.userName = "task \(task)" }
                        token.cancel()
                    }
                }
            }
        }
        running.withLock { $0 = false }
        while !weather.isFinished { usleep(1000) }
        for _ in 0..<3 {
            phone.sync.synchronize()
            pad.sync.synchronize()
            cloud.settle(["iPhone", "iPad"])
        }
        #expect(phone.config.fontSize == pad.config.fontSize)
        #expect(phone.config.userName == pad.config.userName)
        #expect(phone.config.notes.all.sorted { $0.id < $1.id } == pad.config.notes.all.sorted { $0.id < $1.id })
        #expect(phone.config.notes.count == 8)
    }
}

extension CloudSyncStressTests {
    /// Thousands of changes from the cloud, then the sync and its configs released on a thread with a small stack:
    /// nothing the engine keeps grows with the number of changes (a closure kept in a generic lock grew by two
    /// thunks per change, and releasing the chain overflowed a dispatch thread's stack, killing the test process).
    @Test func manyChangesFromTheCloudLeaveNothingThatGrowsWithThem() {
        let cloud = SimulatedCloud()
        let phone = Locked<Phone?>(Phone("iPhone", on: cloud).launch())
        let pad = Phone("iPad", on: cloud).launch()
        for size in 0..<3000 {
            pad.config.fontSize = size
            cloud.settle(["iPad", "iPhone"])
        }
        #expect(phone.withLock { $0?.config.fontSize } == 2999)
        let released = Locked(false)
        let thread = Thread {
            phone.withLock { phone in
                phone?.quit()
                phone = nil
            }
            released.withLock { $0 = true }
        }
        thread.stackSize = 64 * 1024
        thread.start()
        #expect(waitUntil { released.withLock { $0 } })
    }
}

/// Polls `condition` every 10 ms for up to `seconds`.
func waitUntil(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Whether the tests run under ThreadSanitizer (`swift test --sanitize=thread`), which is many times slower.
let isRunningUnderThreadSanitizer: Bool = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
