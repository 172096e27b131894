import AWSSigV4
import Essentials
import Foundation
import Hashing
import NIOCore
import NIOHTTP1

extension S3Service {
    func createMultipartUpload(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> S3Response {
        guard store.bucketExists(bucket) else { throw .noSuchBucket(bucket) }
        var template = ObjectInfo(
            key: key, size: 0, etag: "", lastModified: Date(),
            contentType: request.header("content-type") ?? "binary/octet-stream")
        Self.applyMetadata(from: request, to: &template)
        let checksum = try Self.multipartChecksum(request)
        let id = multipart.create(bucket: bucket, key: key, template: template, checksum: checksum)
        var headers = HTTPHeaders()
        if let (algorithm, type) = checksum {
            headers.add(name: "x-amz-checksum-algorithm", value: algorithm.rawValue.uppercased())
            headers.add(name: "x-amz-checksum-type", value: type.rawValue)
        }
        var x = XMLWriter()
        x.open("InitiateMultipartUploadResult")
        x.element("Bucket", bucket)
        x.element("Key", key)
        x.element("UploadId", id)
        x.close("InitiateMultipartUploadResult")
        var response = S3Response.xml(x.document)
        response.headers.add(contentsOf: headers)
        return response
    }

    /// The checksum a new multipart upload's parts carry (`x-amz-checksum-algorithm`) and how the object's covers
    /// it (`x-amz-checksum-type`): `FULL_OBJECT` is for the CRCs only, `COMPOSITE` not for CRC-64/NVME; without a
    /// type, CRC-64/NVME is full-object and the others composite.
    static func multipartChecksum(_ request: S3Request) throws(S3Error)
        -> (ChecksumAlgorithm, MultipartUploads.ChecksumType)?
    {
        let typeText = request.header("x-amz-checksum-type")?.uppercased()
        guard let name = request.header("x-amz-checksum-algorithm") else {
            if typeText != nil {
                throw .invalidRequest("The x-amz-checksum-type header requires the x-amz-checksum-algorithm header.")
            }
            return nil
        }
        guard let algorithm = ChecksumAlgorithm(rawValue: name.lowercased()) else {
            throw .invalidRequest("Checksum algorithm provided is unsupported.")
        }
        let type: MultipartUploads.ChecksumType
        if let typeText {
            guard let given = MultipartUploads.ChecksumType(rawValue: typeText) else {
                throw .invalidRequest("Value for x-amz-checksum-type header is invalid.")
            }
            type = given
        } else {
            type = algorithm == .crc64nvme ? .fullObject : .composite
        }
        switch (algorithm, type) {
        case (.sha1, .fullObject), (.sha256, .fullObject):
            throw .invalidRequest(
                "The FULL_OBJECT checksum type cannot be used with the \(algorithm.displayName) checksum algorithm.")
        case (.crc64nvme, .composite):
            throw .invalidRequest("The COMPOSITE checksum type cannot be used with the CRC64NVME checksum algorithm.")
        default: return (algorithm, type)
        }
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
    /// - Returns: The checksum algorithm the upload's parts carry, if any.
    func validateUploadPart(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error)
        -> ChecksumAlgorithm?
    {
        _ = try Self.partNumber(request)
        if request.header("x-amz-copy-source") != nil { throw .notImplemented }
        return try multipart.upload(request.queryValue("uploadId") ?? "", bucket: bucket, key: key).checksumAlgorithm
    }

    /// Where a part's body goes when its slot in the upload's slot file is free (disk storage; see
    /// ``MultipartUploads/Slots``); nil for a file of its own. The size is the body's declared length.
    func partSink(_ bucket: String, _ key: String, _ request: S3Request) -> UploadSink? {
        guard let directory = store.temporaryDirectory, let number = try? Self.partNumber(request),
            let id = request.queryValue("uploadId"),
            let size = (request.header("x-amz-decoded-content-length") ?? request.header("content-length"))
                .flatMap({ Int64($0) }),
            let slot = multipart.reserveSlot(
                id, bucket: bucket, key: key, number: number, size: size, directory: directory)
        else { return nil }
        let multipart = self.multipart
        return try? UploadSink(slotIn: slot.path, offset: slot.offset, capacity: slot.capacity) {
            multipart.releaseSlot(id, number: number)
        }
    }

    func uploadPart(_ bucket: String, _ key: String, _ request: S3Request, _ receiver: UploadReceiver) throws(S3Error)
        -> S3Response
    {
        let number = try Self.partNumber(request)
        let id = request.queryValue("uploadId") ?? ""
        let verified = try receiver.finish()
        let etag = "\"\(SigV4.hex(verified.md5))\""
        let upload = try multipart.upload(id, bucket: bucket, key: key)
        let part = MultipartUploads.Part(
            number: number, etag: etag, size: verified.size, md5: verified.md5, lastModified: Self.now(),
            target: receiver.sink.finish(),
            checksum: upload.checksumAlgorithm.flatMap { verified.checksums[$0.rawValue] })
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
        let checksumElement = upload.checksumAlgorithm.map { "Checksum" + $0.rawValue.uppercased() }
        let requested = try RequestDocuments.completionParts(
            Array(body.readableBytesView), checksumElement: checksumElement)
        var parts: [MultipartUploads.Part] = []
        for (index, item) in requested.enumerated() {
            if index > 0 && item.number <= requested[index - 1].number {
                throw S3Error(
                    status: 400, code: "InvalidPartOrder",
                    message:
                        "The list of parts was not in ascending order. The parts list must be specified in order by part number."
                )
            }
            guard let part = upload.parts[item.number], Preconditions.etagList(item.etag, matches: part.etag),
                item.checksum == nil || item.checksum == part.checksum
            else {
                throw S3Error(
                    status: 400, code: "InvalidPart",
                    message:
                        "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
                    details: ["PartNumber": String(item.number), "ETag": item.etag])
            }
            parts.append(part)
        }
        for part in parts.dropLast() where part.size < MultipartUploads.minimumPartSize {
            throw S3Error(
                status: 400, code: "EntityTooSmall",
                message: "Your proposed upload is smaller than the minimum allowed object size.",
                details: ["PartNumber": String(part.number), "ProposedSize": String(part.size)])
        }
        let claimed = try Self.claimedObjectChecksum(request, upload: upload)
        return try conditionalWrite(bucket, key, request) { expecting throws(S3Error) in
            let fullObject = upload.checksumType == .fullObject ? upload.checksumAlgorithm : nil
            let sink: UploadSink
            let computed: [UInt8]?
            // Parts in their slots are the object already: the slot file is taken as it is (cut after the last).
            let sealed = multipart.sealSlots(id, parts: parts)
            if let sealed,
                let adopted = store.adopt(bucket: bucket, path: sealed.path, size: sealed.size, checksum: fullObject)
            {
                (sink, computed) = adopted
            } else {
                if sealed != nil { multipart.unsealSlots(id) }
                let pieces: [ObjectStore.Piece] = parts.map { part in
                    switch part.target {
                    case .memory(let b): .memory(b)
                    case .file(_, let path): .file(path: path)
                    case .slot(_, let path, let offset, _): .range(path: path, offset..<(offset + part.size))
                    case .finished: .memory(ByteBuffer())
                    }
                }
                (sink, computed) = try store.assemble(
                    bucket: bucket, pieces: pieces, allocator: allocator, checksum: fullObject)
            }
            var md5s: [UInt8] = []
            for part in parts { md5s += part.md5 }
            var info = upload.template
            info.size = parts.reduce(0) { $0 + $1.size }
            info.etag = "\"\(SigV4.hex(Insecure.MD5.hash(data: md5s)))-\(parts.count)\""
            info.lastModified = Self.now()
            info.partSizes = parts.map(\.size)
            let stored: ObjectInfo
            do throws(S3Error) {
                if let algorithm = upload.checksumAlgorithm, let type = upload.checksumType,
                    let value = Self.objectChecksum(type, algorithm, parts: parts, computed: computed)
                {
                    if let claimed, claimed != value {
                        throw S3Error(
                            status: 400, code: "BadDigest",
                            message: "The \(algorithm.displayName) you specified did not match the calculated checksum."
                        )
                    }
                    info.checksums[algorithm.rawValue] = value
                    info.checksumType = type.rawValue
                }
                stored = try store.commit(bucket: bucket, info: info, upload: sink, expecting: expecting)
            } catch {
                sink.abort()
                if sealed != nil { multipart.unsealSlots(id) }
                throw error
            }
            if let removed = try? multipart.remove(id, bucket: bucket, key: key) { MultipartUploads.discard(removed) }
            var x = XMLWriter()
            x.open("CompleteMultipartUploadResult")
            x.element("Location", "/\(bucket)/\(key)")
            x.element("Bucket", bucket)
            x.element("Key", key)
            x.element("ETag", stored.etag)
            for (algorithm, value) in stored.checksums.sorted(by: { $0.key < $1.key }) {
                x.element("Checksum" + algorithm.uppercased(), value)
            }
            if let type = stored.checksumType { x.element("ChecksumType", type) }
            x.close("CompleteMultipartUploadResult")
            var headers = HTTPHeaders()
            Self.addChecksumHeaders(stored, to: &headers)
            var response = S3Response.xml(x.document)
            response.headers.add(contentsOf: headers)
            return response
        }
    }

    /// The full-object checksum a CompleteMultipartUpload states (`x-amz-checksum-<algorithm>`), checked against
    /// the upload's algorithm and type (`x-amz-checksum-type`, if sent, must be the upload's).
    static func claimedObjectChecksum(_ request: S3Request, upload: MultipartUploads.Upload) throws(S3Error)
        -> String?
    {
        if let type = request.header("x-amz-checksum-type")?.uppercased(), type != upload.checksumType?.rawValue {
            throw .invalidRequest(
                "The upload was created using the \(upload.checksumType?.rawValue ?? "null") checksum mode. The "
                    + "complete request must use the same checksum mode.")
        }
        var claimed: String?
        for algorithm in ChecksumAlgorithm.allCases {
            guard let value = request.header(algorithm.headerName) else { continue }
            guard algorithm == upload.checksumAlgorithm else {
                throw .invalidRequest(
                    "The upload was created using a \(upload.checksumAlgorithm?.rawValue ?? "null") checksum. The "
                        + "complete request must use the same checksum.")
            }
            claimed = value
        }
        return claimed
    }

    /// A multipart object's checksum as S3 keeps it: over the assembled bytes (`FULL_OBJECT`), or over the parts'
    /// checksums followed by `-<parts>` (`COMPOSITE`; nil when a part has none).
    static func objectChecksum(
        _ type: MultipartUploads.ChecksumType, _ algorithm: ChecksumAlgorithm, parts: [MultipartUploads.Part],
        computed: [UInt8]?
    ) -> String? {
        switch type {
        case .fullObject:
            return computed.map { Data($0).base64EncodedString() }
        case .composite:
            var digests = BodyDigests(md5: false, checksums: [algorithm])
            for part in parts {
                guard let value = part.checksum, let bytes = Data(base64Encoded: value) else { return nil }
                digests.update(bytes)
            }
            guard let value = digests.finalize().checksums[algorithm] else { return nil }
            return Data(value).base64EncodedString() + "-\(parts.count)"
        }
    }

    func abortMultipartUpload(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> S3Response {
        MultipartUploads.discard(
            try multipart.remove(request.queryValue("uploadId") ?? "", bucket: bucket, key: key))
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
            if let algorithm = upload.checksumAlgorithm, let checksum = part.checksum {
                x.element("Checksum" + algorithm.rawValue.uppercased(), checksum)
            }
            x.close("Part")
        }
        x.element("StorageClass", "STANDARD")
        if let algorithm = upload.checksumAlgorithm { x.element("ChecksumAlgorithm", algorithm.rawValue.uppercased()) }
        if let type = upload.checksumType { x.element("ChecksumType", type.rawValue) }
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
