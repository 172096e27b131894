import AWSSigV4
import Essentials
import Foundation
import Hashing
import NIOCore
import NIOHTTP1

extension S3Service {
    /// CopyObject: `x-amz-copy-source` (`/bucket/key` or `bucket/key`, URL-encoded), the metadata
    /// directive (`COPY` or `REPLACE`) and the `x-amz-copy-source-if-*` conditions.
    func copyObject(_ bucket: String, _ key: String, _ request: S3Request, allocator: ByteBufferAllocator)
        throws(S3Error) -> S3Response
    {
        let (sourceBucket, sourceKey) = try Self.copySource(request)
        let directive = request.header("x-amz-metadata-directive")?.uppercased() ?? "COPY"
        guard directive == "COPY" || directive == "REPLACE" else {
            throw .invalidArgument("Unknown metadata directive.", name: "x-amz-metadata-directive", value: directive)
        }
        if sourceBucket == bucket && sourceKey == key && directive == "COPY" {
            throw .invalidRequest(
                "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes."
            )
        }
        let (sourceInfo, body) = try store.open(bucket: sourceBucket, key: sourceKey)
        defer { if case .file(let fd) = body { POSIX.closeFile(fd) } }
        try checkCopyConditions(request, sourceInfo)
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        let piece = Self.piece(body, range: 0..<sourceInfo.size)
        let sink = try store.assemble(bucket: bucket, pieces: [piece], allocator: allocator)
        var info = sourceInfo
        info.key = key
        info.dataFile = nil
        info.lastModified = Self.now()
        if directive == "REPLACE" {
            info.contentType = request.header("content-type") ?? "binary/octet-stream"
            info.userMetadata = [:]
            info.headers = [:]
            Self.applyMetadata(from: request, to: &info)
        }
        let stored: ObjectInfo
        do {
            stored = try store.commit(bucket: bucket, info: info, upload: sink)
        } catch {
            sink.abort()
            throw error
        }
        var x = XMLWriter()
        x.open("CopyObjectResult")
        x.element("LastModified", HTTPDate.iso8601(stored.lastModified))
        x.element("ETag", stored.etag)
        x.close("CopyObjectResult")
        return .xml(x.document)
    }

