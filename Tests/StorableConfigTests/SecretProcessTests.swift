import Foundation
import Testing

@testable import StorableConfig
@testable import StorableConfigSecrets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// FileSecretStore's guarantees across processes: writers killed with SIGKILL, and processes adding at once.
struct SecretProcessTests {
    /// The value `storable-config-stress write-secret` writes for `counter` (see its Secrets.swift).
    static func value(_ counter: Int) -> Data {
        Data((String(repeating: "secret \(counter)\n", count: 4096) + "end \(counter)\n").utf8)
    }

    /// The counter of a whole value, or `nil` for bytes that are not one.
    static func counter(of data: Data) -> Int? {
        let text = String(decoding: data.suffix(32), as: UTF8.self)
        guard let line = text.split(separator: "\n").last, line.hasPrefix("end "), let counter = Int(line.dropFirst(4))
        else { return nil }
        return data == value(counter) ? counter : nil
    }

    @Test func aWriterKilledAtRandomMomentsLeavesAWholeSecretAndNoTemporaryFileStays() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        let kills = isRunningUnderThreadSanitizer ? 20 : 100
        var acknowledged = 0
        for round in 0..<kills {
            let pipe = Pipe()
            let process = try launchProduct(
                "storable-config-stress", ["write-secret", directory.path, "token"], output: pipe)
            var output = Data()
            if round % 2 == 1 { output = readUntil(pipe.fileHandleForReading, contains: "ack ", timeout: 60) }
            usleep(UInt32.random(in: 0...25_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            output += pipe.fileHandleForReading.readDataToEndOfFile()
            let acked =
                String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int($0.dropFirst(4)) }
                .max() ?? 0
            acknowledged = max(acknowledged, acked)
            // Opening the store removes the killed writer's temporary file.
            let store = try FileSecretStore(directory: directory)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.allSatisfy { $0 == "token" }, "left behind: \(names)")
            guard let data = try store.secret(forKey: "token") else {
                #expect(acked == 0, "no secret after \(acked) acknowledged writes")
                continue
            }
            let counter = try #require(Self.counter(of: data), "a torn secret of \(data.count) bytes")
            #expect(counter >= acked, "the secret is \(counter), after \(acked) acknowledged writes")
        }
        #expect(acknowledged > 0, "no writer got as far as one write")
    }

    @Test func ofProcessesAddingToOneKeyAtOnceExactlyOneWins() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        for round in 0..<5 {
            let pipes = (0..<4).map { _ in Pipe() }
            let children = try pipes.indices.map { index in
                try launchProduct(
                    "storable-config-stress", ["add-secret", directory.path, "moved.\(round)", "p\(index)"],
                    output: pipes[index])
            }
            var winners: [Int] = []
            for (index, child) in children.enumerated() {
                let output = String(decoding: pipes[index].fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                child.waitUntilExit()
                #expect(child.terminationStatus == 0)
                if output.contains("added") { winners.append(index) }
            }
            #expect(winners.count == 1, "round \(round): \(winners.count) processes added")
            let store = try FileSecretStore(directory: directory)
            #expect(try store.secret(forKey: "moved.\(round)") == winners.first.map { Data("p\($0)".utf8) })
        }
    }

    @Test func readersSeeOnlyWholeSecretsWhileProcessesAndThreadsWrite() throws {
        let parent = TemporaryDirectory()
        let directory = parent.file("secrets")
        let store = try FileSecretStore(directory: directory)
        let writers = try (0..<2).map { _ in
            try launchProduct("storable-config-stress", ["write-secret", directory.path, "token"])
        }
        defer {
            for writer in writers {
                kill(writer.processIdentifier, SIGKILL)
                writer.waitUntilExit()
            }
        }
        let torn = Locked<[Int]>([])
        let seen = Locked(0)
        let deadline = Date().addingTimeInterval(isRunningUnderThreadSanitizer ? 6 : 2)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            while Date() < deadline {
                if thread == 3 {
                    try? store.setSecret(Self.value(0), forKey: "token")
                    continue
                }
                guard let data = try? store.secret(forKey: "token") else { continue }
                seen.withLock { $0 += 1 }
                if Self.counter(of: data) == nil { torn.withLock { $0.append(data.count) } }
            }
        }
        #expect(torn.withLock { $0 }.isEmpty, "torn reads of sizes \(torn.withLock { $0 }.prefix(5))")
        #expect(seen.withLock { $0 } > 0, "no read found a secret")
    }
}
