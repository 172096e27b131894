import Foundation
import FuzzTargets
import Testing

/// `make test`'s share of the fuzzing: every target's seeds, its committed corpus and every input that ever broke
/// it (`Fuzz/regressions/NAME`) go through the same check libFuzzer runs, without a fuzzing engine.
@Suite struct FuzzReplayTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "every seed, corpus and regression input keeps the target's properties", arguments: FuzzCatalog.all.map(\.name))
    func replay(_ name: String) throws {
        let target = try #require(FuzzCatalog.target(named: name))
        var inputs = target.seeds().enumerated().map { ("seed \($0.offset)", $0.element) }
        for folder in FuzzFiles.committedFolders(of: target, packageRoot: Self.packageRoot) {
            for file in FuzzFiles.inputs(at: folder) {
                inputs.append((file.path, [UInt8](try Data(contentsOf: file))))
            }
        }
        for (origin, bytes) in inputs {
            #expect(bytes.count <= target.maxLength || origin.contains("/regressions/"), "\(origin) is over -max_len")
            do {
                try target.check(bytes)
            } catch {
                Issue.record("\(origin): \(error)")
            }
        }
    }

    @Test("every target has a committed corpus")
    func corporaExist() {
        for target in FuzzCatalog.all {
            let corpus = FuzzFiles.committedFolders(of: target, packageRoot: Self.packageRoot)[0]
            #expect(!FuzzFiles.inputs(at: corpus).isEmpty, "\(corpus.path) is empty: run make fuzz and commit it")
        }
    }

    @Test("every corpus and regression folder names a target")
    func noOrphanFolders() throws {
        let names = Set(FuzzCatalog.all.map(\.name))
        for kind in ["corpus", "regressions"] {
            let folder = Self.packageRoot.appendingPathComponent("Fuzz").appendingPathComponent(kind)
            let found = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in found where !name.hasPrefix(".") {
                #expect(names.contains(name), "Fuzz/\(kind)/\(name) is not a target's")
            }
        }
    }

    @Test("the seed-only harness check catches a broken property")
    func brokenPropertyFails() {
        let target = FuzzTarget(
            name: "probe", summary: "", seeds: { [] },
            check: { bytes throws(FuzzFailure) in try expect(bytes.count < 2, "two bytes or more") })
        #expect(throws: FuzzFailure.self) { try target.check([1, 2]) }
        #expect(throws: Never.self) { try target.check([1]) }
    }
}
