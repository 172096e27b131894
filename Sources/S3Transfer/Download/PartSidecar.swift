import Essentials
import Foundation

/// The small JSON file beside a `.part` file (`<part>.json`) that lets a later run continue it: the ETag the
/// bytes belong to, the object's size and checksums when known, and the byte ranges on disk that were
/// received whole under that ETag. Written atomically (temporary file, then rename).
struct PartSidecar: Codable, Equatable, Sendable {
    var version = 1
    var etag: String
    var size: Int64?
    var checksums: S3Checksums
    /// Sorted, non-overlapping, non-adjacent ranges as `[start, end)` pairs.
    var ranges: [[Int64]]

    init(etag: String, size: Int64?, checksums: S3Checksums, ranges: [Range<Int64>]) {
        self.etag = etag
        self.size = size
        self.checksums = checksums
        self.ranges = ByteRangeSet(ranges).ranges.map { [$0.lowerBound, $0.upperBound] }
    }

    var byteRanges: [Range<Int64>] {
        ByteRangeSet(ranges.compactMap { $0.count == 2 && $0[0] < $0[1] && $0[0] >= 0 ? $0[0]..<$0[1] : nil }).ranges
    }

    /// How many bytes from offset zero are present.
    var contiguousPrefix: Int64 {
        guard let first = byteRanges.first, first.lowerBound == 0 else { return 0 }
        return first.upperBound
    }

    /// The sidecar's path for a part file's path (plain strings: building a file `URL` costs a `stat`).
    static func path(forPart part: String) -> String { part + ".json" }

    static func load(forPart part: String) -> PartSidecar? { lookup(forPart: part).sidecar }

    /// The sidecar beside `part`, and whether a file is there at all (a present but unreadable one should be
    /// removed; an absent one needs no unlink).
    static func lookup(forPart part: String) -> (sidecar: PartSidecar?, present: Bool) {
        let fd = open(path(forPart: part), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return (nil, errno != ENOENT) }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count <= 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            data.append(contentsOf: buffer[0..<n])
        }
        // try?: an unreadable sidecar is absent: the part is fetched from zero
        return (try? JSONDecoder().decode(PartSidecar.self, from: data), true)
    }

    func save(forPart part: String) throws(S3Error) {
        let target = Self.path(forPart: part)
        let temp = target + ".tmp"
        do {
            try LocalFile.write(JSONEncoder().encode(self), to: URL(fileURLWithPath: temp, isDirectory: false))
        } catch {
            unlink(temp)  // a full disk may leave a truncated temp file
            throw .fileSystem(path: temp, errno: EIO)
        }
        guard rename(temp, target) == 0 else {
            let code = errno
            unlink(temp)
            throw .fileSystem(path: target, errno: code)
        }
    }

    static func remove(forPart part: String) {
        unlink(path(forPart: part))
    }
}
