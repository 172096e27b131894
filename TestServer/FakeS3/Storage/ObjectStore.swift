import AWSSigV4
import Essentials
import Foundation
import Hashing
import NIOCore

/// The bytes of a stored object, ready to serve.
enum ObjectBody {
    /// In-memory storage: the whole object; serve slices of it.
    case memory(ByteBuffer)
    /// Disk storage: an open descriptor the caller must close.
    case file(descriptor: CInt)
}

/// Buckets and objects, in memory or on disk. Thread-safe: every operation takes one lock, and a
/// write becomes visible atomically (readers see the old object or the new one, never a mix).
///
/// Disk layout under `root`: `buckets/<bucket>/bucket.json`, `buckets/<bucket>/objects/<sha256(key)>.json`
/// (the metadata sidecar, which names the data file), `buckets/<bucket>/objects/<sha256(key)>.<uuid>.data`,
/// and `tmp/` for uploads in progress. Keys never become paths: file names are hashes.
final class ObjectStore: Sendable {
    struct Entry {
        var info: ObjectInfo
        var bytes: ByteBuffer?
    }

    struct Bucket {
        var info: BucketInfo
        var objects: [KeyBytes: Entry] = [:]
        /// Every key in S3's order, as of the last listing; `added` and `removed` are the keys since. A listing
        /// merges them in (O(n + k log k)) instead of sorting every key again: a bucket of a million objects
        /// that gains a few keys between listings costs milliseconds, not a second and a half.
        private var sortedCache: [KeyBytes]?
        private var added: [KeyBytes] = []
        private var removed: Set<KeyBytes> = []

        init(info: BucketInfo) { self.info = info }

        mutating func sortedKeys() -> [KeyBytes] {
            guard let cache = sortedCache else {
                let sorted = objects.keys.sorted()
                sortedCache = sorted
                added = []
                removed = []
                return sorted
            }
            if added.isEmpty && removed.isEmpty { return cache }
            let newKeys = added.sorted()
            var merged: [KeyBytes] = []
            merged.reserveCapacity(cache.count + newKeys.count)
            var j = 0
            for key in cache where !removed.contains(key) {
                while j < newKeys.count && newKeys[j] < key {
                    merged.append(newKeys[j])
                    j += 1
                }
                merged.append(key)
            }
            merged.append(contentsOf: newKeys[j...])
            sortedCache = merged
            added = []
            removed = []
            return merged
        }

        /// Records a key that was not in the bucket.
        mutating func noteAdded(_ key: KeyBytes) {
            guard sortedCache != nil else { return }
            // A key removed and added again since the last listing is in the cache already.
            if removed.remove(key) == nil { added.append(key) }
        }

        /// Records a key that was removed.
        mutating func noteRemoved(_ key: KeyBytes) {
            guard sortedCache != nil else { return }
            if let index = added.firstIndex(of: key) {
                added.remove(at: index)
            } else {
                removed.insert(key)
            }
        }
    }

    private let root: URL?
    private let state: LockedBox<[String: Bucket]>

    /// - Parameter storage: `.memory`, or `.disk(root:)` whose existing contents are loaded.
    init(storage: FakeS3Storage) throws(S3Error) {
        switch storage {
        case .memory:
            root = nil
            state = LockedBox([:])
        case .disk(let url):
            let root = url.standardizedFileURL
            self.root = root
            state = LockedBox(try Self.load(root: root))
        }
    }

    var isDisk: Bool { root != nil }

    // MARK: Paths (disk)

    private func bucketDirectory(_ bucket: String) -> URL {
        root!.appendingPathComponent("buckets", isDirectory: true).appendingPathComponent(bucket, isDirectory: true)
    }

    private func objectsDirectory(_ bucket: String) -> URL {
        bucketDirectory(bucket).appendingPathComponent("objects", isDirectory: true)
    }

    private static func hashName(_ key: String) -> String { SigV4.sha256Hex(key) }

    private func dataPath(_ bucket: String, _ file: String) -> String {
        objectsDirectory(bucket).appendingPathComponent(file).path
    }

    // MARK: Buckets

    func listBuckets() -> [BucketInfo] {
        state.withLock { $0.values.map(\.info) }.sorted { $0.name < $1.name }
    }

    func bucketExists(_ name: String) -> Bool { state.withLock { $0[name] != nil } }

