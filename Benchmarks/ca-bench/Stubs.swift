// Placeholders replaced as each module's benchmarks land.
func runStoreBenchmarks() -> [BenchRow] { [] }
func runServerBenchmarks() async throws -> [BenchRow] { [] }
func runLibraryBenchmarks() async throws -> [BenchRow] { [] }
