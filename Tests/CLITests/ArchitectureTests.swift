import Foundation
import Testing

/// A rule of the house that the compiler cannot check, read from the sources: the catalog is the one writer of the
/// store.
@Suite struct ArchitectureTests {
    /// The store's methods that write outside a ``StoreTransaction`` (found in `Sources/AssetStore`: a method of
    /// `AssetStore` whose body opens a write), by name.
    static func storeWriters() throws -> Set<String> {
        var writers = Set<String>()
        for file in Repository.files(under: "Sources/AssetStore", suffix: ".swift") {
            let source = try Repository.text(file)
            var owner = ""
            var current: String?
            var body = ""
            var depth = 0
            for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
                let text = String(line)
                if depth == 0, let match = text.firstMatch(of: /^(?:extension|(?:\w+ )*class|(?:\w+ )*struct) (\w+)/) {
                    owner = String(match.1)
                }
                if depth == 1, owner == "AssetStore", let match = text.firstMatch(of: /func (\w+)[<(]/) {
                    current = String(match.1)
                    body = ""
                }
                if current != nil { body += text + "\n" }
                depth += text.filter { $0 == "{" }.count - text.filter { $0 == "}" }.count
                if depth <= 1, let name = current {
                    if body.contains("pool.write") || body.contains("writeOther {") || body.contains("try write(") {
                        writers.insert(name)
                    }
                    current = nil
                }
            }
        }
        return writers
    }

    @Test func onlyTheCatalogWritesTheStore() throws {
        let writers = try Self.storeWriters()
        // The writers this test must find, or it reads the sources wrong.
        for known in ["write", "setSetting", "setUploadCheckpoint", "removeJournalOutbox", "suspendIndexesForBulkLoad"]
        {
            #expect(writers.contains(known), "found the store's writers: \(writers.sorted())")
        }
        var outside: [String] = []
        for top in ["Sources", "Benchmarks"] {
            for file in Repository.files(under: top, suffix: ".swift")
            where !file.hasPrefix("Sources/AssetStore/") && !file.hasPrefix("Sources/CloudAssets/Catalog/")
                && !file.hasPrefix("Benchmarks/")
            {
                let source = try Repository.text(file)
                for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    for name in writers where code.contains("store.\(name)(") || code.contains("store.\(name) {") {
                        outside.append("\(file):\(number + 1): store.\(name)")
                    }
                }
            }
        }
        #expect(outside.isEmpty, "the store is written outside Catalog/:\n\(outside.joined(separator: "\n"))")
    }

}
