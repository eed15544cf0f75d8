import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

/// Values that an operator puts into etcd by hand: legacy keys to move, and mistakes.
extension EtcdStoreTests {
    @Test(.needsEtcd) func aValueThatIsNotJSONHoldsBackNoOtherSettingsMoveAndIsReportedUnderItsOwnKey() throws {
        let cluster = try EtcdCluster()
        try cluster.put("m/isFirstLaunch", "false")
        try cluster.put("m/etcd.MovedSettings.userName", "plain")
        EtcdReports.install()
        let config = MovedSettings(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "m/"))
        #expect(config.isFirstLaunch == false)
        #expect(try cluster.get("m/etcd.MovedSettings.isFirstLaunch") == "false")
        #expect(try cluster.get("m/isFirstLaunch") == nil)
        #expect(try cluster.get("m/etcd.MovedSettings.userName") == "plain")
        #expect(EtcdReports.mentioning("'etcd.MovedSettings.userName'").contains { $0.contains("JSON") })
        #expect(EtcdReports.mentioning("'etcd.MovedSettings.isFirstLaunch'").isEmpty)
    }

    @Test(.needsEtcd) func anOutsidePutOfTheWrongTypeOrOutOfRangeKeepsTheLastGoodValueAndIsReported() throws {
        let cluster = try EtcdCluster()
        EtcdReports.install()
        let config = LiveVolume(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "live/"))
        config.volume = 0.5
        let seen = Locked<[Double]>([])
        let token = config.$volume.observe { value in seen.withLock { $0.append(value) } }
        for (index, bad) in ["5", #""loud""#, "plain"].enumerated() {
            try cluster.put("live/etcd.LiveVolume.volume", bad)
            // Watch events arrive in order: once this one is seen, so was the mistake.
            try cluster.put("live/etcd.LiveVolume.marker", "\(index + 1)")
            try waitFor { config.marker == index + 1 }
            #expect(config.volume == 0.5)
            #expect(seen.withLock { $0 }.isEmpty)
        }
        let reports = EtcdReports.mentioning("etcd.LiveVolume.volume")
        #expect(reports.contains { $0.contains("5") && $0.contains("keeps its last good value") })
        #expect(reports.contains { $0.contains("loud") && $0.contains("keeps its last good value") })
        #expect(reports.contains { $0.contains("not JSON") })
        // A config created now, over the mistake, reads the default.
        try cluster.put("live/etcd.LiveVolume.volume", "5")
        #expect(LiveVolume(store: try EtcdStore(endpoints: cluster.endpoints, prefix: "live/")).volume == 0.8)
        token.cancel()
    }
}

final class LiveVolume: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting(in: 0...1) var volume = 0.8
    @Setting var marker = 0
}

final class MovedSettings: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting(previousKeys: ["isFirstLaunch"]) var isFirstLaunch = true
    @Setting(previousNames: ["name"]) var userName = ""
}
