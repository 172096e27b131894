import CFileIO
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Syncs verified files in groups (group commit), then renames each into place.
///
/// No file is renamed before it is on disk; what is grouped is the waiting. Files that become ready while a
/// group is being synced form the next group. A group of at least ``fileSystemSyncMinimum`` files that allow it
/// is synced with one `syncfs(2)` per file system: their data and the metadata blocks they share (inode table,
/// bitmaps, directory) go to the disk in one batch, and then each file's own writeback errors are read through
/// its own descriptor (a file whose data did not reach the disk fails and keeps its name). Otherwise (and for a
/// file system whose `syncfs` fails) every file gets its own `fdatasync(2)`, after the writeback of the whole
/// group was started so that it travels together. A lone file is synced at once: nothing waits for company
/// that may never come.
///
/// Threading: the thread that finds no group in progress syncs the group its own file is in (callers are the
/// part-file writers' queues on the utility pool: a sync waits for the disk, which must not hold a thread of a
/// caller's pool), later groups run on a queue of the group's own; the others return at once. Completions run on
/// the thread that synced their group, in commit order within it.
final class FileSyncGroup: Sendable {
    /// One file to sync (and rename).
    struct Item: Sendable {
        /// An open descriptor of the file; it must stay open until `completion` runs.
        var fd: Int32
        /// The file's path (for errors, and the rename's source).
        var path: String
        /// Where to rename the file once it is synced; nil to sync only.
        var destination: String?
        /// Whether a `syncfs` of the file's file system may stand for its own sync (see
        /// ``DownloaderConfiguration/syncsFileSystemForGroups``).
        var allowsFileSystemSync: Bool
        /// Told the outcome.
        var completion: @Sendable (Result<Void, S3Error>) -> Void
    }

    /// Counters, for tests and benchmarks.
    struct Statistics: Sendable, Equatable {
        /// Groups synced.
        var groups = 0
        /// Files in them.
        var files = 0
        /// `syncfs` calls that stood for the files' own syncs.
        var fileSystemSyncs = 0
    }

    private struct State {
        var pending: [Item] = []
        var syncing = false
        var statistics = Statistics()
    }

    /// The group every downloader of the process shares: it is the file system's work that is grouped.
    static let shared = FileSyncGroup()

    /// The smallest group synced with `syncfs`. A judgment, not a measured optimum: `syncfs` also writes other
    /// programs' pending data on the file system, worth it only when several of ours share the trip (under load
    /// the groups here hold 6–8 files; one or two files are synced file by file).
    static let fileSystemSyncMinimum = 4

    private let state = LockedBox(State())
    /// Where the groups after a leader's own run: a queue of their own (with its own thread), not the utility pool,
    /// whose few threads (one per core) create and write the next downloads' files while a `syncfs` waits for the
    /// disk.
    private let laterGroups = DispatchQueue(label: "FileSyncGroup", qos: .utility)
    /// `syncfs(2)` (tests give one that fails, to check the file-by-file fallback).
    private let syncFileSystem: @Sendable (Int32) -> Int32
    /// A file's own writeback error after a `syncfs` (``cfileio_data_error(_:)``; tests inject one).
    private let dataError: @Sendable (Int32) -> Int32

    init(
        syncFileSystem: @escaping @Sendable (Int32) -> Int32 = { cfileio_sync_filesystem($0) },
        dataError: @escaping @Sendable (Int32) -> Int32 = { cfileio_data_error($0) }
    ) {
        self.syncFileSystem = syncFileSystem
        self.dataError = dataError
    }

    /// Adds `item` to the next group. When no group is in progress, the calling thread syncs the group its file
    /// is in and returns after its completion (any group after that goes to the group's own queue, so a steady
    /// stream of files never holds the caller's thread); otherwise returns at once. `item.completion` is
    /// called exactly once.
    func commit(_ item: Item) {
        let lead = state.withLock { state -> Bool in
            state.pending.append(item)
            defer { state.syncing = true }
            return !state.syncing
        }
        guard lead, syncPendingGroup() else { return }
        laterGroups.async { [self] in
            while syncPendingGroup() {}
        }
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// Syncs the pending files as one group (there is at least one: only the thread that syncs takes them, and it
    /// stops syncing only under the lock, once none is pending). Returns whether more are pending now.
    private func syncPendingGroup() -> Bool {
        let group = state.withLock { state -> [Item] in
            defer { state.pending.removeAll(keepingCapacity: true) }
            state.statistics.groups += 1
            state.statistics.files += state.pending.count
            return state.pending
        }
        let results = sync(group)
        for (item, result) in zip(group, results) { item.completion(result) }
        return state.withLock { state -> Bool in
            if state.pending.isEmpty { state.syncing = false }
            return state.syncing
        }
    }

    /// Syncs and renames a group's files; one result per item, in order.
    private func sync(_ group: [Item]) -> [Result<Void, S3Error>] {
        var results = [Result<Void, S3Error>?](repeating: nil, count: group.count)
        if group.count(where: \.allowsFileSystemSync) >= Self.fileSystemSyncMinimum {
            // One syncfs per file system; a file system whose syncfs fails is synced file by file below.
            var outcome: [UInt64: Bool] = [:]
            for (index, item) in group.enumerated() where item.allowsFileSystemSync {
                var info = stat()
                guard fstat(item.fd, &info) == 0 else { continue }
                let device = UInt64(info.st_dev)
                if outcome[device] == nil {
                    outcome[device] = syncFileSystem(item.fd) == 0
                    if outcome[device] == true { state.withLock { $0.statistics.fileSystemSyncs += 1 } }
                }
                guard outcome[device] == true else { continue }
                // syncfs reports only the errors seen since the descriptor it was given was opened: each file's
                // own data is checked through its own descriptor (nothing is left to write; no cache flush).
                if dataError(item.fd) != 0 {
                    results[index] = .failure(.fileSystem(path: item.path, errno: errno))
                } else {
                    results[index] = Self.rename(item)
                }
            }
        }
        let rest = group.indices.filter { results[$0] == nil }
        if rest.count > 1 {
            // Start every file's writeback before waiting for any, so that the group travels together. An
            // optimisation only (the fdatasync below is the guarantee), so its errors are ignored.
            for index in rest { _ = cfileio_start_writeback(group[index].fd, 0, 0) }
        }
        for index in rest { results[index] = Self.syncAndRename(group[index]) }
        return results.map { $0! }
    }

    /// `fdatasync(2)`: the file's bytes and what is needed to read them back (its size, its blocks) are on disk
    /// when it returns — all a verified file needs to survive a crash; `fsync` would also write its timestamps,
    /// and costs ~15% more CPU per small file on ext4 (A/B, 2,000 × 16 KiB).
    private static func syncAndRename(_ item: Item) -> Result<Void, S3Error> {
        guard fdatasync(item.fd) == 0 else { return .failure(.fileSystem(path: item.path, errno: errno)) }
        return rename(item)
    }

    private static func rename(_ item: Item) -> Result<Void, S3Error> {
        if let destination = item.destination, Glibc.rename(item.path, destination) != 0 {
            return .failure(.fileSystem(path: destination, errno: errno))
        }
        return .success(())
    }
}
