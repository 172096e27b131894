import Essentials
import FakeS3
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `-o PATH` of `get` and `image` against what may already be at the path: a FIFO, a character device, a file
/// with its own permissions, a symbolic link, a hard-linked file, a folder.
@Suite("cloudassets -o: what is already at the path", .heavy)
struct OutputPathTests {
    /// The type bits of what is at `path` (not following a link), or nil when nothing is.
    static func fileType(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }

    static func status(_ path: String) throws -> stat {
        var status = stat()
        guard stat(path, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return status
    }

    /// The names in `folder` that are temporary output files.
    static func leftovers(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }
    }

    /// A FIFO with a reader (which also holds a write end, so it reads until this test lets go): the bytes a
    /// writer puts into it.
    final class FIFOReader: Sendable {
        let path: String
        private let readEnd: Int32
        private let keeper: Int32
        private let collected = LockedBytes()

        init(at path: String) throws {
            guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.EIO) }
            self.path = path
            readEnd = open(path, O_RDONLY | O_NONBLOCK)
            keeper = open(path, O_WRONLY | O_NONBLOCK)
            guard readEnd >= 0, keeper >= 0 else { throw POSIXError(.EIO) }
            // Blocking reads from here on: they wait for data, and end once every writer has closed.
            _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) & ~O_NONBLOCK)
        }

        /// Reads until every writer closed; call ``release()`` once the writer under test has finished.
        func readAll() async -> Data {
            let fd = readEnd
            let collected = self.collected
            return await withCheckedContinuation { continuation in
                Thread {
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    while true {
                        let n = read(fd, &buffer, buffer.count)
                        if n < 0 && errno == EINTR { continue }
                        guard n > 0 else { break }
                        collected.append(Data(buffer[0..<n]))
                    }
                    close(fd)
                    continuation.resume(returning: collected.data)
                }.start()
            }
        }

        /// Closes this test's own write end.
        func release() { close(keeper) }
    }

    @Test func aFIFOWithAReaderGetsTheBytesAndStaysAFIFO() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let fifo = try FIFOReader(at: fixture.folder.appendingPathComponent("pipe").path)
            async let received = fifo.readAll()
            let result = try await fixture.run("get", [target.id, "--network", "-o", fifo.path])
            fifo.release()
            expectSuccess(result)
            expectSameBytes(await received, try fixture.objectData(target.key), "what the FIFO's reader got")
            #expect(Self.fileType(fifo.path) == S_IFIFO, "the FIFO is still a FIFO")
            #expect(try Self.leftovers(in: fixture.folder).isEmpty)
        }
    }

    /// `/dev/full` itself when this process may not make device nodes; else a node of the same device (1, 7) in
    /// the test's folder, so that a command that replaced it would replace only the test's own node.
    static func fullDevice(in folder: URL) -> String {
        let path = folder.appendingPathComponent("full").path
        return mknod(path, S_IFCHR | 0o666, deviceNumber(major: 1, minor: 7)) == 0 ? path : "/dev/full"
    }

    /// glibc's `makedev` (a C macro, not imported) for a major below 4096 and a minor below 256.
    static func deviceNumber(major: dev_t, minor: dev_t) -> dev_t { major << 8 | minor }

    static func nullDevice(in folder: URL) -> String {
        let path = folder.appendingPathComponent("null").path
        return mknod(path, S_IFCHR | 0o666, deviceNumber(major: 1, minor: 3)) == 0 ? path : "/dev/null"
    }

    @Test func writingToAFullDeviceFailsWithTheDiskFullStatusAndKeepsTheDevice() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let full = Self.fullDevice(in: fixture.folder)
            let result = try await fixture.run("get", [target.id, "--network", "--quiet", "-o", full])
            expectUserError(result, status: 9, mentioning: "space")
            #expect(Self.fileType(full) == S_IFCHR, "\(full) is still a character device")
            #expect(try Self.leftovers(in: fixture.folder).isEmpty)
        }
    }

    @Test func standardOutputOnAFullDeviceFailsWithTheDiskFullStatus() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let full = try #require(FileHandle(forWritingAtPath: Self.fullDevice(in: fixture.folder)))
            // `get -o - > /dev/full`: ChildProcess captures standard output in a pipe, so the process is run here.
            let process = Process()
            process.executableURL = fixture.executable
            process.arguments = ["get"] + fixture.globalArguments + [target.id, "--network", "--quiet", "-o", "-"]
            process.environment = fixture.environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = full
            let errors = Pipe()
            process.standardError = errors
            let (status, stderr) = try await withCheckedThrowingContinuation { continuation in
                Thread {
                    do {
                        try process.run()
                        try? errors.fileHandleForWriting.close()
                        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        process.waitUntilExit()
                        continuation.resume(returning: (process.terminationStatus, text))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }.start()
            }
            try full.close()
            #expect(status == 9, "\(stderr)")
            #expect(stderr.hasPrefix("error: ") && stderr.contains("No space left"), "\(stderr)")
        }
    }

    @Test func aNullDeviceIsWrittenNotReplacedByGetAndImage() async throws {
        try await withFixture(assets: 1) { fixture in
            let jpeg = try ImageCommandTests.cameraJPEG()
            try fixture.server.putObject(bucket: CLIFixture.bucket, key: ImageCommandTests.key, data: jpeg)
            try await fixture.sync()
            let row = try #require(try await fixture.list().first { $0.key == ImageCommandTests.key })
            let null = Self.nullDevice(in: fixture.folder)
            expectSuccess(try await fixture.run("get", [row.id, "--network", "-o", null]))
            #expect(Self.fileType(null) == S_IFCHR)
            expectSuccess(try await fixture.run("image", [row.id, "--size", "64", "-o", null]))
            #expect(Self.fileType(null) == S_IFCHR)
            let full = Self.fullDevice(in: fixture.folder)
            expectUserError(
                try await fixture.run("image", [row.id, "--size", "64", "-o", full]), status: 9, mentioning: "space")
            #expect(Self.fileType(full) == S_IFCHR)
            #expect(try Self.leftovers(in: fixture.folder).isEmpty)
        }
    }

    @Test func anExistingFileIsReplacedWholeAndKeepsItsMode() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let private0600 = fixture.folder.appendingPathComponent("private.jpg")
            try Data("old".utf8).write(to: private0600)
            #expect(chmod(private0600.path, 0o600) == 0)
            let before = try Self.status(private0600.path)
            expectSuccess(try await fixture.run("get", [target.id, "--network", "-o", private0600.path]))
            expectSameBytes(try Data(contentsOf: private0600), try fixture.objectData(target.key), "the -o file")
            let after = try Self.status(private0600.path)
            #expect(after.st_mode & 0o7777 == 0o600, "mode \(String(after.st_mode & 0o7777, radix: 8))")
            #expect(after.st_ino != before.st_ino, "replaced by a rename, not written in place")
            #expect(try Self.leftovers(in: fixture.folder).isEmpty)
        }
    }

    @Test func aSymbolicLinkIsWrittenThroughToItsTarget() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let elsewhere = fixture.folder.appendingPathComponent("elsewhere", isDirectory: true)
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let real = elsewhere.appendingPathComponent("real.jpg")
            try Data("old".utf8).write(to: real)
            #expect(chmod(real.path, 0o640) == 0)
            let link = fixture.folder.appendingPathComponent("link.jpg")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "elsewhere/real.jpg")

            expectSuccess(try await fixture.run("get", [target.id, "--network", "-o", link.path]))
            #expect(Self.fileType(link.path) == S_IFLNK, "the link is still a link")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "elsewhere/real.jpg")
            expectSameBytes(try Data(contentsOf: real), try fixture.objectData(target.key), "the link's target")
            #expect(try Self.status(real.path).st_mode & 0o7777 == 0o640)
            #expect(try Self.leftovers(in: fixture.folder).isEmpty && Self.leftovers(in: elsewhere).isEmpty)

            // A link to nothing is refused, and so is a link into the library folder.
            let dangling = fixture.folder.appendingPathComponent("dangling.jpg")
            try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: "nowhere/x.jpg")
            expectUserError(
                try await fixture.run("get", [target.id, "-o", dangling.path]), status: 2, mentioning: "link")
            #expect(Self.fileType(dangling.path) == S_IFLNK)
            let catalog = fixture.store.appendingPathComponent("library.sqlite")
            let intoLibrary = fixture.folder.appendingPathComponent("catalog.jpg")
            try FileManager.default.createSymbolicLink(atPath: intoLibrary.path, withDestinationPath: catalog.path)
            let catalogBefore = try Self.status(catalog.path)
            expectUserError(
                try await fixture.run("get", [target.id, "-o", intoLibrary.path]), status: 12, mentioning: "library")
            #expect(try Self.status(catalog.path).st_ino == catalogBefore.st_ino, "the catalog is not replaced")
            #expect(Self.fileType(intoLibrary.path) == S_IFLNK)
        }
    }

    @Test func aHardLinkedFileIsWrittenInPlaceSoEveryNameSeesTheBytes() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let first = fixture.folder.appendingPathComponent("first.jpg")
            let second = fixture.folder.appendingPathComponent("second.jpg")
            try Data(repeating: 9, count: 5_000_000).write(to: first)  // longer than the original: truncated
            #expect(link(first.path, second.path) == 0)
            let inode = try Self.status(first.path).st_ino

            expectSuccess(try await fixture.run("get", [target.id, "--network", "-o", first.path]))
            let expected = try fixture.objectData(target.key)
            expectSameBytes(try Data(contentsOf: first), expected, "the -o file")
            expectSameBytes(try Data(contentsOf: second), expected, "its other name")
            let after = try Self.status(first.path)
            #expect(after.st_ino == inode && after.st_nlink == 2, "the link is not split")

            // A command that fails before writing leaves the file whole.
            let unknown = try await fixture.run("get", ["no-such-asset", "-o", first.path])
            #expect(unknown.status == 2, "\(unknown)")
            expectSameBytes(try Data(contentsOf: second), expected, "after a failed get")
        }
    }

    @Test func devStdoutOnAPipeIsWrittenThroughTheLink() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            // The child's standard output is a pipe: /dev/stdout → /proc/self/fd/1 → pipe:[…], a link to no path.
            let result = try await fixture.run("get", [target.id, "--network", "--quiet", "-o", "/dev/stdout"])
            expectSuccess(result)
            expectSameBytes(result.stdoutData, try fixture.objectData(target.key), "standard output")
            #expect(Self.fileType("/dev/stdout") == S_IFLNK)
        }
    }

    @Test func aFolderIsRefused() async throws {
        try await withFixture(assets: 1) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            expectUserError(
                try await fixture.run("get", [target.id, "-o", fixture.folder.path]), status: 2, mentioning: "folder")
        }
    }
}

/// Bytes appended from one thread and read from another.
final class LockedBytes: Sendable {
    private let bytes = LockedBox(Data())

    func append(_ more: Data) { bytes.withLock { $0.append(more) } }

    var data: Data { bytes.withLock { $0 } }
}
