import Foundation
import StorableConfig
import StorableConfigEtcd
import Testing

/// Values that an operator puts into etcd by hand: legacy keys to move, and mistakes.
extension EtcdStoreTests {
    @Test func aValueThatIsNotJSONHoldsBackNoOtherSettingsMoveAndIsReportedUnderItsOwnKey() throws {
        guard EtcdCluster.unavailable == nil else { return }
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
}

final class MovedSettings: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "etcd" }
    @Setting(previousKeys: ["isFirstLaunch"]) var isFirstLaunch = true
    @Setting(previousNames: ["name"]) var userName = ""
}
