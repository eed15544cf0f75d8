// A server's start-up (Docs/ServerConfiguration.md), at the top level of its program.
import Foundation
import StorableConfig

final class ServerConfig: StorableConfig {
    @Setting(in: 1...65_535) var port = 8080
}

func rebind(_ port: Int) {}

// example
