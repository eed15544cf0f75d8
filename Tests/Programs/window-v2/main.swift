// Version 2 of the program of Tests/Programs/window-v1: its window gained `isFullScreen`, and its title
// `isBold`.
//
//   window-v2 <settings.json | etcd://host:port/prefix/> [width <number> | fullscreen <bool> | bold <bool>]
import Foundation
import StorableConfig
import StorableConfigEtcd

struct Window: Codable, Sendable {
    struct Title: Codable, Sendable {
        var text = "untitled"
        var isBold = false  // added in version 2
    }

    var width = 800.0
    var isFullScreen = false  // added in version 2
    var title = Title()
}

final class WindowConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "versions" }
    @Setting var window = Window()
}

let arguments = CommandLine.arguments.dropFirst()
guard let address = arguments.first else {
    FileHandle.standardError.write(
        Data(
            "usage: window-v2 <settings.json | etcd://host:port/prefix/> [width <n> | fullscreen <b> | bold <b>]\n".utf8
        ))
    exit(2)
}
let config = WindowConfig(store: try openStore(address))
let change = Array(arguments.dropFirst())
switch (change.first, change.dropFirst().first) {
case ("width", let value?): config.window.width = Double(value) ?? config.window.width
case ("fullscreen", let value?): config.window.isFullScreen = value == "true"
case ("bold", let value?): config.window.title.isBold = value == "true"
default: break
}
try printJSON(config.window)

/// A JSON file, or an etcd prefix.
func openStore(_ address: String) throws -> any ConfigStore {
    guard address.hasPrefix("etcd://") else { return try JSONFileStore(url: URL(fileURLWithPath: address)) }
    let rest = address.dropFirst("etcd://".count)
    let host = rest.prefix { $0 != "/" }
    return try EtcdStore(endpoints: [URL(string: "http://\(host)")!], prefix: String(rest.dropFirst(host.count)))
}

func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
