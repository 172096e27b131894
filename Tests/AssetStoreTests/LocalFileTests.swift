import Essentials
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `LocalFile`: the reads, writes and copies every library file goes through — close-on-exec, never replacing or
/// following what it must not, errors as Foundation's.
@Suite("LocalFile: close-on-exec file operations")
struct LocalFileTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("localfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { folder.appendingPathComponent(name, isDirectory: false) }
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }
    func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 * 31) &+ seed })
    }

    @Test func descriptorsAreClosedOnExec() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let fd = try LocalFile.open(file("a").path, O_WRONLY | O_CREAT, writing: true)
        defer { close(fd) }
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func readsWholeLimitedAndRanged() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = bytes((3 << 20) + 17, seed: 5)
        try LocalFile.write(data, to: file("big"))
        #expect(try LocalFile.read(file("big")) == data)
        #expect(try LocalFile.read(file("big"), limit: 1000) == data.prefix(1000))
        #expect(try LocalFile.read(file("big"), offset: 1 << 20, count: 99) == data[(1 << 20)..<((1 << 20) + 99)])
        #expect(try LocalFile.read(file("big"), offset: 5, count: 2 << 20) == data[5..<(5 + (2 << 20))])
        // Past the end: what there is.
        #expect(try LocalFile.read(file("big"), offset: 1 << 20, count: 4 << 20) == data.suffix(from: 1 << 20))
        #expect(try LocalFile.read(file("big"), offset: Int64(data.count - 10), count: 50) == data.suffix(10))
        try LocalFile.write(Data(), to: file("empty"))
        #expect(try LocalFile.read(file("empty")).isEmpty)
    }

    @Test func errorsAreFoundationsWithThePathAndTheReason() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = file("missing")
        #expect {
            _ = try LocalFile.read(missing)
        } throws: { error in
            let ns = error as NSError
            return (error as? CocoaError)?.code == .fileReadNoSuchFile
                && ns.userInfo[NSFilePathErrorKey] as? String == missing.path
                && LocalFile.reason(error, otherwise: "?") == String(cString: strerror(ENOENT))
        }
    }

    @Test func replaceIsAtomicAndLeavesNothingBehind() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try LocalFile.write(Data("old".utf8), to: file("state.json"))
        try LocalFile.replace(file("state.json"), with: Data("new".utf8))
        #expect(try LocalFile.read(file("state.json")) == Data("new".utf8))
        #expect(try names() == ["state.json"])
        // A failed replace (a folder holds the name) leaves the folder and no temporary file.
        try FileManager.default.createDirectory(at: file("taken"), withIntermediateDirectories: false)
        #expect(throws: CocoaError.self) { try LocalFile.replace(file("taken"), with: Data("x".utf8)) }
        #expect(try names() == ["state.json", "taken"])
    }

    @Test func exclusiveWritesAndCopiesNeverReplaceNorFollowALink() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let outside = file("outside")
        try LocalFile.write(Data("keep".utf8), to: outside)
        try FileManager.default.createSymbolicLink(at: file("link"), withDestinationURL: outside)
        #expect(throws: CocoaError.self) { try LocalFile.write(Data("x".utf8), to: file("link"), exclusive: true) }
        #expect(throws: CocoaError.self) { try LocalFile.write(Data("x".utf8), to: outside, exclusive: true) }
        let source = file("source")
        let data = bytes((2 << 20) + 3, seed: 9)
        try LocalFile.write(data, to: source)
        #expect(throws: CocoaError.self) { try LocalFile.copy(source, to: file("link")) }
        #expect(throws: CocoaError.self) { try LocalFile.copy(source, to: outside) }
        #expect(try LocalFile.read(outside) == Data("keep".utf8))
        try LocalFile.copy(source, to: file("copy"))
        #expect(try LocalFile.read(file("copy")) == data)
        // A copy that fails part way leaves no partial target.
        #expect(throws: CocoaError.self) { try LocalFile.copy(file("missing"), to: file("never")) }
        #expect(!FileManager.default.fileExists(atPath: file("never").path))
    }

    @Test func patchesWriteInPlaceWithoutGrowingTheFile() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try LocalFile.write(Data(repeating: 0, count: 100), to: file("p"))
        try LocalFile.patch(
            file("p"), with: [(offset: 10, bytes: [1, 2, 3]), (offset: 97, bytes: [9, 9, 9])], synchronize: true)
        let after = try LocalFile.read(file("p"))
        #expect(after.count == 100)
        #expect(Array(after[10..<13]) == [1, 2, 3] && Array(after[97..<100]) == [9, 9, 9])
        #expect(after.filter { $0 != 0 }.count == 6)
    }
}
