import Essentials
import Foundation

/// Runs the `cloudassets` binary as a child process that the test can `kill -9`.
struct ChildCLI {
    let binary: URL

    /// Finds the built `cloudassets`: `CLOUDASSETS_BIN`, then beside the test bundle, then the package's
    /// `.build/debug` or `.build/release`.
    static func locate() throws -> ChildCLI {
        let fm = FileManager.default
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["CLOUDASSETS_BIN"] {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        if let bundle = Bundle.main.executableURL?.deletingLastPathComponent() {
            candidates.append(bundle.appendingPathComponent("cloudassets"))
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("cloudassets"))
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            candidates.append(root.appendingPathComponent(".build/\(configuration)/cloudassets"))
        }
        guard let found = candidates.first(where: { fm.isExecutableFile(atPath: $0.path) }) else {
            throw ChildError("cloudassets binary not found (build it with `swift build`); looked in \(candidates)")
        }
        return ChildCLI(binary: found)
    }

    /// Starts `cloudassets <arguments>` against `bucket`, with its output in `logFolder`.
    func start(_ arguments: [String], store: URL, bucket: ReliabilityBucket, logFolder: URL) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments =
            arguments + [
                "--store", store.path, "--endpoint", bucket.server.endpoint.absoluteString,
                "--bucket", ReliabilityBucket.bucket, "--quiet",
            ]
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = ReliabilityBucket.accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = ReliabilityBucket.secretKey
        environment["HOME"] = logFolder.path  // no user config file
        process.environment = environment
        let log = logFolder.appendingPathComponent("child-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        // In the ledger of what is open (the tests' leak check) until it has ended and been reaped.
        let entry = OpenResources.opened("child process cloudassets \(arguments.first ?? "")")
        process.terminationHandler = { child in
            OpenResources.closed(entry)
            guard child.terminationReason == .exit, child.terminationStatus != 0 else { return }
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            print("cloudassets \(arguments.joined(separator: " ")) exited \(child.terminationStatus): \(output)")
        }
        do {
            try process.run()
        } catch {
            OpenResources.closed(entry)
            throw error
        }
        try? handle.close()
        return process
    }
}

/// Sends SIGKILL and reaps the child.
func killNine(_ process: Process) {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}

struct ChildError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
