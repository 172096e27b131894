import AWSSigV4
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

extension S3Service {
    func createMultipartUpload(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> S3Response {
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        var template = ObjectInfo(
            key: key, size: 0, etag: "", lastModified: Date(),
            contentType: request.header("content-type") ?? "binary/octet-stream")
        Self.applyMetadata(from: request, to: &template)
        let id = multipart.create(bucket: bucket, key: key, template: template)
        var x = XMLWriter()
        x.open("InitiateMultipartUploadResult")
        x.element("Bucket", bucket)
        x.element("Key", key)
        x.element("UploadId", id)
        x.close("InitiateMultipartUploadResult")
        return .xml(x.document)
    }

    static func partNumber(_ request: S3Request) throws(S3Error) -> Int {
        let text = request.queryValue("partNumber") ?? ""
        guard let n = Int(text), (1...10_000).contains(n) else {
            throw .invalidArgument(
                "Part number must be an integer between 1 and 10000, inclusive", name: "partNumber", value: text)
        }
        return n
    }

    /// Checks an UploadPart before its body arrives.
    func validateUploadPart(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) {
        _ = try Self.partNumber(request)
        if request.header("x-amz-copy-source") != nil { throw .notImplemented }
        _ = try multipart.upload(request.queryValue("uploadId") ?? "", bucket: bucket, key: key)
    }

    func uploadPart(_ bucket: String, _ key: String, _ request: S3Request, _ receiver: UploadReceiver) throws(S3Error)
        -> S3Response
    {
        let number = try Self.partNumber(request)
        let id = request.queryValue("uploadId") ?? ""
        let verified = try receiver.finish()
        let etag = "\"\(SigV4.hex(verified.md5))\""
        let part = MultipartUploads.Part(
            number: number, etag: etag, size: verified.size, md5: verified.md5, lastModified: Self.now(),
            target: receiver.sink.finish())
        do {
            try multipart.addPart(part, to: id, bucket: bucket, key: key)
        } catch {
            MultipartUploads.discard(part)
            throw error
        }
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: etag)
        for (algorithm, value) in verified.checksums.sorted(by: { $0.key < $1.key }) {
            headers.add(name: "x-amz-checksum-\(algorithm)", value: value)
        }
        return S3Response(status: .ok, headers: headers)
    }

    func completeMultipartUpload(
        _ bucket: String, _ key: String, _ request: S3Request, body: ByteBuffer?, allocator: ByteBufferAllocator
    ) throws(S3Error) -> S3Response {
        let id = request.queryValue("uploadId") ?? ""
        let upload = try multipart.upload(id, bucket: bucket, key: key)
        guard let body else { throw .malformedXML }
        let root = try XMLElement.parse(Array(body.readableBytesView))
        guard root.name == "CompleteMultipartUpload" else { throw .malformedXML }
        let requested = try root.all("Part").map { (p: XMLElement) throws(S3Error) -> (Int, String) in
            guard let n = p.child("PartNumber").flatMap({ Int($0.text) }), let etag = p.child("ETag")?.text else {
                throw S3Error.malformedXML
            }
            return (n, etag)
        }
        guard !requested.isEmpty else {
            throw S3Error(
                status: 400, code: "MalformedXML",
                message: "The XML you provided was not well-formed or did not validate against our published schema.")
        }
        var parts: [MultipartUploads.Part] = []
        for (index, (number, etag)) in requested.enumerated() {
            if index > 0 && number <= requested[index - 1].0 {
                throw S3Error(
                    status: 400, code: "InvalidPartOrder",
                    message:
                        "The list of parts was not in ascending order. The parts list must be specified in order by part number."
                )
            }
            guard let part = upload.parts[number], Preconditions.etagList(etag, matches: part.etag) else {
                throw S3Error(
                    status: 400, code: "InvalidPart",
                    message:
                        "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
                    details: ["PartNumber": String(number), "ETag": etag])
            }
            parts.append(part)
        }
        for part in parts.dropLast() where part.size < MultipartUploads.minimumPartSize {
            throw S3Error(
                status: 400, code: "EntityTooSmall",
                message: "Your proposed upload is smaller than the minimum allowed object size.",
                details: ["PartNumber": String(part.number), "ProposedSize": String(part.size)])
        }
        try checkWritePreconditions(bucket, key, request)
        let pieces: [ObjectStore.Piece] = parts.map { part in
            switch part.target {
            case .memory(let b): .memory(b)
            case .file(_, let path): .file(path: path)
            case .finished: .memory(ByteBuffer())
            }
        }
        let sink = try store.assemble(bucket: bucket, pieces: pieces, allocator: allocator)
        var md5s: [UInt8] = []
        for part in parts { md5s += part.md5 }
        var info = upload.template
        info.size = parts.reduce(0) { $0 + $1.size }
        info.etag = "\"\(SigV4.hex(Insecure.MD5.hash(data: md5s)))-\(parts.count)\""
        info.lastModified = Self.now()
        info.partSizes = parts.map(\.size)
        let stored: ObjectInfo
        do {
            stored = try store.commit(bucket: bucket, info: info, upload: sink)
        } catch {
            sink.abort()
            throw error
        }
        if let removed = try? multipart.remove(id, bucket: bucket, key: key) {
            for part in removed.parts.values { MultipartUploads.discard(part) }
        }
        var x = XMLWriter()
        x.open("CompleteMultipartUploadResult")
        x.element("Location", "/\(bucket)/\(key)")
        x.element("Bucket", bucket)
        x.element("Key", key)
        x.element("ETag", stored.etag)
        x.close("CompleteMultipartUploadResult")
        return .xml(x.document)
    }

