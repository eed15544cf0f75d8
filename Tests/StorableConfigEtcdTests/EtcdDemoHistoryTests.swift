import Foundation
import Testing

/// The demo's `history` and `rollback`, in separate processes, over etcd and over a JSON file.
extension EtcdStoreTests {
    @Test(.needsEtcd) func theDemoPrintsTheHistoryRollsBackAndSaysWhenItCannot() throws {
        let cluster = try EtcdCluster()
        let store = "etcd://127.0.0.1:\(cluster.members[0].clientPort)/fleet/"
        for volume in ["0.2", "0.3", "0.4"] {
            #expect(try Self.runDemo(["set", "app.volume", volume, "--store", store]).status == 0)
        }
        let history = try Self.runDemo(["history", "app.volume", "--store", store])
        #expect(history.status == 0)
        let lines = history.output.split(separator: "\n").dropLast().map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        #expect(lines.map { $0.last.map(String.init) } == ["0.4", "0.3", "0.2"])
        let revisions = lines.compactMap { $0.first.flatMap { Int64($0) } }
        #expect(revisions.count == 3 && revisions == revisions.sorted(by: >))
        #expect(Self.currentRevision(in: history.output) == revisions.first)
        let limited = try Self.runDemo(["history", "app.volume", "--limit", "2", "--store", store])
        #expect(limited.output.split(separator: "\n").count == 3)
        // A secret's values are never printed.
        #expect(try Self.runDemo(["set", "twitter.apiToken", "s3cret", "--store", store]).status == 0)
        let secret = try Self.runDemo(["history", "twitter.apiToken", "--store", store])
        #expect(secret.status == 0 && secret.output.contains("<redacted>") && !secret.output.contains("s3cret"))

        let rolledBack = try Self.runDemo(["rollback", "app.volume", String(revisions[2]), "--store", store])
        #expect(rolledBack.status == 0)
        #expect(rolledBack.output == "app.volume = 0.2 (its value at revision \(revisions[2]))\n")
        #expect(try cluster.get("/fleet/storable-config-demo.AppConfig.volume") == "0.2")

        // A value the setting's range refuses now is not rolled back to.
        let outside = try cluster.put("/fleet/storable-config-demo.AppConfig.volume", "5")
        try cluster.put("/fleet/storable-config-demo.AppConfig.volume", "0.5")
        let refused = try Self.runDemo(["rollback", "app.volume", String(outside), "--store", store])
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("outside the range"))

        let latest = try cluster.put("/fleet/storable-config-demo.AppConfig.volume", "0.6")
        try cluster.compact(upTo: latest)
        let compacted = try Self.runDemo(["rollback", "app.volume", String(revisions[1]), "--store", store])
        #expect(compacted.status == 1)
        #expect(compacted.errorOutput.contains("revision \(revisions[1]) is no longer kept"))
        #expect(try cluster.get("/fleet/storable-config-demo.AppConfig.volume") == "0.6")
    }

    /// `rollback --if-unchanged-since` with the revision `history` printed: a change that lands after the operator
    /// read the history is never undone, and the refusal names the key and both revisions.
    @Test(.needsEtcd) func theDemosRollbackRefusesAChangeMadeAfterTheHistoryWasRead() throws {
        let cluster = try EtcdCluster()
        let store = "etcd://127.0.0.1:\(cluster.members[0].clientPort)/fleet/"
        let key = "/fleet/storable-config-demo.AppConfig.volume"
        let first = try cluster.put(key, "0.2")
        try cluster.put(key, "0.3")
        let history = try Self.runDemo(["history", "app.volume", "--store", store])
        let seen = try #require(Self.currentRevision(in: history.output), "\(history.output)")
        // Another operator's change, after this one read the history.
        let later = try cluster.put(key, "0.9")
        let refused = try Self.runDemo([
            "rollback", "app.volume", String(first), "--if-unchanged-since", String(seen), "--store", store,
        ])
        #expect(refused.status == 1)
        #expect(refused.output.isEmpty)
        for part in ["storable-config-demo.AppConfig.volume", "revision \(seen)", "revision \(later)"] {
            #expect(refused.errorOutput.contains(part), "\(refused.errorOutput)")
        }
        #expect(try cluster.get(key) == "0.9")

        // With the revision the key is at now, it is rolled back.
        let again = try Self.runDemo(["history", "app.volume", "--store", store])
        #expect(Self.currentRevision(in: again.output) == later)
        let rolledBack = try Self.runDemo([
            "rollback", "app.volume", String(first), "--if-unchanged-since=\(later)", "--store", store,
        ])
        #expect(rolledBack.status == 0, "\(rolledBack.errorOutput)")
        #expect(try cluster.get(key) == "0.2")
    }

    /// The revision that `history`'s last line says the key is at.
    static func currentRevision(in output: String) -> Int64? {
        guard let line = output.split(separator: "\n").last, let range = line.range(of: "is at revision ") else {
            return nil
        }
        return Int64(line[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func theDemoSaysThatAJSONFileKeepsNoHistory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("settings.json").path
        #expect(try Self.runDemo(["set", "app.volume", "0.3", "--store", path]).status == 0)
        for arguments in [["history", "app.volume"], ["rollback", "app.volume", "3"]] {
            let result = try Self.runDemo(arguments + ["--store", path])
            #expect(result.status == 1)
            #expect(result.errorOutput.contains("keeps no history"))
            #expect(result.errorOutput.contains(path))
        }
    }
}
