import Foundation
import Testing

@testable import StorableConfig

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// JSONFileStore's guarantees, proved with real processes started from `storable-config-stress`.
struct ProcessTests {
    @Test func aWriterKilledAtRandomMomentsNeverLeavesATornFileOrLosesAnAcknowledgedWrite() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("crash.json")
        var acknowledged = 0
        // Under ThreadSanitizer a writer starts 10-50 times slower: fewer kills, and every other kill waits for
        // the writer's first acknowledged write (up to 60 s), so that kills during writes are still tested
        // and not only kills during start-up.
        let kills = isRunningUnderThreadSanitizer ? 30 : 200
        for round in 0..<kills {
            let acked = try Self.killCounterWriter(writing: url.path, afterAFirstWrite: round % 2 == 1)
            acknowledged = max(acknowledged, acked)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                #expect(acked == 0, "the file is missing after \(acked) acknowledged writes")
                continue
            }
            let parsed = try JSONText.parse(data)
            guard case .dictionary(let values) = parsed else {
                Issue.record("unexpected content \(parsed)")
                continue
            }
            // A writer killed before its first counter write has left only its filler keys.
            var counter = 0
            if case .int(let number)? = values["counter"] { counter = Int(number) }
            #expect(counter >= acked)
            // Temporary files of killed writers are the only debris allowed.
            let siblings = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            #expect(!siblings.contains { $0.contains("corrupt") })
        }
        #expect(acknowledged > 0, "no writer got as far as one write")
    }

    /// Starts `storable-config-stress write-counter <path>`, kills it with SIGKILL after a random 0-25 ms (counted
    /// from its first acknowledged write when `afterAFirstWrite`, so that kills during writes are tested, not only
    /// kills during start-up), and returns the highest counter it acknowledged.
    static func killCounterWriter(writing path: String, afterAFirstWrite: Bool) throws -> Int {
        let pipe = Pipe()
        let process = try launchProduct("storable-config-stress", ["write-counter", path], output: pipe)
        var output = Data()
        if afterAFirstWrite {
            output = readUntil(pipe.fileHandleForReading, contains: "ack ", timeout: 60)
        }
        usleep(UInt32.random(in: 0...25_000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        output += pipe.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int($0.dropFirst(4)) }
            .max() ?? 0
    }

    @Test func severalProcessesWritingOneFileLoseNoKey() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("multi.json")
        let processes = 4
        let writes = 150
        let children = try (0..<processes).map { index in
            try launchProduct("storable-config-stress", ["write-keys", url.path, "p\(index)", String(writes)])
        }
        for child in children {
            child.waitUntilExit()
            #expect(child.terminationStatus == 0)
        }
        let store = try JSONFileStore(url: url)
        try store.reload()
        var lost: [String] = []
        for process in 0..<processes {
            for index in 1...writes where store.value(forKey: "p\(process).\(index)") != .int(Int64(index)) {
                lost.append("p\(process).\(index)")
            }
        }
        #expect(lost.isEmpty, "lost \(lost.count) keys: \(lost.prefix(10))")
    }
}
