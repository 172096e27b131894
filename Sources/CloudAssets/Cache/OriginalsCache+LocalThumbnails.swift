import AssetStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension OriginalsCache {
    /// ``AssetLibrary/localThumbnailData(forLocalIdentifier:version:)``: the file's bytes, read without following
    /// a link; a thumbnail the catalog records and the disk lacks is forgotten (the next sync fetches it again).
    func localThumbnailData(of id: Int64, version: AssetVersion) throws -> Data? {
        if version == .current, let revision = try catalog.store.record(id: id)?.editRevision {
            return Self.readRegularFile(
                folder: files.editsFolder.path,
                name: files.renderedThumbnail(id: id, revision: revision).lastPathComponent, limit: 16 << 20)
        }
        let data = Self.readRegularFile(
            folder: files.thumbnailsFolder.path, name: files.thumbnail(id: id).lastPathComponent, limit: 16 << 20)
        if data == nil, try catalog.store.record(id: id)?.thumbnailPresent == true { forgetMissingThumbnail(id) }
        return data
    }

    /// The bytes of `folder/name` when the folder is a real folder and the file a regular file (neither is a link)
    /// of at most `limit` bytes, else `nil`.
    private static func readRegularFile(folder: String, name: String, limit: Int) -> Data? {
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else { return nil }
        defer { Glibc.close(directory) }
        let fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) <= limit else {
            return nil
        }
        var data = Data(count: Int(status.st_size))
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let got = pread(fd, raw.baseAddress! + offset, raw.count - offset, off_t(offset))
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return false }
                offset += got
            }
            return true
        }
        return complete ? data : nil
    }
}
