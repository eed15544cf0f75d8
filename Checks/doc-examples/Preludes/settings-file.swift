// A settings file's URL and a secret store of one's own (Docs/Secrets.md, Docs/Stores.md), at the top level.
import Foundation
import StorableConfig
import StorableConfigSecrets

let url = URL(fileURLWithPath: "/var/lib/example/settings.json")
let vault: any SecretStore = try FileSecretStore(directory: URL(fileURLWithPath: "/var/lib/example/vault"))

// example