    func createBucket(_ name: String, date: Date = Date()) throws(S3Error) {
        guard NameValidation.isValidBucketName(name) else { throw .invalidBucketName }
        let info = BucketInfo(name: name, creationDate: date)
        try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) in
            if buckets[name] != nil {
                throw S3Error(
                    status: 409, code: "BucketAlreadyOwnedByYou",
                    message: "Your previous request to create the named bucket succeeded and you already own it.",
                    details: ["BucketName": name])
            }
            if root != nil {
                let dir = objectsDirectory(name)
                do {
                    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                    let data = try JSONEncoder().encode(info)
                    try data.write(to: bucketDirectory(name).appendingPathComponent("bucket.json"), options: .atomic)
                } catch {
                    throw S3Error(status: 500, code: "InternalError", message: "Cannot create the bucket: \(error)")
                }
            }
            buckets[name] = Bucket(info: info)
        }
    }

    func deleteBucket(_ name: String) throws(S3Error) {
        try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) in
            guard let bucket = buckets[name] else { throw .noSuchBucket(name) }
            guard bucket.objects.isEmpty else {
                throw S3Error(
                    status: 409, code: "BucketNotEmpty", message: "The bucket you tried to delete is not empty",
                    details: ["BucketName": name])
            }
            if root != nil { try? FileManager.default.removeItem(at: bucketDirectory(name)) }
            buckets[name] = nil
        }
    }

    // MARK: Objects

    func info(bucket: String, key: String) throws(S3Error) -> ObjectInfo {
        try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) -> ObjectInfo in
            guard let b = buckets[bucket] else { throw .noSuchBucket(bucket) }
            guard let entry = b.objects[KeyBytes(key)] else { throw .noSuchKey(key) }
            return entry.info
        }
    }

    /// The object's metadata and its bytes (an open file on disk, which the caller closes).
    func open(bucket: String, key: String) throws(S3Error) -> (ObjectInfo, ObjectBody) {
        try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) -> (ObjectInfo, ObjectBody) in
            guard let b = buckets[bucket] else { throw .noSuchBucket(bucket) }
            guard let entry = b.objects[KeyBytes(key)] else { throw .noSuchKey(key) }
            if let bytes = entry.bytes { return (entry.info, .memory(bytes)) }
            let path = dataPath(bucket, entry.info.dataFile ?? "")
            let fd = POSIX.openForReading(path)
            guard fd >= 0 else { throw StorageFailure.error("cannot open the object's data", POSIX.lastError) }
            return (entry.info, .file(descriptor: fd))
        }
    }

    /// Runs `body` on the bucket's keys in UTF-8 byte order and their entries, under the lock.
    func withSortedObjects<R>(
        bucket: String, _ body: ([KeyBytes], [KeyBytes: Entry]) throws(S3Error) -> R
    ) throws(S3Error) -> R {
        try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) -> R in
            guard buckets[bucket] != nil else { throw .noSuchBucket(bucket) }
            let keys = buckets[bucket]!.sortedKeys()
            return try body(keys, buckets[bucket]!.objects)
        }
    }

    /// A sink for a new object's bytes in `bucket`.
    func makeUpload(bucket: String, allocator: ByteBufferAllocator, expectedSize: Int) throws(S3Error) -> UploadSink {
        guard bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        guard let root else { return UploadSink(memoryWith: allocator, capacity: expectedSize) }
        let tmp = root.appendingPathComponent("tmp", isDirectory: true).appendingPathComponent(UUID().uuidString)
        return try UploadSink(temporaryFile: tmp.path)
    }

    /// What a conditional write saw under its key when its condition held: the write happens only if the key
    /// still holds the same (checked atomically with the write).
    enum WriteExpectation: Equatable {
        /// No object.
        case absent
        /// The object with this ETag.
        case etag(String)
    }

    /// The key's state as a ``WriteExpectation``.
    func currentState(bucket: String, key: String) -> WriteExpectation {
        (try? info(bucket: bucket, key: key)).map { .etag($0.etag) } ?? .absent
    }

    /// The answer to a conditional write whose key changed while it was in flight (AWS: retry).
    static let conditionalConflict = S3Error(
        status: 409, code: "ConditionalRequestConflict",
        message: "A conflicting operation occurred. If using PutObject you can retry the request. If using "
            + "multipart upload you should initiate another CreateMultipartUpload request and re-upload each part.")

    /// Throws ``conditionalConflict`` unless the key holds what `expectation` says (called under the lock).
    private static func check(_ expectation: WriteExpectation?, _ entry: Entry?) throws(S3Error) {
        guard let expectation else { return }
        let now: WriteExpectation = entry.map { .etag($0.info.etag) } ?? .absent
        if now != expectation { throw conditionalConflict }
    }

    /// Makes the upload visible as `info.key`, replacing any previous object atomically — when `expecting` is
    /// given, only if the key still holds what it says (else `409 ConditionalRequestConflict`).
    @discardableResult
    func commit(bucket: String, info: ObjectInfo, upload: UploadSink, expecting: WriteExpectation? = nil)
        throws(S3Error) -> ObjectInfo
    {
        try commit(bucket: bucket, info: info, target: upload.finish(), expecting: expecting)
    }

    func commit(
        bucket: String, info: ObjectInfo, target: UploadSink.Target, expecting: WriteExpectation? = nil
    ) throws(S3Error) -> ObjectInfo {
        var info = info
        switch target {
        case .memory(let buffer):
            return try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) -> ObjectInfo in
                guard buckets[bucket] != nil else { throw .noSuchBucket(bucket) }
                let key = KeyBytes(info.key)
                try Self.check(expecting, buckets[bucket]!.objects[key])
                if buckets[bucket]!.objects[key] == nil { buckets[bucket]!.noteAdded(key) }
                buckets[bucket]!.objects[key] = Entry(info: info, bytes: buffer)
                return info
            }
        case .file(_, let tempPath):
            let base = Self.hashName(info.key)
            let dataName = "\(base).\(UUID().uuidString).data"
            info.dataFile = dataName
            let sidecarTemp = root!.appendingPathComponent("tmp").appendingPathComponent(UUID().uuidString + ".json")
            do {
                try JSONEncoder().encode(info).write(to: sidecarTemp)
            } catch {
                POSIX.remove(tempPath)
                throw S3Error(status: 500, code: "InternalError", message: "Cannot write metadata: \(error)")
            }
            return try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) -> ObjectInfo in
                guard buckets[bucket] != nil else {
                    POSIX.remove(tempPath)
                    POSIX.remove(sidecarTemp.path)
                    throw .noSuchBucket(bucket)
                }
                do throws(S3Error) {
                    try Self.check(expecting, buckets[bucket]!.objects[KeyBytes(info.key)])
                } catch {
                    POSIX.remove(tempPath)
                    POSIX.remove(sidecarTemp.path)
                    throw error
                }
                let dir = objectsDirectory(bucket)
                guard POSIX.rename(tempPath, dir.appendingPathComponent(dataName).path) else {
                    let code = POSIX.lastError
                    POSIX.remove(tempPath)
                    POSIX.remove(sidecarTemp.path)
                    throw StorageFailure.error("cannot store the object", code)
                }
                guard POSIX.rename(sidecarTemp.path, dir.appendingPathComponent(base + ".json").path) else {
                    let code = POSIX.lastError
                    POSIX.remove(dir.appendingPathComponent(dataName).path)
                    POSIX.remove(sidecarTemp.path)
                    throw StorageFailure.error("cannot store the object's metadata", code)
                }
                let key = KeyBytes(info.key)
                if let old = buckets[bucket]!.objects[key]?.info.dataFile { POSIX.remove(dataPath(bucket, old)) }
                if buckets[bucket]!.objects[key] == nil { buckets[bucket]!.noteAdded(key) }
                buckets[bucket]!.objects[key] = Entry(info: info, bytes: nil)
                return info
            }
        case .finished, .slot:
            throw .internalError
        }
    }

    /// Removes an object; removing a missing key succeeds, as in S3.
    /// - Returns: Whether an object was removed.
    /// - Parameter check: Called with the ETag of what the key holds, under the store's lock, before the delete
    ///   (a conditional delete throws from it; a key that holds nothing throws `NoSuchKey` then).
    @discardableResult
    func deleteObject(
        bucket: String, key: String, check: ((String) throws(S3Error) -> Void)? = nil
    ) throws(S3Error) -> Bool {
        try state.withLock { (buckets: inout [String: Bucket]) throws(S3Error) -> Bool in
            guard buckets[bucket] != nil else { throw .noSuchBucket(bucket) }
            let k = KeyBytes(key)
            if let check {
                guard let existing = buckets[bucket]!.objects[k] else { throw .noSuchKey(key) }
                try check(existing.info.etag)
            }
            guard let entry = buckets[bucket]!.objects.removeValue(forKey: k) else { return false }
            buckets[bucket]!.noteRemoved(k)
            if let file = entry.info.dataFile {
                POSIX.remove(objectsDirectory(bucket).appendingPathComponent(Self.hashName(key) + ".json").path)
                POSIX.remove(dataPath(bucket, file))
            }
            return true
        }
    }

    /// A temp file path inside the root (disk storage), for writers that fill a file themselves.
    /// Where uploads in progress are kept on disk (nil in memory).
    var temporaryDirectory: String? { root?.appendingPathComponent("tmp", isDirectory: true).path }

    func temporaryPath() -> String? {
        root?.appendingPathComponent("tmp", isDirectory: true).appendingPathComponent(UUID().uuidString).path
    }

    // MARK: Loading (disk)

    /// Threads that read a disk root's sidecars at start.
    static let loadThreads = 32

    private static func load(root: URL) throws(S3Error) -> [String: Bucket] {
        let fm = FileManager.default
        let bucketsDir = root.appendingPathComponent("buckets", isDirectory: true)
        let tmp = root.appendingPathComponent("tmp", isDirectory: true)
        do {
            try fm.createDirectory(at: bucketsDir, withIntermediateDirectories: true)
            // Uploads interrupted by a crash or a stop are never made visible.
            try? fm.removeItem(at: tmp)
            try fm.createDirectory(at: tmp, withIntermediateDirectories: true)
        } catch {
            throw S3Error(status: 500, code: "InternalError", message: "Cannot prepare the storage root: \(error)")
        }
        var result: [String: Bucket] = [:]
        let decoder = JSONDecoder()
        let names = (try? fm.contentsOfDirectory(atPath: bucketsDir.path)) ?? []
        for name in names where NameValidation.isValidBucketName(name) {
            let dir = bucketsDir.appendingPathComponent(name, isDirectory: true)
            guard let data = try? Data(contentsOf: dir.appendingPathComponent("bucket.json")),
                let info = try? decoder.decode(BucketInfo.self, from: data)
            else { continue }
            var bucket = Bucket(info: info)
            let objects = dir.appendingPathComponent("objects", isDirectory: true)
            let folder = objects.path + "/"
            let files = (try? fm.contentsOfDirectory(atPath: objects.path)) ?? []
            // The listing says which data files exist: no stat per object.
            let dataFiles = Set(files.lazy.filter { $0.hasSuffix(".data") })
            let sidecars = files.filter { $0.hasSuffix(".json") }
            // Sidecars are read by more threads than cores: from a cold page cache the reads wait on the disk, and
            // many in flight at once go faster (200,000 objects: 12.7 s on two threads, 6.4 s on 48); warm, the
            // decoding keeps every core busy (a bucket of 200,000 objects started in 20 s on one).
            let workers = Self.loadThreads
            let found = LockedBox<[ObjectInfo]>([])
            let done = DispatchGroup()
            for worker in 0..<workers {
                done.enter()
                let thread = Thread {
                    let decoder = JSONDecoder()
                    var mine: [ObjectInfo] = []
                    for index in stride(from: worker, to: sidecars.count, by: workers) {
                        guard let data = FileManager.default.contents(atPath: folder + sidecars[index]),
                            let info = try? decoder.decode(ObjectInfo.self, from: data), let dataFile = info.dataFile,
                            dataFiles.contains(dataFile)
                        else { continue }
                        mine.append(info)
                    }
                    found.withLock { $0 += mine }
                    done.leave()
                }
                thread.start()
            }
            done.wait()
            var referenced = Set<String>()
            for info in found.withLock({ $0 }) {
                referenced.insert(info.dataFile!)
                bucket.objects[KeyBytes(info.key)] = Entry(info: info, bytes: nil)
            }
            for file in dataFiles where !referenced.contains(file) {
                try? fm.removeItem(atPath: folder + file)
            }
            result[name] = bucket
        }
        return result
    }
}

