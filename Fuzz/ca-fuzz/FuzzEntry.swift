import Foundation
import FuzzTargets

#if canImport(Glibc)
    import Glibc
#endif

// Built two ways. `make fuzz` compiles this file with CA_LIBFUZZER under `-sanitize=fuzzer,address`: libFuzzer
// supplies `main` and calls `LLVMFuzzerTestOneInput` with each input for the target CA_FUZZ_TARGET names. The
// ordinary build has a small command instead: `list` (the targets and their limits, for scripts/fuzz.sh),
// `seed DIR` (writes each target's seed inputs into DIR/NAME) and `run NAME PATH…` (replays files or folders).

/// One line on standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

#if CA_LIBFUZZER

    /// The target this fuzzing process runs, chosen once by CA_FUZZ_TARGET.
    let selectedTarget: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["CA_FUZZ_TARGET"] ?? ""
        guard let target = FuzzCatalog.target(named: name) else {
            let names = FuzzCatalog.all.map(\.name).joined(separator: ", ")
            printError("ca-fuzz: set CA_FUZZ_TARGET to one of: \(names)")
            exit(2)
        }
        return target
    }()

    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzInitialize(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> CInt {
        printError("ca-fuzz: target \(selectedTarget.name): \(selectedTarget.summary)")
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try selectedTarget.check(bytes)
        } catch {
            printError("ca-fuzz: \(selectedTarget.name): property broken: \(error)")
            abort()
        }
        return 0
    }

#else

    @main
    struct FuzzTool {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            switch arguments.first {
            case "list":
                for target in FuzzCatalog.all {
                    print(
                        [
                            target.name, String(target.maxLength), String(target.mallocLimitMB),
                            String(target.cpuMinutesGoal), target.summary,
                        ]
                        .joined(separator: "\t"))
                }
            case "seed" where arguments.count == 2:
                seed(into: URL(fileURLWithPath: arguments[1]))
            case "run" where arguments.count >= 3:
                guard let target = FuzzCatalog.target(named: arguments[1]) else { fail("no target \(arguments[1])") }
                replay(target, paths: arguments.dropFirst(2).map { URL(fileURLWithPath: $0) })
            default:
                fail("usage: ca-fuzz list | seed DIR | run TARGET FILE-OR-DIR…")
            }
        }

        static func fail(_ message: String) -> Never {
            printError("ca-fuzz: \(message)")
            exit(2)
        }

        /// Writes each target's seeds as DIR/NAME/seed-N (over older seeds of the same number).
        static func seed(into folder: URL) {
            for target in FuzzCatalog.all {
                let dir = folder.appendingPathComponent(target.name)
                try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                for (i, input) in target.seeds().enumerated() {
                    do {
                        try Data(input).write(to: dir.appendingPathComponent("seed-\(i)"))
                    } catch {
                        fail("cannot write \(dir.path): \(error)")
                    }
                }
            }
        }

        static func replay(_ target: FuzzTarget, paths: [URL]) {
            var failures = 0
            var count = 0
            for file in paths.flatMap(FuzzFiles.inputs(at:)) {
                count += 1
                let bytes = [UInt8]((try? Data(contentsOf: file)) ?? Data())
                do {
                    try target.check(bytes)
                } catch {
                    failures += 1
                    print("\(file.path): \(error)")
                }
            }
            print("\(target.name): \(count) inputs, \(failures) broke a property")
            exit(failures == 0 ? 0 : 1)
        }
    }

#endif
