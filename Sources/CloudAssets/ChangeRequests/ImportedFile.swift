import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file brought into the library by an import: staged under the library's folder, hashed, its metadata read.
///
/// The bytes go to `originals/import-<uuid>.part` (a name recovery knows as the library's own, so a crash leaves
/// nothing behind for long), hashed with SHA-256 on the way; the staged file is renamed to the asset's name in
/// the transaction that creates the asset.
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

    /// Stages `source` under `files`' originals folder.
    /// - Parameters:
    ///   - moving: Take the file instead of copying it (renamed when on the same file system, else copied and the
    ///     source removed after the change commits).
    ///   - status: The source's `stat` as the caller read it (``statuses(of:)``); nil when that failed (read again
    ///     here, to say why).
    static func stage(_ source: URL, status known: stat?, files: LocalFiles, moving: Bool) throws
        -> ImportedFile
    {
        var status = known ?? stat()
        guard known != nil || stat(source.path, &status) == 0 else {
            throw AssetLibraryError.cannotImport(path: source.path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw AssetLibraryError.cannotImport(path: source.path, reason: "not a regular file")
        }
        let staged = files.file(LocalFiles.stagingName(), in: .originals)
        var renamedFrom: URL?
        let digest: (sha256: String, head: [UInt8])
        if moving, rename(source.path, staged.path) == 0 {
            renamedFrom = source
            do {
                digest = try read(staged, copyingTo: nil)
            } catch {
                _ = rename(staged.path, source.path)
                throw error
            }
        } else {
            // A copy that leaves its source needs no sync to disk before the asset exists: if the machine stops
            // before the kernel writes it, recovery finds it short and removes the asset, and the source is still
            // there. A move across file systems removes the source, so its copy is synced first.
            digest = try read(source, copyingTo: staged, sync: moving)
        }
        let metadata = ImportMetadata.read(
            head: digest.head, name: source.lastPathComponent, fileStatus: status, fileLength: Int(status.st_size))
        return ImportedFile(
            stagedURL: staged, size: Int64(status.st_size), sha256: digest.sha256, metadata: metadata,
            sourceName: source.lastPathComponent, sourceToRemove: moving && renamedFrom == nil ? source : nil,
            renamedFrom: renamedFrom)
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

    /// Reads `source` once: hashes every byte, keeps the first ``ImportMetadata/headerLimit`` bytes (where the
    /// headers an import reads are), and writes a copy to `destination` when given (created, never replacing
    /// anything; removed again on failure).
    static func read(_ source: URL, copyingTo destination: URL?, sync: Bool = false) throws
        -> (sha256: String, head: [UInt8])
    {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw AssetLibraryError.cannotImport(path: source.path, reason: String(cString: strerror(errno)))
        }
        defer { close(input) }
        var output: Int32 = -1
        if let destination {
            output = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard output >= 0 else {
                throw AssetLibraryError.cannotImport(
                    path: source.path, reason: "cannot write into the library: \(String(cString: strerror(errno)))")
            }
        }
        func fail(_ reason: String) -> AssetLibraryError {
            if let destination {
                close(output)
                unlink(destination.path)
            }
            return AssetLibraryError.cannotImport(path: source.path, reason: reason)
        }
        var hasher = SHA256()
        var head: [UInt8] = []
        // At most 1 MiB, and no more than the file needs (one read to its end, one to see the end): a small
        // file's import neither clears nor maps a megabyte (an import of thousands of photos makes thousands).
        var status = stat()
        let size = fstat(input, &status) == 0 ? Int(max(0, status.st_size)) : Int.max - 1
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: min(1 << 20, max(4096, size + 1)), alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(input, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw fail(String(cString: strerror(errno))) }
            if count == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            hasher.update(bufferPointer: bytes)
            if head.count < ImportMetadata.headerLimit {
                head += bytes[..<min(count, ImportMetadata.headerLimit - head.count)]
            }
            var written = 0
            while output >= 0 && written < count {
                let n = write(output, bytes.baseAddress! + written, count - written)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    throw fail("cannot write into the library: \(String(cString: strerror(errno)))")
                }
                written += n
            }
        }
        if output >= 0 {
            if sync && fsync(output) != 0 { throw fail("cannot sync the copy to disk") }
            close(output)
        }
        return (Self.hex(hasher.finalize()), head)
    }
}
