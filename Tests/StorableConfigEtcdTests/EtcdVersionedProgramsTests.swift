import Foundation
import Testing

/// Two executables built from two versions of one type (Tests/Programs/window-v1 and window-v2) take turns on
/// one etcd prefix, as an older and a newer server of a fleet would.
extension EtcdStoreTests {
    @Test(.needsEtcd) func anOlderAndANewerServerOnOneEtcdPrefixLoseNothingOfEachOther() throws {
        let cluster = try EtcdCluster()
        let address = "etcd://127.0.0.1:\(cluster.members[0].clientPort)/versions/"
        func run(_ program: String, _ change: String...) throws -> String {
            let result = try Self.runProgram(program, [address] + change)
            #expect(result.status == 0, "\(program) \(change): \(result.errorOutput)")
            #expect(!result.errorOutput.contains("StorableConfig:"), "\(program) \(change): \(result.errorOutput)")
            return result.output
        }
        #expect(try run("window-v1", "width", "1024") == #"{"title":{"text":"untitled"},"width":1024}"# + "\n")
        #expect(
            try run("window-v2", "fullscreen", "true")
                == #"{"isFullScreen":true,"title":{"isBold":false,"text":"untitled"},"width":1024}"# + "\n")
        _ = try run("window-v2", "bold", "true")
        #expect(try run("window-v1", "width", "640") == #"{"title":{"text":"untitled"},"width":640}"# + "\n")
        let stored = try #require(try cluster.get("/versions/versions.WindowConfig.window"))
        #expect(stored.contains("isFullScreen"), "\(stored)")
        #expect(
            try run("window-v2") == #"{"isFullScreen":true,"title":{"isBold":true,"text":"untitled"},"width":640}"#
                + "\n")
    }

}
