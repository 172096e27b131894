import AssetStore
import CFileIO
import CZlib
import Dispatch
import Essentials
import Foundation
import Hashing
import Video

#if canImport(Glibc)
    import Glibc
#endif

/// The file an imported original was copied from, as it was before it was read: its first upload may read it
/// instead of the library's copy (which was written around the page cache, so reading it would go to the disk and
/// fill the cache a second time) while it is still that file — same device, inode, size, modification and change
/// times. The upload also states the copy's CRC-32C as the object's checksum, so the service refuses other bytes.
struct UploadSourceHint: Sendable, Equatable {
    let path: String
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: [Int]
    let changed: [Int]
    /// The CRC-32C of the bytes copied.
    let crc32c: UInt32

    init(path: String, status: stat, crc32c: UInt32) {
        self.path = path
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = [status.st_mtim.tv_sec, status.st_mtim.tv_nsec]
        changed = [status.st_ctim.tv_sec, status.st_ctim.tv_nsec]
        self.crc32c = crc32c
    }

    /// Whether the file at `path` is still the one described (not followed if it became a link).
    var isCurrent: Bool {
        var now = stat()
        guard lstat(path, &now) == 0, now.st_mode & S_IFMT == S_IFREG else { return false }
        return UploadSourceHint(path: path, status: now, crc32c: crc32c) == self
    }
}

/// A file brought into the library by an import: staged under the library's folder, hashed, its metadata read.
///
/// The bytes go to `originals/import-<uuid>.part` (a name recovery knows as the library's own, so a crash leaves
/// nothing behind for long; a large copy around the page cache), hashed with SHA-256 and CRC-32C on the way; the
/// staged file is renamed to the asset's name in the transaction that creates the asset.
struct ImportedFile: Sendable {
    /// The staged copy, inside the library's originals folder.
    let stagedURL: URL
    let size: Int64
    /// Lower-case hex SHA-256.
    let sha256: String
    let metadata: ImportMetadata
    /// The source's file name (the default object name).
    let sourceName: String
    /// The source, when it is to be removed once the asset is committed (a move across file systems).
    let sourceToRemove: URL?
    /// The source, when the staged file is the source renamed (a move on one file system): put back if the
    /// change fails.
    let renamedFrom: URL?
    /// Where the first upload may read the bytes instead of the staged copy (a large file copied).
    let uploadSource: UploadSourceHint?