    /// The source bucket and key of `x-amz-copy-source`.
    static func copySource(_ request: S3Request) throws(S3Error) -> (String, String) {
        let header = request.header("x-amz-copy-source") ?? ""
        var source = Substring(header)
        if let q = source.firstIndex(of: "?") { source = source[..<q] }
        if source.hasPrefix("/") { source = source.dropFirst() }
        let decoded = try S3Request.decode(source)
        guard let slash = decoded.firstIndex(of: "/"), decoded.index(after: slash) < decoded.endIndex else {
            throw .invalidArgument(
                "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                name: "x-amz-copy-source", value: header)
        }
        let key = String(decoded[decoded.index(after: slash)...])
        try NameValidation.validateKey(key)
        return (String(decoded[..<slash]), key)
    }

    static func piece(_ body: ObjectBody, range: Range<Int64>) -> ObjectStore.Piece {
        switch body {
        case .memory(let b):
            .memory(b.getSlice(at: b.readerIndex + Int(range.lowerBound), length: range.count) ?? ByteBuffer())
        case .file(let fd): .descriptor(fd, range: range)
        }
    }

    /// UploadPartCopy: a part made of (a range of) an existing object.
    func uploadPartCopy(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> S3Response {
        let number = try Self.partNumber(request)
        let id = request.queryValue("uploadId") ?? ""
        _ = try multipart.upload(id, bucket: bucket, key: key)
        let upload = try multipart.upload(id, bucket: bucket, key: key)
        let (sourceBucket, sourceKey) = try Self.copySource(request)
        let (sourceInfo, body) = try store.open(bucket: sourceBucket, key: sourceKey)
        defer { if case .file(let fd) = body { POSIX.closeFile(fd) } }
        try checkCopyConditions(request, sourceInfo)
        var range: Range<Int64> = 0..<sourceInfo.size
        if let text = request.header("x-amz-copy-source-range") {
            guard case .from(let first, let last?) = ByteRangeRequest(header: text), last < sourceInfo.size else {
                throw .invalidArgument(
                    "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy",
                    name: "x-amz-copy-source-range", value: text)
            }
            range = first..<(last + 1)
        }
        let sink = try store.assemble(bucket: bucket, pieces: [Self.piece(body, range: range)], allocator: allocator)
        let digests = try Self.digests(of: Self.piece(body, range: range), checksum: upload.checksumAlgorithm)
        let etag = "\"\(SigV4.hex(digests.md5))\""
        let part = MultipartUploads.Part(
            number: number, etag: etag, size: Int64(range.count), md5: digests.md5, lastModified: Self.now(),
            target: sink.finish(),
            checksum: upload.checksumAlgorithm.flatMap { digests.checksums[$0] }.map { Data($0).base64EncodedString() })
        do {
            try multipart.addPart(part, to: id, bucket: bucket, key: key)
        } catch {
            MultipartUploads.discard(part)
            throw error
        }
        var x = XMLWriter()
        x.open("CopyPartResult")
        x.element("LastModified", HTTPDate.iso8601(part.lastModified))
        x.element("ETag", etag)
        x.close("CopyPartResult")
        return .xml(x.document)
    }

    /// MD5 of a piece, read 1 MiB at a time.
    static func md5(of piece: ObjectStore.Piece) throws(S3Error) -> [UInt8] {
        try digests(of: piece, checksum: nil).md5
    }

    /// MD5 (and a checksum, if asked) of a piece, read 1 MiB at a time.
    static func digests(of piece: ObjectStore.Piece, checksum: ChecksumAlgorithm?) throws(S3Error)
        -> BodyDigests.Result
    {
        var digests = BodyDigests(checksums: checksum.map { [$0] } ?? [])
        switch piece {
        case .memory(let b):
            b.withUnsafeReadableBytes { digests.update($0) }
        case .file, .range:
            break
        case .descriptor(let fd, let range):
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            var offset = range.lowerBound
            while offset < range.upperBound {
                let want = Int(min(Int64(chunk.count), range.upperBound - offset))
                let n = chunk.withUnsafeMutableBytes {
                    POSIX.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: offset)
                }
                guard n > 0 else { throw StorageFailure.error("unexpected end of stored data", 0) }
                chunk.withUnsafeBytes { digests.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                offset += Int64(n)
            }
        }
        return digests.finalize()
    }

    private func checkCopyConditions(_ request: S3Request, _ info: ObjectInfo) throws(S3Error) {
        let modified = info.lastModifiedSeconds
        if let m = request.header("x-amz-copy-source-if-match"), !Preconditions.etagList(m, matches: info.etag) {
            throw .preconditionFailed
        }
        if let m = request.header("x-amz-copy-source-if-none-match"), Preconditions.etagList(m, matches: info.etag) {
            throw .preconditionFailed
        }
        if let d = request.header("x-amz-copy-source-if-unmodified-since").flatMap(HTTPDate.parse), modified > d {
            throw .preconditionFailed
        }
        if let d = request.header("x-amz-copy-source-if-modified-since").flatMap(HTTPDate.parse), modified <= d {
            throw .preconditionFailed
        }
    }

    /// DeleteObjects: up to 1,000 keys in a `<Delete>` document; per-key errors for invalid keys.
    func deleteObjects(_ bucket: String, body: ByteBuffer?) throws(S3Error) -> S3Response {
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        guard let body else { throw .malformedXML }
        // Every key is read before any is deleted: a malformed document deletes nothing.
        let (quiet, keys) = try RequestDocuments.deleteRequest(Array(body.readableBytesView))
        var x = XMLWriter()
        x.open("DeleteResult")
        for key in keys {
            do {
                try NameValidation.validateKey(key)
                try store.deleteObject(bucket: bucket, key: key)
                if !quiet {
                    x.open("Deleted", namespace: false)
                    x.element("Key", key)
                    x.close("Deleted")
                }
            } catch {
                x.open("Error", namespace: false)
                x.element("Key", key)
                x.element("Code", error.code)
                x.element("Message", error.message)
                x.close("Error")
            }
        }
        x.close("DeleteResult")
        return .xml(x.document)
    }

    /// ListObjectVersions for an unversioned bucket: every object is its only, latest version `null`.
    func listObjectVersions(_ bucket: String, _ request: S3Request) throws(S3Error) -> S3Response {
        let prefix = request.queryValue("prefix") ?? ""
        let delimiter = request.queryValue("delimiter") ?? ""
        let maxKeys = try Self.maxKeys(request)
        let encode = try Self.encoder(request)
        let keyMarker = request.queryValue("key-marker")
        let page = try listPage(
            bucket: bucket, prefix: prefix, delimiter: delimiter, marker: keyMarker, maxKeys: maxKeys)
        var x = XMLWriter()
        x.open("ListVersionsResult")
        x.element("Name", bucket)
        x.element("Prefix", encode(prefix))
        x.element("KeyMarker", encode(keyMarker ?? ""))
        x.element("VersionIdMarker", request.queryValue("version-id-marker") ?? "")
        if page.isTruncated, let last = page.last {
            x.element("NextKeyMarker", encode(last))
            x.element("NextVersionIdMarker", "null")
        }
        x.element("MaxKeys", maxKeys)
        if !delimiter.isEmpty { x.element("Delimiter", encode(delimiter)) }
        if request.queryValue("encoding-type") != nil { x.element("EncodingType", "url") }
        x.element("IsTruncated", page.isTruncated)
        for info in page.contents {
            x.open("Version", namespace: false)
            x.element("Key", encode(info.key))
            x.element("VersionId", "null")
            x.element("IsLatest", true)
            x.element("LastModified", HTTPDate.iso8601(info.lastModified))
            x.element("ETag", info.etag)
            x.element("Size", info.size)
            writeOwner(&x)
            x.element("StorageClass", "STANDARD")
            x.close("Version")
        }
        for p in page.commonPrefixes {
            x.open("CommonPrefixes", namespace: false)
            x.element("Prefix", encode(p))
            x.close("CommonPrefixes")
        }
        x.close("ListVersionsResult")
        return .xml(x.document)
    }
}