    func abortMultipartUpload(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> S3Response {
        let upload = try multipart.remove(request.queryValue("uploadId") ?? "", bucket: bucket, key: key)
        for part in upload.parts.values { MultipartUploads.discard(part) }
        return S3Response(status: .noContent)
    }

    func listParts(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> S3Response {
        let id = request.queryValue("uploadId") ?? ""
        let upload = try multipart.upload(id, bucket: bucket, key: key)
        let marker = Int(request.queryValue("part-number-marker") ?? "0") ?? 0
        let maxParts = min(1000, max(0, Int(request.queryValue("max-parts") ?? "1000") ?? 1000))
        let all = upload.parts.values.filter { $0.number > marker }.sorted { $0.number < $1.number }
        let page = all.prefix(maxParts)
        var x = XMLWriter()
        x.open("ListPartsResult")
        x.element("Bucket", bucket)
        x.element("Key", key)
        x.element("UploadId", id)
        x.element("PartNumberMarker", marker)
        if let last = page.last { x.element("NextPartNumberMarker", last.number) }
        x.element("MaxParts", maxParts)
        x.element("IsTruncated", all.count > page.count)
        for part in page {
            x.open("Part", namespace: false)
            x.element("PartNumber", part.number)
            x.element("LastModified", HTTPDate.iso8601(part.lastModified))
            x.element("ETag", part.etag)
            x.element("Size", part.size)
            x.close("Part")
        }
        x.element("StorageClass", "STANDARD")
        x.close("ListPartsResult")
        return .xml(x.document)
    }

    func listMultipartUploads(_ bucket: String) throws(S3Error) -> S3Response {
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        var x = XMLWriter()
        x.open("ListMultipartUploadsResult")
        x.element("Bucket", bucket)
        x.element("KeyMarker", "")
        x.element("UploadIdMarker", "")
        x.element("MaxUploads", 1000)
        x.element("IsTruncated", false)
        for upload in multipart.list(bucket: bucket) {
            x.open("Upload", namespace: false)
            x.element("Key", upload.key)
            x.element("UploadId", upload.id)
            x.element("Initiated", HTTPDate.iso8601(upload.initiated))
            x.element("StorageClass", "STANDARD")
            x.close("Upload")
        }
        x.close("ListMultipartUploadsResult")
        return .xml(x.document)
    }
}
