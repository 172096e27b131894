import CFileIO
import Dispatch
import Essentials
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

/// Group commit of verified files: files that become ready while a group is being synced are synced together
/// (with one `syncfs` when allowed), each is renamed only after its sync, and one file's failure is its own.
@Suite struct FileSyncGroupTests {
    /// A folder with `count` `.part` files (distinct contents), open for writing.
    struct Files {
        let folder: URL
        var parts: [String] = []
        var destinations: [String] = []
        var contents: [Data] = []
        var fds: [Int32] = []

        init(count: Int) throws {
            folder = try makeTempDirectory()
            for index in 0..<count {
                let part = folder.appendingPathComponent("\(index).bin.part").path
                let data = Data("file \(index) ".utf8) + testBytes(4096 + index, seed: UInt64(index))
                #expect(FileManager.default.createFile(atPath: part, contents: data))
                let fd = open(part, O_RDWR | O_CLOEXEC)
                #expect(fd >= 0)
                parts.append(part)
                destinations.append(folder.appendingPathComponent("\(index).bin").path)
                contents.append(data)
                fds.append(fd)
            }
        }

        func close() {
            for fd in fds { _ = Foundation.close(fd) }
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Collects completions from the group's thread.
    final class Outcomes: Sendable {
        private let results = LockedBox<[Int: Result<Void, S3Error>]>([:])
        let done = DispatchGroup()

        func record(_ index: Int, _ result: Result<Void, S3Error>) {
            results.withLock { $0[index] = result }
            done.leave()
        }

        func result(_ index: Int) -> Result<Void, S3Error>? { results.withLock { $0[index] } }
        var count: Int { results.withLock { $0.count } }
    }

    func item(
        _ files: Files, _ index: Int, _ outcomes: Outcomes, destination: String? = nil, fileSystemSync: Bool = true,
        then: @escaping @Sendable () -> Void = {}
    ) -> FileSyncGroup.Item {
        outcomes.done.enter()
        return FileSyncGroup.Item(
            fd: files.fds[index], path: files.parts[index], destination: destination ?? files.destinations[index],
            allowsFileSystemSync: fileSystemSync
        ) { result in
            outcomes.record(index, result)
            then()
        }
    }

    /// Commits file 0 on another thread and holds its completion until `release` is signalled: the files
    /// committed meanwhile wait for the next group. `returned` is signalled when that commit call returns.
    func holdFirstGroup(
        _ group: FileSyncGroup, _ files: Files, _ outcomes: Outcomes, fileSystemSync: Bool,
        returned: DispatchSemaphore = DispatchSemaphore(value: 0)
    ) -> DispatchSemaphore {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = item(files, 0, outcomes, fileSystemSync: fileSystemSync) {
            started.signal()
            release.wait()
        }
        DispatchQueue.global().async {
            group.commit(first)
            returned.signal()
        }
        started.wait()
        return release
    }

    /// Syncs file 0 alone, then every other file as the second group (committed while the first is held), and
    /// waits for every completion. `destination` may replace a file's destination.
    func syncInTwoGroups(
        _ group: FileSyncGroup, _ files: Files, _ outcomes: Outcomes, fileSystemSync: Bool = true,
        destination: (Int) -> String? = { _ in nil }
    ) {
        let release = holdFirstGroup(group, files, outcomes, fileSystemSync: fileSystemSync)
        for index in 1..<files.parts.count {
            group.commit(
                item(files, index, outcomes, destination: destination(index), fileSystemSync: fileSystemSync))
        }
        release.signal()
        #expect(outcomes.done.wait(timeout: .now() + 60) == .success)
    }

    /// The path and errno of a file-system error; nil (and an issue recorded) for any other outcome.
    func fileSystemError(_ result: Result<Void, S3Error>?) -> (path: String, code: Int32)? {
        guard case .failure(.fileSystem(let path, let code)) = result else {
            Issue.record("expected a file-system error, got \(String(describing: result))")
            return nil
        }
        return (path, code)
    }

    func expectRenamed(_ files: Files, _ indexes: Range<Int>) throws {
        for index in indexes {
            #expect(!FileManager.default.fileExists(atPath: files.parts[index]))
            #expect(try Data(contentsOf: URL(fileURLWithPath: files.destinations[index])) == files.contents[index])
        }
    }

    @Test func filesReadyDuringASyncAreSyncedTogetherWithOneFileSystemSync() throws {
        let files = try Files(count: 6)
        defer { files.close() }
        let group = FileSyncGroup()
        let outcomes = Outcomes()
        let returned = DispatchSemaphore(value: 0)
        let release = holdFirstGroup(group, files, outcomes, fileSystemSync: true, returned: returned)
        // The first group is in progress (its completion waits): these return at once and stay pending.
        let holdSecond = DispatchSemaphore(value: 0)
        group.commit(item(files, 1, outcomes) { holdSecond.wait() })
        for index in 2..<6 { group.commit(item(files, index, outcomes)) }
        #expect(outcomes.count == 1)
        for index in 1..<6 { #expect(!FileManager.default.fileExists(atPath: files.destinations[index])) }
        release.signal()
        // The committing thread synced only its own file's group: its commit returns while the second group,
        // on a thread of the pool, is still held.
        #expect(returned.wait(timeout: .now() + 60) == .success)
        #expect(outcomes.count < 6)
        holdSecond.signal()
        #expect(outcomes.done.wait(timeout: .now() + 60) == .success)
        for index in 0..<6 { #expect(throws: Never.self) { try outcomes.result(index)?.get() } }
        try expectRenamed(files, 0..<6)
        #expect(group.statistics == FileSyncGroup.Statistics(groups: 2, files: 6, fileSystemSyncs: 1))
    }

    @Test func withoutFileSystemSyncEveryFileOfAGroupIsSyncedOnItsOwn() throws {
        let files = try Files(count: 5)
        defer { files.close() }
        let group = FileSyncGroup()
        let outcomes = Outcomes()
        syncInTwoGroups(group, files, outcomes, fileSystemSync: false)
        for index in 0..<5 { #expect(throws: Never.self) { try outcomes.result(index)?.get() } }
        try expectRenamed(files, 0..<5)
        #expect(group.statistics == FileSyncGroup.Statistics(groups: 2, files: 5, fileSystemSyncs: 0))
    }

    @Test func whenTheFileSystemSyncFailsEveryFileIsSyncedOnItsOwn() throws {
        let files = try Files(count: 5)
        defer { files.close() }
        let attempts = LockedBox(0)
        let group = FileSyncGroup { _ in
            attempts.withLock { $0 += 1 }
            errno = EIO
            return -1
        }
        let outcomes = Outcomes()
        syncInTwoGroups(group, files, outcomes)
        #expect(attempts.withLock { $0 } == 1, "the failing syncfs was tried, once for the one file system")
        for index in 0..<5 { #expect(throws: Never.self) { try outcomes.result(index)?.get() } }
        try expectRenamed(files, 0..<5)
        #expect(group.statistics == FileSyncGroup.Statistics(groups: 2, files: 5, fileSystemSyncs: 0))
    }

    @Test func aFileWhoseDataFailedToReachTheDiskIsNotRenamedAfterAFileSystemSync() throws {
        let files = try Files(count: 5)
        defer { files.close() }
        let failing = files.fds[3]
        let group = FileSyncGroup(dataError: { fd in
            guard fd == failing else { return cfileio_data_error(fd) }
            errno = EIO
            return -1
        })
        let outcomes = Outcomes()
        syncInTwoGroups(group, files, outcomes)
        #expect(group.statistics.fileSystemSyncs == 1)
        guard let error = fileSystemError(outcomes.result(3)) else { return }
        #expect(error.path == files.parts[3])
        #expect(error.code == EIO)
        #expect(!FileManager.default.fileExists(atPath: files.destinations[3]))
        try expectRenamed(files, 0..<3)
        try expectRenamed(files, 4..<5)
    }

    @Test func aFailedRenameFailsOnlyItsOwnFileAndLeavesItsPart() throws {
        let files = try Files(count: 5)
        defer { files.close() }
        let group = FileSyncGroup()
        let outcomes = Outcomes()
        let missing = files.folder.appendingPathComponent("no-such-folder/2.bin").path
        syncInTwoGroups(group, files, outcomes) { $0 == 2 ? missing : nil }
        guard let error = fileSystemError(outcomes.result(2)) else { return }
        #expect(error.path == missing)
        #expect(error.code == ENOENT)
        #expect(FileManager.default.fileExists(atPath: files.parts[2]))
        try expectRenamed(files, 0..<2)
        try expectRenamed(files, 3..<5)
    }

    @Test func aLoneFileIsSyncedAndRenamedBeforeCommitReturns() throws {
        let files = try Files(count: 1)
        defer { files.close() }
        let group = FileSyncGroup()
        let outcomes = Outcomes()
        group.commit(item(files, 0, outcomes))
        // Nothing was in progress: the committing thread synced the file itself.
        #expect(outcomes.count == 1)
        try expectRenamed(files, 0..<1)
        #expect(group.statistics == FileSyncGroup.Statistics(groups: 1, files: 1, fileSystemSyncs: 0))
    }
}
