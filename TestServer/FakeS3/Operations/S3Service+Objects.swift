import AWSSigV4
import Essentials
import Foundation
import NIOCore
import NIOHTTP1

extension S3Service {
    /// GetObject / HeadObject: preconditions, Range (with If-Range), partNumber, response-* overrides,
    /// stored metadata and, with `x-amz-checksum-mode: ENABLED`, the stored checksum.
    func getObject(_ bucket: String, _ key: String, _ request: S3Request, includeBody: Bool, ignoreRange: Bool)
        throws(S3Error) -> S3Response
    {
        let info: ObjectInfo
        var body: ObjectBody?
        if includeBody {
            (info, body) = try store.open(bucket: bucket, key: key)
        } else {
            info = try store.info(bucket: bucket, key: key)
        }
        do {
            return try objectResponse(info, body: body, request, ignoreRange: ignoreRange)
        } catch {
            if case .file(let fd) = body { POSIX.closeFile(fd) }
            throw error
        }
    }

    private func objectResponse(_ info: ObjectInfo, body: ObjectBody?, _ request: S3Request, ignoreRange: Bool)
        throws(S3Error) -> S3Response
    {
        try Preconditions.check(request, info: info)
        var range: Range<Int64> = 0..<info.size
        var partial = false
        var headers = HTTPHeaders()
        if let partText = request.queryValue("partNumber") {
            guard let part = Int(partText), part >= 1, part <= 10_000 else {
                throw .invalidArgument(
                    "Part number must be an integer between 1 and 10000, inclusive", name: "partNumber", value: partText
                )
            }
            let sizes = info.partSizes ?? [info.size]
            guard part <= sizes.count else { throw .invalidRange(size: info.size) }
            let start = sizes[0..<(part - 1)].reduce(0, +)
            range = start..<(start + sizes[part - 1])
            partial = info.partSizes != nil
            if info.partSizes != nil { headers.add(name: "x-amz-mp-parts-count", value: String(sizes.count)) }
        } else if !ignoreRange, let rangeHeader = request.header("range"),
            Preconditions.rangeApplies(request, info: info), let parsed = ByteRangeRequest(header: rangeHeader)
        {
            switch parsed.resolve(size: info.size) {
            case .full: break
            case .partial(let r):
                range = r
                partial = true
            case .unsatisfiable: throw .invalidRange(size: info.size)
            }
        }
        headers.add(name: "ETag", value: info.etag)
        headers.add(name: "Last-Modified", value: HTTPDate.rfc1123(info.lastModified))
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "Content-Type", value: request.queryValue("response-content-type") ?? info.contentType)
        headers.add(name: "Content-Length", value: String(range.count))
        if partial {
            headers.add(name: "Content-Range", value: ByteRangeRequest.contentRange(range, size: info.size))
        }
        for name in ObjectInfo.storedHeaderNames {
            // (No query, no override: the name is not built for each of the five on every HEAD.)
            if !request.query.isEmpty, let override = request.queryValue("response-\(name)") {
                headers.add(name: name, value: override)
            } else if let value = info.headers[name] {
                headers.add(name: name, value: value)
            }
        }
        for name in info.userMetadata.keys.sorted() {
            headers.add(name: "x-amz-meta-\(name)", value: info.userMetadata[name]!)
        }
        if request.header("x-amz-checksum-mode")?.uppercased() == "ENABLED", !partial {
            Self.addChecksumHeaders(info, to: &headers)
        }
        let status: HTTPResponseStatus = partial ? .partialContent : .ok
        guard let body else { return S3Response(status: status, headers: headers) }
        return S3Response(status: status, headers: headers, body: .object(body, range: range))
    }

    /// PutObject: verifies the digests, then makes the object visible atomically (if its preconditions hold).
    func putObject(_ bucket: String, _ key: String, _ request: S3Request, _ receiver: UploadReceiver) throws(S3Error)
        -> S3Response
    {
        let verified = try receiver.finish()
        return try conditionalWrite(bucket, key, request) { expecting throws(S3Error) in
            var info = ObjectInfo(
                key: key, size: verified.size, etag: "\"\(SigV4.hex(verified.md5))\"", lastModified: Self.now(),
                contentType: request.header("content-type") ?? "binary/octet-stream")
            Self.applyMetadata(from: request, to: &info)
            info.checksums = verified.checksums
            if !info.checksums.isEmpty { info.checksumType = MultipartUploads.ChecksumType.fullObject.rawValue }
            let stored = try store.commit(bucket: bucket, info: info, upload: receiver.sink, expecting: expecting)
            var headers = HTTPHeaders()
            headers.add(name: "ETag", value: stored.etag)
            Self.addChecksumHeaders(stored, to: &headers)
            return S3Response(status: .ok, headers: headers)
        }
    }

    /// `x-amz-checksum-<algorithm>` of each stored checksum, and `x-amz-checksum-type`.
    static func addChecksumHeaders(_ info: ObjectInfo, to headers: inout HTTPHeaders) {
        for (algorithm, value) in info.checksums.sorted(by: { $0.key < $1.key }) {
            headers.add(name: "x-amz-checksum-\(algorithm)", value: value)
        }
        if !info.checksums.isEmpty {
            headers.add(name: "x-amz-checksum-type", value: info.checksumType ?? "FULL_OBJECT")
        }
    }

    /// Conditional writes: `If-None-Match: *` fails (412) when the key exists; `If-Match` when its ETag differs
    /// (412) or the key holds nothing (404 `NoSuchKey`).
    /// - Returns: What the key holds, for the write to expect at its commit; nil for an unconditional write.
    func checkWritePreconditions(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error)
        -> ObjectStore.WriteExpectation?
    {
        let ifNoneMatch = request.header("if-none-match")
        let ifMatch = request.header("if-match")
        guard ifNoneMatch != nil || ifMatch != nil else { return nil }
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        let existing = try? store.info(bucket: bucket, key: key)
        if let ifNoneMatch, ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*", existing != nil {
            throw .preconditionFailed
        }
        if let ifMatch {
            guard let existing else { throw .noSuchKey(key) }
            guard writeIfMatch(ifMatch, matches: existing.etag) else { throw .preconditionFailed }
        }
        return existing.map { .etag($0.etag) } ?? .absent
    }

    /// Whether a write's (or a delete's) `If-Match` header matches an ETag: as S3 compares it, or, with
    /// ``comparesBareIfMatch``, only in the bare form (Ceph's RADOS Gateway 16).
    func writeIfMatch(_ header: String, matches etag: String) -> Bool {
        guard comparesBareIfMatch else { return Preconditions.etagList(header, matches: etag) }
        let bare =
            etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count >= 2 ? String(etag.dropFirst().dropLast()) : etag
        return header.trimmingCharacters(in: .whitespaces) == bare
    }

    /// Runs a write under its preconditions, as S3 does: they are checked first (412, 404); a second conditional
    /// write to a key while one is in flight, or a key that changes before the write commits, is a
    /// `409 ConditionalRequestConflict` (the client retries). `write` gets what the key must still hold at its
    /// commit (nil for an unconditional write).
    func conditionalWrite<R>(
        _ bucket: String, _ key: String, _ request: S3Request,
        _ write: (ObjectStore.WriteExpectation?) throws(S3Error) -> R
    ) throws(S3Error) -> R {
        guard let expectation = try checkWritePreconditions(bucket, key, request) else { return try write(nil) }
        guard conditionalWrites.begin(bucket: bucket, key: key) else { throw ObjectStore.conditionalConflict }
        defer { conditionalWrites.end(bucket: bucket, key: key) }
        return try write(expectation)
    }

    /// Copies `x-amz-meta-*` and the stored representation headers from a request.
    static func applyMetadata(from request: S3Request, to info: inout ObjectInfo) {
        for (name, value) in request.headers {
            let lower = name.lowercased()
            if lower.hasPrefix("x-amz-meta-") {
                info.userMetadata[String(lower.dropFirst("x-amz-meta-".count))] = value
            } else if ObjectInfo.storedHeaderNames.contains(lower) {
                // aws-chunked is a transfer detail, not part of the stored representation.
                if lower == "content-encoding" {
                    let codings = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                        .filter { $0.lowercased() != "aws-chunked" && !$0.isEmpty }
                    if !codings.isEmpty { info.headers[lower] = codings.joined(separator: ",") }
                } else {
                    info.headers[lower] = value
                }
            }
        }
    }

    /// The current time at millisecond precision (what S3 stores as LastModified).
    static func now() -> Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }
}
