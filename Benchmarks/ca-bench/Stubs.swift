// Placeholders replaced as each module's benchmarks land.
func runTransferBenchmarks() async throws -> [BenchRow] { [] }
