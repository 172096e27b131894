import AssetStore
import CFileIO
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The locks on `<folder>/library.lock` that let several libraries — in several processes, or one — share a
/// folder safely.
///
/// - **Open** (`flock`): every open library holds a shared lock. The first to open takes it exclusively while it
///   repairs the folder after a crash (no other library is running then, so nothing it removes is in use), then
///   shares it; a library that opens meanwhile waits for that repair.
/// - **Work** (open-file-description byte locks, `F_OFD_SETLK`): byte *n* is held by the one library that
///   downloads asset *n*, byte 0 by the one that syncs. A byte lock belongs to one open of the file, so it
///   excludes every other library, in another process or in this one.
///
/// Both kinds are released by the kernel when the process dies (`kill -9` included).
final class LibraryLock: Sendable {
    static let fileName = "library.lock"
    /// How long an open waits for another library's repair to finish before it reports the folder busy.
    static let repairWait: Duration = .seconds(5)
    /// The byte the syncing library holds.
    static let syncByte: Int64 = 0

    private let descriptor: LockedBox<Int32>
    let path: String
    /// Whether no other library had the folder open when this one opened (it then repairs the folder).
    let isFirstOpen: Bool

    /// Takes the open lock: exclusively when no other library has the folder open, else shared — waiting up to
    /// ``repairWait`` (suspended, not blocking a thread) while another library repairs the folder.
    /// - Throws: ``CloudAssetsError/Code/libraryBusy`` when another library keeps the folder exclusively;
    ///   `AssetStoreError.readOnly` when the lock file cannot be created.
    static func open(folder: URL) async throws -> LibraryLock {
        // try?: cannot create it: the lock file's open below throws readOnly
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(Self.fileName).path
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw AssetStoreError.readOnly(path: folder.path) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return LibraryLock(fd: fd, path: path, isFirstOpen: true) }
        let deadline = ContinuousClock.now + Self.repairWait
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(fd)
                throw AssetLibraryError.locked(path: folder.path)
            }
            do {
                try await Task.sleep(for: .milliseconds(10))  // another library's repair holds it for a moment
            } catch {
                close(fd)
                throw error
            }
        }
        return LibraryLock(fd: fd, path: path, isFirstOpen: false)
    }

    private init(fd: Int32, path: String, isFirstOpen: Bool) {
        descriptor = LockedBox(fd)
        self.path = path
        self.isFirstOpen = isFirstOpen
    }

    /// After the first open's repair: lets other libraries open the folder (exclusive → shared).
    func share() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            while flock(fd, LOCK_SH) != 0 && errno == EINTR {}
        }
    }

    /// Whether this is the only library with the folder open: takes the open lock exclusively if no other library
    /// holds it (only when closing: a failed attempt may leave no open lock at all, as `flock` converts by
    /// releasing first).
    func takeExclusivelyIfAlone() -> Bool {
        descriptor.withLock { fd in fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 }
    }

    /// Takes byte `offset` if no other library holds it; `false` when one does.
    func tryLock(byte offset: Int64) -> Bool {
        descriptor.withLock { fd in fd >= 0 && cfileio_lock_byte(fd, offset, 1) == 0 }
    }

    /// Releases byte `offset`.
    func unlock(byte offset: Int64) {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = cfileio_lock_byte(fd, offset, 0)
        }
    }

    /// Waits until byte `offset` is free and takes it, checking every 20 ms (another library's download or
    /// sync holds it; the kernel cannot wake an async waiter).
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    func lock(byte offset: Int64) async throws {
        while !tryLock(byte: offset) {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Releases every lock (idempotent).
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}

/// Which assets this library is downloading, so that its requests for one asset share one byte lock: the
/// first takes it (waiting while another library downloads that asset), the last releases it.
final class DownloadLocks: Sendable {
    private let holders = LockedBox<[Int64: Int]>([:])

    /// Holds the asset's byte for one more request of this library; waits while another library holds it.
    func acquire(_ asset: Int64, in lock: LibraryLock) async throws {
        while true {
            let held = holders.withLock { holders -> Bool in
                if let count = holders[asset] {
                    holders[asset] = count + 1
                    return true
                }
                guard lock.tryLock(byte: asset) else { return false }
                holders[asset] = 1
                return true
            }
            if held { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Ends one request's hold; the last one releases the byte.
    func release(_ asset: Int64, in lock: LibraryLock) {
        holders.withLock { holders in
            guard let count = holders[asset] else { return }
            if count > 1 {
                holders[asset] = count - 1
            } else {
                holders[asset] = nil
                lock.unlock(byte: asset)
            }
        }
    }
}
