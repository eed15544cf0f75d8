// The figures of EtcdStore against a running cluster, given `--etcd <url>`:
//
//   swift run -c release storable-config-benchmarks --etcd http://127.0.0.1:2379 [--etcd-https URL] [--json]
//       [--quick]
//
// An assignment against a bare URLSession put to the same cluster, a read against a read of the in-memory
// store, and the time from an assignment here to an observer in another process (this executable, started as
// `etcd-observer`), both reading the same monotonic clock. Everything is written under a prefix of its own,
// deleted at the end.
import Foundation
import StorableConfig
import StorableConfigEtcd

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CLOCK_MONOTONIC, which two processes on one machine share.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The other process: prints `ready`, then `<value> <clock>` each time its observer sees `count` change.
func etcdObserverChild(_ arguments: [String]) -> Never {
    let store = try! EtcdStore(endpoints: [URL(string: arguments[1])!], prefix: arguments[2])
    let config = BenchConfig(store: store)
    let token = config.$count.observe { value in
        let line = "\(value) \(monotonicNanoseconds())\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    // Until the parent closes our standard input.
    _ = FileHandle.standardInput.readDataToEndOfFile()
    token.cancel()
    exit(0)
}

/// Lines from a pipe, one at a time.
final class LineReader {
    private let handle: FileHandle
    private var buffered: [UInt8] = []

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    func next() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: 10) {
                let line = String(decoding: buffered[0..<newline], as: UTF8.self)
                buffered.removeFirst(newline + 1)
                return line
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffered += data
        }
    }
}

/// A put of `value` under `key` through URLSession, waited for: the baseline of an assignment.
func urlSessionPut(_ session: URLSession, _ url: URL, key: String, value: String) {
    var request = URLRequest(url: url.appendingPathComponent("v3/kv/put"))
    request.httpMethod = "POST"
    request.httpBody = try! JSONSerialization.data(withJSONObject: [
        "key": Data(key.utf8).base64EncodedString(), "value": Data(value.utf8).base64EncodedString(),
    ])
    let done = DispatchSemaphore(value: 0)
    session.dataTask(with: request) { _, response, error in
        if let error { fatalError("the baseline put failed: \(error)") }
        if (response as? HTTPURLResponse)?.statusCode != 200 { fatalError("the baseline put failed: \(response!)") }
        done.signal()
    }.resume()
    done.wait()
}

/// Deletes `key`, or every key from `key` up to `rangeEnd`, through URLSession, waited for.
func urlSessionDelete(_ session: URLSession, _ url: URL, key: String, rangeEnd: String? = nil) {
    var request = URLRequest(url: url.appendingPathComponent("v3/kv/deleterange"))
    request.httpMethod = "POST"
    var body = ["key": Data(key.utf8).base64EncodedString()]
    if let rangeEnd { body["range_end"] = Data(rangeEnd.utf8).base64EncodedString() }
    request.httpBody = try! JSONSerialization.data(withJSONObject: body)
    let done = DispatchSemaphore(value: 0)
    session.dataTask(with: request) { _, _, _ in done.signal() }.resume()
    done.wait()
}

func median(_ samples: [Double]) -> Double {
    let sorted = samples.sorted()
    return sorted[sorted.count / 2]
}

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// `--etcd <url>`: prints EtcdStore's figures, and nothing else.
func runEtcdFigures(_ arguments: [String], quick: Bool, machine: String) -> Never {
    guard let index = arguments.firstIndex(of: "--etcd"), index + 1 < arguments.count,
        let url = URL(string: arguments[index + 1])
    else {
        FileHandle.standardError.write(Data("--etcd needs a URL, such as http://127.0.0.1:2379\n".utf8))
        exit(2)
    }
    var https: URL?
    if let index = arguments.firstIndex(of: "--etcd-https") {
        guard index + 1 < arguments.count, let url = URL(string: arguments[index + 1]), url.scheme == "https" else {
            FileHandle.standardError.write(Data("--etcd-https needs an https:// URL of the same cluster\n".utf8))
            exit(2)
        }
        https = url
    }
    let rows = etcdFigures(url, https: https, quick: quick)
    if arguments.contains("--json") {
        print(jsonText(rows, machine: machine))
    } else {
        printTable(rows, title: "EtcdStore benchmarks against \(url.absoluteString) (release build, \(machine))\n")
    }
    exit(0)
}

