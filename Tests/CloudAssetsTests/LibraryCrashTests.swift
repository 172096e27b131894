import CloudAssets
import FakeS3
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real `kill -9` of a process in the middle of a download, then a reopen.
///
/// The child is this very test binary, run with a filter that selects ``LibraryCrashTests/childDownloadsUntilKilled()``
/// (enabled only by the environment variables the parent sets): it opens the library, starts a download that the fake
/// server stalls part-way, prints a marker once bytes are on disk, and waits to be killed.
@Suite("Library: kill -9 mid-download", .heavy, .timeLimit(.minutes(1)))
struct LibraryCrashTests {
    static let marker = "CRASH-CHILD-DOWNLOADING"
    /// Progress comes per 1 MiB written: the child announces the first chunk on disk, then the transfer hangs.
    static let chunk = 1_048_576
    static let size = 3 * chunk
    static let stallAt = chunk + 100_000
    static let path = "crash/big.png"

    @Test("after kill -9 mid-download the folder reopens consistent and the download completes verified")
    func killDuringDownloadThenReopen() async throws {
        let executable = try CLIBinary.locate("ca-test-child")
        try await withHarness { harness in
            let original = testBytes(count: Self.size, seed: 210)
            try harness.put(Self.path, data: original, thumbnail: testBytes(count: 64, seed: 211))
            try harness.put("crash/other.png", data: testBytes(count: 3000, seed: 212))
            let setup = try await harness.open()
            try await setup.sync()
            let asset = try setup.asset(path: Self.path)
            let token = setup.currentChangeToken
            setup.close()
            harness.server.faults.add(
                .stallAfter(bytes: Self.stallAt), keyPattern: "originals/" + Self.path, method: "GET", times: 1)

            let child = try ChildProcess(
                executable: executable,
                arguments: [
                    "download-until-killed", harness.storeURL.path, harness.server.endpoint.absoluteString,
                    "originals/" + Self.path,
                ],
                environment: LibraryCrashTests.childCredentials)
            let line = await child.firstLine(containing: Self.marker)
            #expect(line != nil, "the child ended before it started downloading")

            // While the child holds the library, this process can open it too, and does not repair it.
            let beside = try await AssetLibrary(configuration: harness.configuration())
            #expect(beside.recovery == AssetLibrary.RecoveryReport())
            #expect(try beside.fetchAssets().count == 2)
            beside.close()
            child.kill()
            let status = await child.exitStatus()
            #expect(status == SIGKILL)

            let part = harness.storeURL.appendingPathComponent("originals/\(asset.id).png.part").path
            #expect(FileManager.default.fileExists(atPath: part))
            let library = try await harness.open()
            #expect(library.recovery.partFilesKept == 1)
            #expect(library.recovery.fullDowngraded == 0)
            #expect(library.currentChangeToken == token)
            let reopened = try library.current(asset)
            #expect(reopened.availability == .thumbnail)
            #expect(try library.fetchAssets().count == 2)

            let data = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            #expect(data == original)
            #expect(try library.current(asset).availability == .full)
            #expect(!FileManager.default.fileExists(atPath: part))
            #expect(!FileManager.default.fileExists(atPath: part + ".json"))
            #expect(harness.gets(of: Self.path).count == 2)
        }
    }

    @Test("after kill -9 mid-download the next request resumes from the bytes on disk")
    func killDuringDownloadResumesFromPartFile() async throws {
        let executable = try CLIBinary.locate("ca-test-child")
        try await withHarness { harness in
            try harness.put(Self.path, data: testBytes(count: Self.size, seed: 220))
            let setup = try await harness.open()
            try await setup.sync()
            let asset = try setup.asset(path: Self.path)
            setup.close()
            harness.server.faults.add(
                .stallAfter(bytes: Self.stallAt), keyPattern: "originals/" + Self.path, method: "GET", times: 1)
            let child = try ChildProcess(
                executable: executable,
                arguments: [
                    "download-until-killed", harness.storeURL.path, harness.server.endpoint.absoluteString,
                    "originals/" + Self.path,
                ],
                environment: LibraryCrashTests.childCredentials)
            _ = await child.firstLine(containing: Self.marker)
            child.kill()
            _ = await child.exitStatus()
            let library = try await harness.open()
            _ = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            #expect(harness.gets(of: Self.path).last?.rangeHeader?.hasPrefix("bytes=") == true)
        }
    }

    /// The credentials a child library reads from its environment (the harness's).
    static let childCredentials = [
        "AWS_ACCESS_KEY_ID": LibraryHarness.accessKey, "AWS_SECRET_ACCESS_KEY": LibraryHarness.secretKey,
    ]
}

/// A child process whose standard output the test reads line by line.
final class ChildProcess: Sendable {
    private let process: Process
    private let output: Pipe
    private let exit = Shared<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    init(executable: URL, arguments: [String], environment: [String: String]) throws {
        process = Process()
        output = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exit = self.exit
        process.terminationHandler = { process in
            let waiters = exit.withLock { state in
                state.status = process.terminationStatus
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: process.terminationStatus) }
        }
        try process.run()
    }

    /// The first line of output containing `text`, or nil when the output ends first. Reads on a dispatch thread.
    func firstLine(containing text: String) async -> String? {
        let reader = output.fileHandleForReading
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var buffer = Data()
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
                    if let line = lines.first(where: { $0.contains(text) }) {
                        continuation.resume(returning: String(line))
                        return
                    }
                }
                continuation.resume(returning: nil)
            }
        }
    }

    /// Sends SIGKILL.
    func kill() { sendSignal(SIGKILL, to: process.processIdentifier) }

    /// Waits for the process to end: its exit code, or the signal that ended it.
    func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = exit.withLock { state -> Int32? in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    deinit {
        if process.isRunning { sendSignal(SIGKILL, to: process.processIdentifier) }
    }
}

private func sendSignal(_ signal: Int32, to pid: Int32) { _ = kill(pid, signal) }
