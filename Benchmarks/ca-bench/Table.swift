import Foundation

/// Prints the rows as one aligned table; rows that miss their target are marked `MISS`.
func printTable(_ rows: [BenchRow]) {
    func fmt(_ v: Double?) -> String {
        guard let v, v.isFinite else { return "-" }
        if abs(v) >= 100 { return String(format: "%.0f", v) }
        if abs(v) >= 1 { return String(format: "%.2f", v) }
        return String(format: "%.3f", v)
    }
    let header = ["benchmark", "value", "unit", "reference", "ref value", "ratio", "target", "ok"]
    let body = rows.map { r in
        [
            r.name, fmt(r.value), r.unit, r.reference, fmt(r.referenceValue), r.ratio.map { fmt($0) + "x" } ?? "-",
            r.target, r.met ? "ok" : "MISS",
        ]
    }
    var widths = header.map(\.count)
    for line in body { for (i, cell) in line.enumerated() { widths[i] = max(widths[i], cell.count) } }
    func render(_ cells: [String]) -> String {
        cells.enumerated().map { i, c in c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
            .joined(separator: " | ")
    }
    print(render(header))
    print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
    for line in body { print(render(line)) }
    let missed = rows.filter { !$0.met }.count
    print("\(rows.count - missed) targets met, \(missed) missed")
}

/// Peak resident set size of this process (VmHWM), in bytes.
func peakRSS() -> Int64 {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0
        return digits * 1024
    }
    return 0
}

/// Monotonic seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
