import Foundation

// `make bench`: one release build, one run, one table. Every figure is measured beside its reference in
// this same process (or by a tool this process runs), and printed as a ratio with the target.

func section(_ name: String, _ body: () async throws -> [BenchRow]) async -> [BenchRow] {
    FileHandle.standardError.write(Data("ca-bench: \(name)…\n".utf8))
    do {
        return try await body()
    } catch {
        return [
            BenchRow(
                name: "\(name): FAILED (\(error))", value: .nan, unit: "", reference: "", referenceValue: nil,
                ratio: nil, target: "", met: false)
        ]
    }
}

var rows: [BenchRow] = []
rows += await section("store and change details") { runStoreBenchmarks() }
rows += await section("downloader") { try await runTransferBenchmarks() }
rows += await section("fake server") { try await runServerBenchmarks() }
rows += await section("library") { try await runLibraryBenchmarks() }

printTable(rows)
exit(rows.allSatisfy(\.met) ? 0 : 1)