    /// Stages `source` under `files`' originals folder.
    ///
    /// A source inside the library's own folder (its catalog, a cached original, the folder itself; links
    /// resolved) is refused: importing it — above all moving it — would take the library's only copy. A source
    /// that changes while it is read (its size, modification or change time differ from before the read, or
    /// the bytes read are not its size) is read again, up to ``readAttempts`` times in all, then refused: the
    /// asset's size, hash and object always describe one version of the file.
    /// - Parameters:
    ///   - moving: Take the file instead of copying it (renamed when on the same file system, else copied and the
    ///     source removed after the change commits).
    ///   - status: The source's `stat` as the caller read it (``statuses(of:)``); nil when that failed (read again
    ///     here, to say why).
    static func stage(_ source: URL, status known: stat?, files: LocalFiles, moving: Bool) throws
        -> ImportedFile
    {
        if files.holds(source.path) {
            throw AssetLibraryError.cannotImport(
                path: source.path,
                reason: "it is inside the library folder \(files.root.path); import files from outside it")
        }
        var status = known ?? stat()
        guard known != nil || stat(source.path, &status) == 0 else {
            throw AssetLibraryError.cannotImport(path: source.path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw AssetLibraryError.cannotImport(path: source.path, reason: "not a regular file")
        }
        var attempt = 1
        while true {
            do {
                return try stageOnce(source, status: status, files: files, moving: moving)
            } catch let changed as SourceChanged {
                guard attempt < readAttempts else {
                    throw AssetLibraryError.cannotImport(path: source.path, reason: changed.description)
                }
                attempt += 1
                guard stat(source.path, &status) == 0 else {
                    throw AssetLibraryError.cannotImport(path: source.path, reason: String(cString: strerror(errno)))
                }
                guard status.st_mode & S_IFMT == S_IFREG else {
                    throw AssetLibraryError.cannotImport(path: source.path, reason: "not a regular file")
                }
            }
        }
    }

    /// How many times a source that changes while it is read is read before it is refused.
    static let readAttempts = 3

    /// A source that was not the same file from the start of its read to its end.
    struct SourceChanged: Error, CustomStringConvertible {
        let sizeBefore: Int64
        let bytesRead: Int64
        let sizeAfter: Int64

        var description: String {
            "it changed while it was read (\(sizeBefore) bytes before, \(bytesRead) read, \(sizeAfter) after); "
                + "import it once nothing writes to it"
        }
    }

    /// One read of the source (see ``stage(_:status:files:moving:)``); throws ``SourceChanged`` when the file was
    /// not the one `status` describes from the start of the read to its end (nothing is left staged then, and a
    /// renamed source is back in its place).
    private static func stageOnce(_ source: URL, status: stat, files: LocalFiles, moving: Bool) throws
        -> ImportedFile
    {
        let staged = files.file(LocalFiles.stagingName(), in: .originals)
        var renamedFrom: URL?
        let digest: ReadResult
        if moving, rename(source.path, staged.path) == 0 {
            renamedFrom = source
            do {
                digest = try read(staged, copyingTo: nil)
                try digest.check(against: status)
            } catch {
                _ = rename(staged.path, source.path)
                throw error
            }
        } else {
            // A copy that leaves its source needs no sync to disk before the asset exists: if the machine stops
            // before the kernel writes it, recovery finds it short and removes the asset, and the source is still
            // there. A move across file systems removes the source, so its copy is synced first.
            digest = try read(source, copyingTo: staged, sync: moving)
            do {
                try digest.check(against: status)
            } catch {
                unlink(staged.path)
                throw error
            }
        }
        var metadata = ImportMetadata.read(
            head: digest.head, name: source.lastPathComponent, fileStatus: status, fileLength: Int(status.st_size))
        // A video's container, read from the staged copy (the file the asset keeps): a few reads at most.
        // try?: a video whose container does not read is imported all the same, without its length
        if metadata.mediaType == .video, let video = try? VideoMetadataReader.read(file: staged).metadata {
            metadata.apply(video)
        }
        // A large copy was written around the page cache, while the source was just read through it: its first
        // upload reads the source, as long as it stays the file that was copied.
        let uploadSource =
            !moving && Int(status.st_size) >= directCopyMinimum
            ? UploadSourceHint(path: source.path, status: status, crc32c: digest.crc32c) : nil
        return ImportedFile(
            stagedURL: staged, size: Int64(status.st_size), sha256: digest.sha256, metadata: metadata,
            sourceName: source.lastPathComponent, sourceToRemove: moving && renamedFrom == nil ? source : nil,
            renamedFrom: renamedFrom, uploadSource: uploadSource)
    }

    /// What one read of a source found: its digests and first bytes, how many bytes it read, and the file's
    /// status at the end of the read (on the descriptor it read from).
    struct ReadResult {
        var sha256: String
        var crc32c: UInt32
        var head: [UInt8]
        var bytesRead: Int64
        var statusAfter: stat

        /// Throws ``SourceChanged`` unless the file was the one `before` describes throughout the read: the same
        /// inode and device, size, modification and change times, and every byte of that size read.
        func check(against before: stat) throws {
            let same =
                statusAfter.st_ino == before.st_ino && statusAfter.st_dev == before.st_dev
                && statusAfter.st_size == before.st_size && bytesRead == Int64(before.st_size)
                && statusAfter.st_mtim.tv_sec == before.st_mtim.tv_sec
                && statusAfter.st_mtim.tv_nsec == before.st_mtim.tv_nsec
            // (The change time moves on a rename, so a move compares it only through the size and mtime.)
            guard same else {
                throw SourceChanged(
                    sizeBefore: Int64(before.st_size), bytesRead: bytesRead, sizeAfter: Int64(statusAfter.st_size))
            }
        }
    }

    /// Files of at least this many bytes are imported on a lane of their own.
    static let largeFileBytes: Int64 = 1 << 20

    /// Each source's `stat` (nil where it fails: staging reads it again and reports why).
    static func statuses(of sources: [URL]) -> [stat?] {
        sources.map { source in
            var status = stat()
            return stat(source.path, &status) == 0 ? status : nil
        }
    }

    /// Whether a source is a large file (``largeFileBytes`` or more).
    static func isLarge(_ status: stat?) -> Bool { status.map { Int64($0.st_size) >= largeFileBytes } ?? false }

    /// Undoes the staging of a change that did not commit: the source goes back where it was.
    func discard() {
        if let renamedFrom {
            _ = rename(stagedURL.path, renamedFrom.path)
        } else {
            unlink(stagedURL.path)
        }
    }

    /// Lower-case hex of a digest.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A copy of at least this many bytes bypasses the page cache (``copyDirect(from:to:size:digest:)``).
    static let directCopyMinimum = 8 << 20

    /// The running digests of one read.
    struct Digest {
        var sha256 = SHA256()
        var crc32c: UInt32 = 0
        var head: [UInt8] = []

        mutating func update(_ bytes: UnsafeRawBufferPointer) {
            sha256.update(bufferPointer: bytes)
            crc32c = czlib_crc32c(crc32c, bytes.baseAddress, bytes.count)
            if head.count < ImportMetadata.headerLimit {
                head += bytes[..<min(bytes.count, ImportMetadata.headerLimit - head.count)]
            }
        }
    }

    /// Reads `source` once: hashes every byte (SHA-256 and CRC-32C), keeps the first
    /// ``ImportMetadata/headerLimit`` bytes (where the headers an import reads are), and writes a copy to
    /// `destination` when given (created, never replacing anything; removed again on failure). A copy of
    /// ``directCopyMinimum`` bytes or more is written around the page cache where the file system allows it.
    static func read(_ source: URL, copyingTo destination: URL?, sync: Bool = false) throws -> ReadResult {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw AssetLibraryError.cannotImport(path: source.path, reason: String(cString: strerror(errno)))
        }
        defer { close(input) }
        var status = stat()
        let size = fstat(input, &status) == 0 ? Int(max(0, status.st_size)) : Int.max - 1
        var output: Int32 = -1
        var direct: Int32 = 0
        if let destination {
            output =
                size >= directCopyMinimum && size < Int.max - 1
                ? cfileio_create_direct(destination.path, 0o644, &direct)
                : open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard output >= 0 else { throw CopyProblem.library(errno).error(source: source, destination: destination) }
        }
        func fail(_ problem: CopyProblem) -> any Error {
            if let destination {
                close(output)
                unlink(destination.path)
            }
            return problem.error(source: source, destination: destination)
        }
        var digest = Digest()
        var bytesRead: Int64 = 0
        if direct != 0 {
            if let problem = copyDirect(from: input, to: output, digest: &digest, bytesRead: &bytesRead) {
                throw fail(problem)
            }
        } else if let problem = copyBuffered(
            from: input, to: output, size: size, digest: &digest, bytesRead: &bytesRead)
        {
            throw fail(problem)
        }
        var after = stat()
        guard fstat(input, &after) == 0 else { throw fail(.source(String(cString: strerror(errno)))) }
        if output >= 0 {
            if sync && fsync(output) != 0 { throw fail(.library(errno)) }
            close(output)
        }
        return ReadResult(
            sha256: Self.hex(digest.sha256.finalize()), crc32c: digest.crc32c, head: digest.head,
            bytesRead: bytesRead, statusAfter: after)
    }

