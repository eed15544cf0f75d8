import CAllocationStatistics
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One row of the results: ns per operation for StorableConfig and for its baseline.
struct Row {
    var operation: String
    var ours: Double
    var baselineName: String
    var baseline: Double
    /// At most `target` × baseline, or at most a figure in `unit`; `nil` for a figure given for information.
    var target: Target?
    var unit = "ns/op"

    enum Target {
        case atMost(Double)
        /// At most this much, in the row's unit, whatever the baseline.
        case within(Double)
    }

    var ratio: Double { baseline > 0 ? ours / baseline : .nan }

    var verdict: String {
        switch target {
        case .atMost(let limit)?: return ratio <= limit ? "ok (≤ \(format(limit))×)" : "MISSED (≤ \(format(limit))×)"
        case .within(let limit)?:
            return ours <= limit ? "ok (≤ \(format(limit)) \(unit))" : "MISSED (≤ \(format(limit)) \(unit))"
        case nil: return ""
        }
    }
}

func format(_ value: Double) -> String {
    if value.isNaN { return "-" }
    if value >= 100 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
}

/// Keeps a value alive and opaque to the optimiser.
@inline(never)
func consume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// The median, over `repeats` runs, of the time per call of `body` called `iterations` times with the
/// iteration's index (so that no read can be hoisted out of the loop).
func nanosecondsPerOperation(iterations: Int, repeats: Int = 7, _ body: (Int) -> Void) -> Double {
    // Warm up caches, lazily created state and the branch predictor.
    for index in 0..<min(iterations, 1000, max(1, iterations / 4)) { body(index) }
    var samples: [Double] = []
    for _ in 0..<repeats {
        let start = now()
        for index in 0..<iterations { body(index) }
        samples.append(Double(now() - start) / Double(iterations))
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// Bytes the allocator has handed out and not taken back.
func allocatedBytes() -> Int {
    Int(storable_config_allocated_bytes())
}

func printTable(_ rows: [Row], title: String) {
    print(title)
    let header = ["operation", "StorableConfig", "baseline", "baseline", "ratio", "target"]
    let lines = rows.map { row in
        [
            row.operation, "\(format(row.ours)) \(row.unit)", row.baselineName, "\(format(row.baseline)) \(row.unit)",
            format(row.ratio) + "×", row.verdict,
        ]
    }
    let widths = header.indices.map { column in ([header] + lines).map { $0[column].count }.max() ?? 0 }
    for line in [header] + lines {
        print(
            line.enumerated().map { column, cell in
                column == line.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
    }
}

func jsonText(_ rows: [Row], machine: String) -> String {
    func number(_ value: Double) -> String { value.isFinite ? String(value) : "null" }
    let items = rows.map { row in
        """
          {"operation": "\(row.operation)", "unit": "\(row.unit)", "storableConfig": \(number(row.ours)), \
        "baselineName": "\(row.baselineName)", "baseline": \(number(row.baseline)), "ratio": \(number(row.ratio)), \
        "verdict": "\(row.verdict)"}
        """
    }
    return "{\n  \"machine\": \"\(machine)\",\n  \"results\": [\n" + items.joined(separator: ",\n") + "\n  ]\n}"
}