extension ObjectStore {
    /// A piece of bytes to assemble into a new object.
    enum Piece {
        case memory(ByteBuffer)
        /// A whole file (a finished multipart part).
        case file(path: String)
        /// A range of an open descriptor (a stored object); not closed here.
        case descriptor(CInt, range: Range<Int64>)
        /// A range of a file (a multipart part in its slot).
        case range(path: String, Range<Int64>)
    }

    /// Takes the first `size` bytes of the file at `path` (an upload's slot file) as a new object's bytes without
    /// copying them: a second name for the file under `tmp/`, cut after `size`, as a sink to commit or abort, with
    /// `checksum` computed over those bytes. Nil when the file cannot be linked or cut (the caller copies instead).
    func adopt(bucket: String, path: String, size: Int64, checksum: ChecksumAlgorithm?)
        -> (sink: UploadSink, checksum: [UInt8]?)?
    {
        guard bucketExists(bucket), let temporary = temporaryPath(), POSIX.hardLink(path, temporary) else { return nil }
        let fd = POSIX.openForUpdating(temporary)
        guard fd >= 0, POSIX.truncate(fd, size) else {
            if fd >= 0 { POSIX.closeFile(fd) }
            POSIX.remove(temporary)
            return nil
        }
        var computed: [UInt8]?
        if let checksum {
            var digests = BodyDigests(md5: false, checksums: [checksum])
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            var offset: Int64 = 0
            while offset < size {
                let n = POSIX.read(
                    fd,
                    into: UnsafeMutableRawBufferPointer(
                        rebasing: buffer[..<Int(min(Int64(buffer.count), size - offset))]), at: offset)
                guard n > 0 else {
                    POSIX.closeFile(fd)
                    POSIX.remove(temporary)
                    return nil
                }
                digests.update(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
                offset += Int64(n)
            }
            computed = digests.finalize().checksums[checksum]
        }
        return (UploadSink(adopting: fd, path: temporary, count: size), computed)
    }

    /// Copies `pieces` in order into a new upload sink for `bucket`, 1 MiB at a time.
    /// - Returns: The sink (commit or abort it).
    func assemble(bucket: String, pieces: [Piece], allocator: ByteBufferAllocator) throws(S3Error) -> UploadSink {
        try assemble(bucket: bucket, pieces: pieces, allocator: allocator, checksum: nil).sink
    }

    /// Copies `pieces` in order into a new upload sink for `bucket`, 1 MiB at a time, computing `checksum` over
    /// the whole.
    /// - Returns: The sink (commit or abort it) and the checksum's bytes (nil when none was asked).
    func assemble(bucket: String, pieces: [Piece], allocator: ByteBufferAllocator, checksum: ChecksumAlgorithm?)
        throws(S3Error) -> (sink: UploadSink, checksum: [UInt8]?)
    {
        var digests = checksum.map { BodyDigests(md5: false, checksums: [$0]) }
        let target = try makeUpload(bucket: bucket, allocator: allocator, expectedSize: 0)
        func write(_ buffer: ByteBuffer) throws(S3Error) {
            buffer.withUnsafeReadableBytes { digests?.update($0) }
            try target.write(buffer)
        }
        var buffer = allocator.buffer(capacity: 1 << 20)
        func copy(_ fd: CInt, from start: Int64 = 0, size: Int64?) throws(S3Error) {
            var offset = start
            while size == nil || offset < start + size! {
                buffer.clear()
                let want = size.map { Int(min(Int64(1 << 20), start + $0 - offset)) } ?? (1 << 20)
                let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                    max(0, POSIX.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: offset))
                }
                if n == 0 {
                    if size == nil { return }
                    throw StorageFailure.error("unexpected end of stored data", 0)
                }
                try write(buffer)
                offset += Int64(n)
            }
        }
        do throws(S3Error) {
            for piece in pieces {
                switch piece {
                case .memory(let b): try write(b)
                case .file(let path):
                    let fd = POSIX.openForReading(path)
                    guard fd >= 0 else { throw StorageFailure.error("cannot open a stored part", POSIX.lastError) }
                    defer { POSIX.closeFile(fd) }
                    try copy(fd, size: nil)
                case .descriptor(let fd, let range):
                    try copy(fd, from: range.lowerBound, size: Int64(range.count))
                case .range(let path, let range):
                    let fd = POSIX.openForReading(path)
                    guard fd >= 0 else { throw StorageFailure.error("cannot open a stored part", POSIX.lastError) }
                    defer { POSIX.closeFile(fd) }
                    try copy(fd, from: range.lowerBound, size: Int64(range.count))
                }
            }
        } catch {
            target.abort()
            throw error
        }
        return (target, checksum.flatMap { digests?.finalize().checksums[$0] })
    }
}
