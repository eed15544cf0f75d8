import Foundation
import StorableConfig
import StorableConfigCloud

/// `--cloud <directory> --device <name>`: the demo as one of a user's devices, its settings synced through a
/// simulated cloud (``DirectoryCloud``) that other runs, as other devices, share.
extension DemoTool {
    /// Makes the sync of `store` with the cloud that `cloud` names: exit 1 if the directory is not one.
    static func cloudSync(_ cloud: DemoCommand.Cloud, over store: any ConfigStore) throws(Failure) -> CloudSync {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: cloud.directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw Failure(message: "--cloud \(cloud.directory) is a file, not a directory that holds a cloud")
        }
        let directory = DirectoryCloud(directory: URL(fileURLWithPath: cloud.directory), offline: cloud.offline)
        return CloudSync(cloud: directory, local: store, device: cloud.device)
    }

    /// What syncs: what a user would want on every device. A device keeps its own launch record
    /// (`isFirstLaunch`, `launchCount`, `lastLaunch`), and a secret (`twitter.apiToken`) stays off the cloud.
    static func sync(_ configs: [NamedConfig], with sync: CloudSync) {
        for named in configs {
            switch named.config {
            case let app as AppConfig: sync.sync(app, except: [\.$isFirstLaunch, \.$launchCount, \.$lastLaunch])
            case let twitter as TwitterConfig: sync.sync(twitter, except: [\.$apiToken])
            default: sync.sync(named.config)
            }
        }
    }

    /// ` (synced through the simulated cloud at /tmp/cloud as device "A")`, or nothing without a cloud.
    var cloudNote: String {
        guard let cloudSync, let cloud = cloudSync.cloud as? DirectoryCloud else { return "" }
        return " (\(cloud.isOffline ? "offline from" : "synced through") \(cloudPlace))"
    }

    /// `the simulated cloud at /tmp/cloud as device "A"`.
    private var cloudPlace: String {
        guard let cloudSync, let cloud = cloudSync.cloud as? DirectoryCloud else { return "" }
        return "the simulated cloud at \(cloud.directory.path) as device \"\(cloudSync.device)\""
    }

    /// `sync`: exchanges with the cloud, then prints each synced setting's value and where it came from.
    func printSynced() {
        guard let cloudSync else { return }
        if cloudSync.synchronize() {
            print("synced with \(cloudPlace):")
        } else {
            print("offline: nothing exchanged with \(cloudPlace):")
        }
        let synced = Set(cloudSync.syncedKeys)
        let rows = rows().filter { synced.contains($0.setting.key) }
        let lines = rows.filter(\.setting.isSet).map { row in
            let value = shown(row.setting)
            return [row.name, value.isEmpty ? "\"\"" : value, "from " + row.setting.origin]
        }
        let widths = (0..<2).map { column in lines.map { $0[column].count }.max() ?? 0 }
        for line in lines {
            print(
                line[0].padding(toLength: widths[0], withPad: " ", startingAt: 0) + "  "
                    + line[1].padding(toLength: widths[1], withPad: " ", startingAt: 0) + "  " + line[2])
        }
        let defaults = rows.count - lines.count
        if defaults > 0 {
            print("\(lines.isEmpty ? "all" : "and") \(defaults) synced settings read their defaults")
        }
    }
}
