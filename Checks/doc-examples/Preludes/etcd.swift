// Docs/Etcd.md's snippets: what they use, at the top level of a server's program.
import Foundation
import StorableConfig
import StorableConfigEtcd

final class Limits: StorableConfig { @Setting var maxUploadMB = 50 }

let endpoints = [URL(string: "http://etcd-1.internal:2379")!]
let password = ProcessInfo.processInfo.environment["PKCS12_PASSWORD"] ?? ""
let limits = Limits(store: InMemoryStore())

// example