func etcdFigures(_ url: URL, https: URL? = nil, quick: Bool) -> [Row] {
    let prefix = "storable-config-benchmarks-\(getpid())/"
    let store: EtcdStore
    do {
        store = try EtcdStore(endpoints: [url], prefix: prefix)
    } catch {
        fatalError("\(error)")
    }
    guard store.isConnected else {
        FileHandle.standardError.write(Data("etcd at \(url.absoluteString) did not answer\n".utf8))
        exit(1)
    }
    let config = BenchConfig(store: store)
    let memory = BenchConfig(store: InMemoryStore())
    // A change that never reaches the other process must not hang the run.
    DispatchQueue.global().asyncAfter(deadline: .now() + 600) {
        FileHandle.standardError.write(Data("the etcd figures took over 10 minutes: stopped\n".utf8))
        exit(1)
    }
    let rounds = quick ? 30 : 300
    var rows: [Row] = []

    // Assignments and bare puts, alternated so that both see the same cluster.
    let session = URLSession(configuration: .ephemeral)
    // Outside the watched prefix, so that the store's watch does not announce the bare puts.
    let bareKey = "storable-config-benchmarks-bare-\(getpid())"
    var ours: [Double] = []
    var bare: [Double] = []
    func assignment(_ round: Int) -> Double {
        let start = monotonicNanoseconds()
        config.count = round
        return Double(monotonicNanoseconds() - start)
    }
    func barePut(_ round: Int) -> Double {
        let start = monotonicNanoseconds()
        urlSessionPut(session, url, key: bareKey, value: String(round))
        return Double(monotonicNanoseconds() - start)
    }
    for round in -10..<rounds {
        // Alternated: neither always goes first.
        var oursTime = 0.0
        var bareTime = 0.0
        if round & 1 == 0 {
            oursTime = assignment(round)
            bareTime = barePut(round)
        } else {
            bareTime = barePut(round)
            oursTime = assignment(round)
        }
        // The first rounds open connections and warm both paths.
        if round >= 0 {
            ours.append(oursTime)
            bare.append(bareTime)
        }
    }
    rows.append(
        Row(
            operation: "assignment (etcd, median)", ours: median(ours), baselineName: "bare URLSession put",
            baseline: median(bare), target: .atMost(0.9)))
    if let https { rows.append(httpsAssignmentRow(https, against: config, prefix: prefix, rounds: rounds)) }

    // Reads come from the config's own value, as with every store.
    var sink = 0
    let readIterations = quick ? 200_000 : 2_000_000
    var etcdReads: [Double] = []
    var memoryReads: [Double] = []
    // Alternated, so that a busy moment of the machine does not fall on one of them only.
    for _ in 0..<5 {
        etcdReads.append(
            nanosecondsPerOperation(iterations: readIterations, repeats: 3) { sink &+= readOursInt(config, $0) })
        memoryReads.append(
            nanosecondsPerOperation(iterations: readIterations, repeats: 3) { sink &+= readOursInt(memory, $0) })
    }
    consume(sink)
    let etcdRead = median(etcdReads)
    let memoryRead = median(memoryReads)
    rows.append(
        Row(
            operation: "read Int (etcd)", ours: etcdRead, baselineName: "read Int (memory)", baseline: memoryRead,
            target: .atMost(1.2)))

    // An assignment here, seen by an observer in another process.
    let child = Process()
    child.executableURL = Bundle.main.executableURL
    child.arguments = ["etcd-observer", url.absoluteString, prefix]
    let output = Pipe()
    let input = Pipe()
    child.standardOutput = output
    child.standardInput = input
    try! child.run()
    let lines = LineReader(output.fileHandleForReading)
    while let line = lines.next(), line != "ready" {}
    var latencies: [Double] = []
    for round in 0..<(rounds + 10) {
        let value = 1_000_000 + round
        let start = monotonicNanoseconds()
        config.count = value
        while let line = lines.next() {
            let parts = line.split(separator: " ")
            guard parts.count == 2, Int(parts[0]) == value, let seen = UInt64(parts[1]) else { continue }
            if round >= 10 { latencies.append(Double(seen) - Double(start)) }
            break
        }
    }
    try? input.fileHandleForWriting.close()
    child.waitUntilExit()
    guard latencies.count == rounds else {
        FileHandle.standardError.write(
            Data("the observer process ended early (status \(child.terminationStatus))\n".utf8))
        exit(1)
    }
    rows.append(
        Row(
            operation: "assignment → observer in another process (etcd, median)", ours: median(latencies),
            baselineName: "budget", baseline: 5_000_000, target: .atMost(1.0)))
    rows.append(
        Row(
            operation: "assignment → observer in another process (etcd, 90th pct)",
            ours: percentile(latencies, 0.9), baselineName: "budget", baseline: 5_000_000, target: nil))

    // Leave the cluster as it was.
    // The prefix ends in "/": its range ends at "0", the next character.
    urlSessionDelete(session, url, key: prefix, rangeEnd: String(prefix.dropLast()) + "0")
    urlSessionDelete(session, url, key: bareKey)
    return rows
}

/// `--etcd-https <url>`: an assignment over https against one over http to the same cluster, alternated. The
/// CA, client certificate and key come from STORABLE_CONFIG_ETCD_CACERT, _CERT and _KEY, as the demo's do.
func httpsAssignmentRow(_ url: URL, against plain: BenchConfig, prefix: String, rounds: Int) -> Row {
    let environment = ProcessInfo.processInfo.environment
    let file = { (name: String) in environment[name].map { URL(fileURLWithPath: $0) } }
    let tls = EtcdStore.TLS(
        caFile: file("STORABLE_CONFIG_ETCD_CACERT"), certificateFile: file("STORABLE_CONFIG_ETCD_CERT"),
        keyFile: file("STORABLE_CONFIG_ETCD_KEY"))
    let store: EtcdStore
    do {
        store = try EtcdStore(endpoints: [url], prefix: "https-" + prefix, tls: tls)
    } catch {
        fatalError("\(error)")
    }
    guard store.isConnected else {
        FileHandle.standardError.write(Data("etcd at \(url.absoluteString): \(store.connectionProblem ?? "")\n".utf8))
        exit(1)
    }
    let secure = BenchConfig(store: store)
    var overHTTPS: [Double] = []
    var overHTTP: [Double] = []
    func time(_ config: BenchConfig, _ round: Int) -> Double {
        let start = monotonicNanoseconds()
        config.count = round
        return Double(monotonicNanoseconds() - start)
    }
    for round in -10..<rounds {
        let first = round & 1 == 0 ? time(secure, round) : time(plain, round)
        let second = round & 1 == 0 ? time(plain, round) : time(secure, round)
        guard round >= 0 else { continue }
        overHTTPS.append(round & 1 == 0 ? first : second)
        overHTTP.append(round & 1 == 0 ? second : first)
    }
    secure.reset()
    return Row(
        operation: "assignment over https (etcd, median)", ours: median(overHTTPS),
        baselineName: "assignment over http", baseline: median(overHTTP), target: .atMost(1.15))
}
