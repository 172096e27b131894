// Placeholders replaced as each module's benchmarks land.
func runStoreBenchmarks() -> [BenchRow] { [] }
func runTransferBenchmarks() async throws -> [BenchRow] { [] }
func runServerBenchmarks() async throws -> [BenchRow] { [] }
func runLibraryBenchmarks() async throws -> [BenchRow] { [] }
