import Foundation
import StorableConfig
import StorableConfigSecrets

/// The value that `write-secret` writes for `counter`: about 64 KB, so that a kill often lands inside a write,
/// and whole only if it ends with the counter's line.
func secretValue(_ counter: Int) -> Data {
    Data((String(repeating: "secret \(counter)\n", count: 4096) + "end \(counter)\n").utf8)
}

/// `write-secret <directory> <key>`: writes `secretValue(1)`, `secretValue(2)`, ... to one key of a
/// FileSecretStore forever, printing "ack N" after each write returns.
func runWriteSecret(_ arguments: [String]) -> Never {
    guard arguments.count == 3 else { fail(usage) }
    do {
        let store = try FileSecretStore(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
        var counter = 0
        while true {
            counter += 1
            try store.setSecret(secretValue(counter), forKey: arguments[2])
            output("ack \(counter)")
        }
    } catch {
        fail("\(error)", status: 1)
    }
}

/// `add-secret <directory> <key> <value>`: adds the value if the key holds none; prints "added" or "present".
func runAddSecret(_ arguments: [String]) {
    guard arguments.count == 4 else { fail(usage) }
    do {
        let store = try FileSecretStore(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
        output(try store.addSecret(Data(arguments[3].utf8), forKey: arguments[2]) ? "added" : "present")
    } catch {
        fail("\(error)", status: 1)
    }
}
