// The lead merges the other benchmark groups here; this branch runs the store group.
let rows = runStoreBenchmarks()
for row in rows {
    var line =
        "\(row.met ? "✔" : "✘") \(row.name): \(String(format: "%.3f", row.value)) \(row.unit) (target \(row.target))"
    if let reference = row.referenceValue, let ratio = row.ratio {
        line += " — \(row.reference): \(String(format: "%.1f", reference)) ms, \(String(format: "%.1f", ratio))×"
    }
    print(line)
}
