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
        let running = Guarded(true)
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

/// Whether the tests run under ThreadSanitizer (`swift test --sanitize=thread`), which is many times slower.
let isRunningUnderThreadSanitizer: Bool = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