    /// What went wrong in a copy: reading the file imported, or writing into the library (its `errno`).
    enum CopyProblem: Error, Sendable {
        case source(String)
        case library(Int32)

        /// The error an import reports: a library that cannot be written for want of room is the catalog's full
        /// disk (``CloudAssetsError/Code/localFileFailed``, the folder named), anything else refuses the file.
        func error(source: URL, destination: URL?) -> any Error {
            switch self {
            case .source(let reason): return AssetLibraryError.cannotImport(path: source.path, reason: reason)
            case .library(let code) where [ENOSPC, EDQUOT].contains(code):
                return AssetStoreError.diskFull(path: destination?.deletingLastPathComponent().path ?? "the library")
            case .library(let code):
                return AssetLibraryError.cannotImport(
                    path: source.path, reason: "cannot write into the library: \(String(cString: strerror(code)))")
            }
        }
    }

    /// Reads `input` to its end into `digest`, writing every byte to `output` when it is open (ordinary writes).
    /// Returns what went wrong, or nil.
    private static func copyBuffered(
        from input: Int32, to output: Int32, size: Int, digest: inout Digest, bytesRead: inout Int64
    ) -> CopyProblem? {
        // At most 1 MiB, and no more than the file needs (one read to its end, one to see the end): a small
        // file's import neither clears nor maps a megabyte (an import of thousands of photos makes thousands).
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: min(1 << 20, max(4096, size + 1)), alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(input, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .source(String(cString: strerror(errno))) }
            if count == 0 { return nil }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            digest.update(bytes)
            bytesRead += Int64(count)
            if output >= 0, !writeAll(output, bytes, at: nil) { return .library(errno) }
        }
    }

    /// The size of each of ``copyDirect(from:to:digest:)``'s two buffers.
    static let directChunk = 2 << 20

    /// Reads `input` to its end into `digest` and writes it to `output`, opened with `O_DIRECT`: the device takes
    /// the bytes from this memory, so a large import neither fills the page cache with a second copy of the file
    /// nor pays for it (on this VM a gigabyte of new page-cache pages costs 1.3–2.4 CPU-seconds). The calling thread
    /// reads and hashes one buffer while a queue of its own writes the other. A write the file system refuses
    /// (`EINVAL`: alignment) turns `O_DIRECT` off and goes on through the page cache. Returns what went wrong, or
    /// nil.
    private static func copyDirect(
        from input: Int32, to output: Int32, digest: inout Digest, bytesRead: inout Int64
    ) -> CopyProblem? {
        let buffers = (0..<2).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: directChunk, alignment: 4096)
        }
        let writer = DirectWriter(output: output)
        defer {
            writer.finish()
            for buffer in buffers { buffer.deallocate() }
        }
        var offset: Int64 = 0
        var index = 0
        while true {
            let buffer = buffers[index]
            writer.waitUntilFree(index)
            if let problem = writer.problem { return problem }
            // Fill the buffer (a short read is not the end): writes stay aligned until the last.
            var count = 0
            while count < buffer.count {
                let n = Glibc.read(input, buffer.baseAddress! + count, buffer.count - count)
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { return .source(String(cString: strerror(errno))) }
                if n == 0 { break }
                count += n
            }
            if count > 0 {
                digest.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                writer.write(index, SendableBuffer(buffer), count: count, at: offset)
                offset += Int64(count)
            }
            if count < buffer.count { break }
            index = 1 - index
        }
        writer.finish()
        if let problem = writer.problem { return problem }
        bytesRead = offset
        // The last write may have been rounded up to a whole block: the file ends where the source did.
        guard ftruncate(output, off_t(offset)) == 0 else { return .library(errno) }
        return nil
    }

    /// Writes all of `bytes` (at `offset`, or at the file position when nil); false with errno set on failure.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64?) -> Bool {
        var written = 0
        while written < bytes.count {
            let n =
                offset.map {
                    pwrite(fd, bytes.baseAddress! + written, bytes.count - written, off_t($0) + off_t(written))
                }
                ?? write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            written += n
        }
        return true
    }

    /// A buffer handed to ``DirectWriter``'s queue.
    // @unchecked: ownership moves with it — the reader touches the buffer again only after the writer has signalled
    // that its write of it ended (``DirectWriter/waitUntilFree(_:)``).
    struct SendableBuffer: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
        init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
    }

    /// Writes buffers in order on a queue of its own, one at a time, and tells when each buffer is free again.
    final class DirectWriter: Sendable {
        private let output: Int32
        private let queue = DispatchQueue(label: "ImportedFile.DirectWriter", qos: .utility)
        /// One per buffer, signalled once at the start: a semaphore made with a count of 1 must not be freed below
        /// it, and one that ends waited on would be.
        private let free: [DispatchSemaphore] = (0..<2).map { _ in
            let semaphore = DispatchSemaphore(value: 0)
            semaphore.signal()
            return semaphore
        }
        private let state = LockedBox<(problem: CopyProblem?, direct: Bool)>((nil, true))

        init(output: Int32) { self.output = output }

        /// The first failure, if any.
        var problem: CopyProblem? { state.withLock { $0.problem } }

        /// Waits until buffer `index` is no longer being written.
        func waitUntilFree(_ index: Int) { free[index].wait() }

        /// Writes `count` bytes of buffer `index` at `offset`; the buffer is free again when that ends.
        func write(_ index: Int, _ handed: SendableBuffer, count: Int, at offset: Int64) {
            queue.async { [self] in
                defer { free[index].signal() }
                guard state.withLock({ $0.problem == nil }) else { return }
                let buffer = handed.buffer
                var length = count
                let direct = state.withLock { $0.direct }
                if direct && count % 4096 != 0 {
                    // The last piece: rounded up to a whole block (cut back by the caller's `ftruncate`).
                    length = (count + 4095) / 4096 * 4096
                    (buffer.baseAddress! + count).initializeMemory(as: UInt8.self, repeating: 0, count: length - count)
                }
                if !ImportedFile.writeAll(output, UnsafeRawBufferPointer(rebasing: buffer[..<length]), at: offset) {
                    if direct && errno == EINVAL && cfileio_end_direct(output) == 0 {
                        state.withLock { $0.direct = false }
                        if ImportedFile.writeAll(output, UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: offset)
                        {
                            return
                        }
                    }
                    let code = errno
                    state.withLock { $0.problem = $0.problem ?? .library(code) }
                }
            }
        }

        /// Waits for every write handed over so far.
        func finish() { queue.sync {} }
    }
}
