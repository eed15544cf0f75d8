// Version 1 of a program whose settings hold a window, and version 2 beside it (Tests/Programs/window-v2): two
// executables built from two versions of one type, which the tests run on one JSON file and on one etcd prefix
// (Docs/SupportedTypes.md, "When your type changes").
//
//   window-v1 <settings.json | etcd://host:port/prefix/> [width <number>]
//
// Prints the window it reads, as JSON with sorted keys, after the change if one is given.
import Foundation
import StorableConfig
import StorableConfigEtcd

struct Window: Codable, Sendable {
    struct Title: Codable, Sendable {
        var text = "untitled"
    }

    var width = 800.0
    var title = Title()
}

final class WindowConfig: StorableConfig, @unchecked Sendable {
    override class var namespace: String { "versions" }
    @Setting var window = Window()
}

let arguments = CommandLine.arguments.dropFirst()
guard let address = arguments.first else {
    FileHandle.standardError.write(
        Data("usage: window-v1 <settings.json | etcd://host:port/prefix/> [width <n>]\n".utf8))
    exit(2)
}
let config = WindowConfig(store: try openStore(address))
if arguments.dropFirst().first == "width", let width = arguments.dropFirst(2).first.flatMap(Double.init) {
    config.window.width = width
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
