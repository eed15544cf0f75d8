import Foundation
import Testing

@testable import StorableConfig

/// A directory under the system's temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "StorableConfigTests-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }
}

/// Every problem reported through `StorableConfig.errorHandler`, for tests to look up by key or path.
enum ReportedErrors {
    private static let collected = Locked<[StorableConfigError]>([])
    // Passes each report on to the handler it replaced: the test targets share one process and one handler.
    private static let installed: Bool = {
        let previous = StorableConfig.errorHandler
        StorableConfig.errorHandler = { error in
            ReportedErrors.collected.withLock { $0.append(error) }
            previous(error)
        }
        return true
    }()

    /// Starts collecting; call before the code under test runs.
    static func install() {
        _ = installed
    }

    /// The errors reported so far whose description mentions `text` (a key or a path unique to the test).
    static func mentioning(_ text: String) -> [StorableConfigError] {
        collected.withLock { $0.filter { $0.description.contains(text) } }
    }
}

/// The stores every behaviour is checked against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case jsonFile
    case userDefaults

    var testDescription: String { rawValue }
}

/// A store of one kind, with a way to open it afresh, as a relaunched program would.
final class StoreFixture {
    let kind: StoreKind
    private let directory = TemporaryDirectory()
    private let suiteName = "StorableConfigTests-\(UUID().uuidString)"
    private let memory = InMemoryStore()

    init(_ kind: StoreKind) {
        self.kind = kind
    }

    deinit {
        if kind == .userDefaults {
            UserDefaults(suiteName: suiteName)?.removePersistentDomain(forName: suiteName)
            try? FileManager.default.removeItem(at: UserDefaultsStore.propertyListURL(domain: suiteName))
        }
    }

    var fileURL: URL { directory.file("settings.json") }

    /// Opens the store. For the file store, a new store reads the file again once every earlier store for
    /// the path has been released (call this from a scope that released them).
    func open() -> any ConfigStore {
        switch kind {
        case .memory: return memory
        case .jsonFile: return try! JSONFileStore(url: fileURL)
        case .userDefaults: return UserDefaultsStore(suiteName: suiteName)!
        }
    }
}

/// Reads a JSON file the way a person or another program would, without the store's in-memory state.
func jsonObject(at url: URL) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
    return try #require(object as? [String: Any])
}

/// The path of an executable built from this package, found beside the running test binary.
func builtProduct(_ name: String) throws -> URL {
    #if canImport(Darwin)
        // The test bundle sits beside the products; the running executable is Xcode's or SwiftPM's runner.
        let start =
            Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.bundleURL
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    #else
        let start = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    #endif
    var directory = start.deletingLastPathComponent()
    for _ in 0..<5 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
}

/// Starts a built executable without waiting for it; its output goes to `output`, or nowhere.
func launchProduct(
    _ name: String, _ arguments: [String], environment: [String: String]? = nil, output: Pipe? = nil
) throws -> Process {
    let process = Process()
    process.executableURL = try builtProduct(name)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardOutput = output ?? FileHandle.nullDevice
    try process.run()
    return process
}

/// A finished child process: its exit status and everything it printed.
struct ChildResult {
    var status: Int32
    var output: String
    var errorOutput: String
    /// Whether the child was killed for running past its time limit: a hang.
    var timedOut = false
}

/// Runs a built executable to completion with `environment` added to this process's environment, in
/// `workingDirectory` when one is given, with `input` on a pipe as its standard input (else none). A child
/// still running after `timeout` seconds is killed, and its result says so (`timedOut`).
func runProduct(
    _ name: String, _ arguments: [String], environment: [String: String] = [:], removing: Set<String> = [],
    input: Data? = nil, workingDirectory: URL? = nil, timeout: Double? = nil
) throws -> ChildResult {
    let process = Process()
    process.executableURL = try builtProduct(name)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        .filter { !removing.contains($0.key) }
    let output = Pipe()
    let errorOutput = Pipe()
    process.standardOutput = output
    process.standardError = errorOutput
    if let workingDirectory { process.currentDirectoryURL = workingDirectory }
    let inputPipe = input.map { _ in Pipe() }
    process.standardInput = inputPipe ?? FileHandle.nullDevice
    try process.run()
    if let inputPipe, let input {
        inputPipe.fileHandleForWriting.write(input)
        try inputPipe.fileHandleForWriting.close()
    }
    let timedOut = Locked(false)
    if let timeout {
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            guard process.isRunning else { return }
            timedOut.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
    }
    // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
    let errorData = Locked(Data())
    let errorReader = Thread { errorData.withLock { $0 = errorOutput.fileHandleForReading.readDataToEndOfFile() } }
    errorReader.start()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while errorReader.isExecuting || !errorReader.isFinished { usleep(1000) }
    return ChildResult(
        status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
        errorOutput: String(decoding: errorData.withLock { $0 }, as: UTF8.self), timedOut: timedOut.withLock { $0 })
}

/// Whether this test process runs under ThreadSanitizer (`swift test --sanitize=thread`), whose instrumented
/// child processes start many times slower: tests that start processes then use fewer repetitions.
let isRunningUnderThreadSanitizer: Bool = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil

/// Reads from `handle` until what was read contains `text`, the other end closes, or `timeout` seconds pass.
func readUntil(_ handle: FileHandle, contains text: String, timeout: Double) -> Data {
    var collected = Data()
    let deadline = Date().addingTimeInterval(timeout)
    var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
    while !String(decoding: collected, as: UTF8.self).contains(text) {
        let remaining = deadline.timeIntervalSinceNow
        guard remaining > 0 else { break }
        guard poll(&descriptor, 1, Int32(min(remaining, 1) * 1000)) > 0 else { continue }
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        collected += chunk
    }
    return collected
}

/// A small seeded random number generator, so that a randomised test fails the same way every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// `count` bytes from a generator seeded with `seed`: the same bytes every run.
func randomBytes(count: Int, seed: UInt64) -> Data {
    var random = SplitMix64(seed: seed)
    return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
}
