import AWSSigV4
package import Foundation

/// A checksum sent with (or received for) an upload: the algorithm and its base64 value as S3 writes it.
package struct S3ChecksumValue: Sendable, Hashable {
    package var algorithm: S3ChecksumAlgorithm
    package var base64: String

    package init(algorithm: S3ChecksumAlgorithm, base64: String) {
        self.algorithm = algorithm
        self.base64 = base64
    }

    /// The `x-amz-checksum-<name>` header.
    var headerName: String { "x-amz-checksum-\(algorithm.rawValue)" }
}

extension S3ChecksumAlgorithm {
    /// The name in `x-amz-checksum-algorithm` (`CRC32C`).
    var headerValue: String { rawValue.uppercased() }

    /// The element of a part or an object in S3's XML (`ChecksumCRC32C`).
    package var xmlElement: String { "Checksum" + rawValue.uppercased() }

    /// Whether S3 can keep a checksum of this algorithm over a whole multipart object (`FULL_OBJECT`): the CRCs
    /// can, SHA-256 only per part (`COMPOSITE`).
    var supportsFullObjectMultipart: Bool { self != .sha256 }
}

/// The bytes of an upload request: in memory, or a range of an open file read as it is sent.
enum S3UploadBody: Sendable {
    case data(Data)
    case file(HTTPFileBody)

    var count: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .file(let file): file.count
        }
    }
}

/// One part as ListParts reports it.
package struct S3ListedPart: Sendable, Hashable {
    package var number: Int
    package var etag: String
    package var size: Int64
    /// The part's checksum of the upload's algorithm, base64, when the service reports it.
    package var checksum: String?
}

/// The parts of a multipart upload (every page of ListParts) and the checksum algorithm it was created with.
struct S3ListedParts: Sendable, Hashable {
    var parts: [S3ListedPart]
    /// `ChecksumAlgorithm` as the service reports it (`CRC32C`), nil when it reports none.
    var checksumAlgorithm: String?
}

/// One part for CompleteMultipartUpload, with its checksum.
package struct S3PartToComplete: Sendable, Hashable {
    package var number: Int
    package var etag: String
    package var checksum: S3ChecksumValue?

    package init(number: Int, etag: String, checksum: S3ChecksumValue?) {
        self.number = number
        self.etag = etag
        self.checksum = checksum
    }
}

// The requests of the uploader: signed over `UNSIGNED-PAYLOAD` (no SHA-256 pass over the bytes: an
// `x-amz-checksum-*` protects them instead), each with the uploader's retry policy.
extension S3Client {
    /// The metadata and type headers of a new object.
    static func objectHeaders(contentType: String?, metadata: [String: String]) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        if let contentType { headers.append(("content-type", contentType)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            headers.append(("x-amz-meta-\(name.lowercased())", value))
        }
        return headers
    }

    /// Whether a failure is S3's `409 ConditionalRequestConflict` (another write to the key was in flight): per
    /// AWS, a conditional write that gets it is retried.
    static func isConditionalConflict(_ error: S3Error) -> Bool {
        if case .service("ConditionalRequestConflict", _, _, _) = error { return true }
        if case .service(_, _, 409, _) = error { return true }
        return false
    }

    /// PutObject of a whole body in one request.
    /// - Parameters:
    ///   - attempts: Counts the attempts made (to tell whether an earlier attempt may have been applied).
    /// - Returns: The response head.
    func uploadObject(
        bucket: String, key: String, body: S3UploadBody, contentType: String?, metadata: [String: String],
        checksum: S3ChecksumValue?, ifNoneMatch: Bool, policy: RetryPolicy, attempts: inout Int
    ) async throws(S3Error) -> HTTPResponseHead {
        var headers = Self.objectHeaders(contentType: contentType, metadata: metadata)
        headers.append(("content-length", String(body.count)))
        if let checksum { headers.append((checksum.headerName, checksum.base64)) }
        if ifNoneMatch { headers.append(("if-none-match", "*")) }
        let (head, _) = try await send(policy: policy, retryingAlso: Self.isConditionalConflict) { credentials in
            attempts += 1
            return makeUploadRequest(
                method: "PUT", bucket: bucket, key: key, headers: headers, body: body, credentials: credentials)
        }
        return head
    }

    /// A request carrying an upload body, signed over `UNSIGNED-PAYLOAD`.
    private func makeUploadRequest(
        method: String, bucket: String, key: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)], body: S3UploadBody, credentials: AWSCredentials?
    ) -> HTTPRequest {
        switch body {
        case .data(let data):
            makeRequest(
                method: method, bucket: bucket, key: key, query: query, headers: headers, body: data,
                payloadHash: SigV4.unsignedPayload, credentials: credentials)
        case .file(let file):
            makeRequest(
                method: method, bucket: bucket, key: key, query: query, headers: headers, bodyFile: file,
                payloadHash: SigV4.unsignedPayload, credentials: credentials)
        }
    }

    /// CreateMultipartUpload announcing the checksum the parts carry.
    /// - Parameters:
    ///   - checksum: The parts' algorithm, nil for none.
    ///   - fullObject: `x-amz-checksum-type: FULL_OBJECT` (one checksum over the whole object) rather than
    ///     `COMPOSITE` (a checksum of the parts' checksums).
    /// - Returns: The upload id.
    func createUpload(
        bucket: String, key: String, contentType: String?, metadata: [String: String], checksum: S3ChecksumAlgorithm?,
        fullObject: Bool, policy: RetryPolicy
    ) async throws(S3Error) -> String {
        var headers = Self.objectHeaders(contentType: contentType, metadata: metadata)
        if let checksum {
            headers.append(("x-amz-checksum-algorithm", checksum.headerValue))
            headers.append(("x-amz-checksum-type", fullObject ? "FULL_OBJECT" : "COMPOSITE"))
        }
        let (_, body) = try await send(policy: policy) {
            makeRequest(
                method: "POST", bucket: bucket, key: key, query: [("uploads", "")], headers: headers, body: Data(),
                credentials: $0)
        }
        return try Self.parseUploadID(body)
    }

    /// The upload id of a CreateMultipartUpload answer.
    package static func parseUploadID(_ body: Data) throws(S3Error) -> String {
        let root = try S3XMLParser.parse(body)
        guard root.name == "InitiateMultipartUploadResult" else {
            throw .malformedResponse("expected <InitiateMultipartUploadResult>, got <\(root.name)>")
        }
        let id = try root.requiredText("UploadId")
        guard !id.isEmpty else { throw .malformedResponse("empty UploadId") }
        return id
    }

    /// UploadPart with the part's checksum.
    /// - Returns: The part's ETag (unquoted).
    func uploadPart(
        bucket: String, key: String, uploadId: String, number: Int, body: S3UploadBody, checksum: S3ChecksumValue?,
        policy: RetryPolicy
    ) async throws(S3Error) -> String {
        let query: [(name: String, value: String)] = [("partNumber", String(number)), ("uploadId", uploadId)]
        var headers: [(name: String, value: String)] = [("content-length", String(body.count))]
        if let checksum { headers.append((checksum.headerName, checksum.base64)) }
        let (head, _) = try await send(policy: policy) {
            makeUploadRequest(
                method: "PUT", bucket: bucket, key: key, query: query, headers: headers, body: body, credentials: $0)
        }
        guard let etag = head["etag"].map(S3ETag.unquoted), !etag.isEmpty else {
            throw .malformedResponse("UploadPart response without an ETag")
        }
        if let checksum, let echoed = head[checksum.headerName], echoed != checksum.base64 {
            throw .checksumMismatch(expected: checksum.base64, actual: echoed, algorithm: checksum.algorithm.rawValue)
        }
        return etag
    }

    /// Every part of an upload (ListParts, page by page).
    /// - Parameter checksum: The algorithm whose per-part checksums to read.
    func listParts(
        bucket: String, key: String, uploadId: String, checksum: S3ChecksumAlgorithm?, policy: RetryPolicy
    ) async throws(S3Error) -> S3ListedParts {
        var result = S3ListedParts(parts: [], checksumAlgorithm: nil)
        var marker = 0
        while true {
            var query: [(name: String, value: String)] = [("uploadId", uploadId)]
            if marker > 0 { query.append(("part-number-marker", String(marker))) }
            let (_, body) = try await send(policy: policy) {
                makeRequest(method: "GET", bucket: bucket, key: key, query: query, credentials: $0)
            }
            let page = try Self.parsePartsPage(body, checksum: checksum, marker: marker)
            if let algorithm = page.checksumAlgorithm { result.checksumAlgorithm = algorithm }
            result.parts += page.parts
            guard let next = page.nextMarker else { return result }
            marker = next
        }
    }

    /// One page of a ListParts answer read after `marker`: its parts, its checksum algorithm, and the marker of the
    /// next page (nil on the last); a truncated page that does not advance past `marker` is an error.
    package static func parsePartsPage(_ body: Data, checksum: S3ChecksumAlgorithm?, marker: Int) throws(S3Error)
        -> (parts: [S3ListedPart], checksumAlgorithm: String?, nextMarker: Int?)
    {
        let root = try S3XMLParser.parse(body)
        guard root.name == "ListPartsResult" else {
            throw .malformedResponse("expected <ListPartsResult>, got <\(root.name)>")
        }
        var algorithm: String?
        if let text = root.child("ChecksumAlgorithm")?.text, !text.isEmpty { algorithm = text }
        var parts: [S3ListedPart] = []
        var last = marker
        for element in root.children("Part") {
            guard let number = Int(try element.requiredText("PartNumber")),
                let size = Int64(try element.requiredText("Size"))
            else { throw .malformedResponse("a ListParts part without a number or a size") }
            let etag = S3ETag.unquoted(try element.requiredText("ETag"))
            let value = checksum.flatMap { element.child($0.xmlElement)?.text }
            parts.append(S3ListedPart(number: number, etag: etag, size: size, checksum: value))
            last = max(last, number)
        }
        guard root.child("IsTruncated")?.text == "true" else { return (parts, algorithm, nil) }
        let next = root.child("NextPartNumberMarker").flatMap { Int($0.text) } ?? last
        guard next > marker else { throw .malformedResponse("ListParts is truncated but does not advance") }
        return (parts, algorithm, next)
    }

    /// What CompleteMultipartUpload answered.
    package struct CompletedUpload: Sendable, Hashable {
        package var etag: String
        /// The object's checksums from the result document (a composite one ends in `-N`).
        package var checksums: [S3ChecksumAlgorithm: String]
    }

    /// The body of CompleteMultipartUpload: each part's number, quoted ETag and checksum, in the order given.
    package static func completionDocument(_ parts: [S3PartToComplete]) -> String {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            xml += "<Part><PartNumber>\(part.number)</PartNumber>"
            xml += "<ETag>\(Self.xmlEscape(S3ETag.quoted(part.etag)))</ETag>"
            if let checksum = part.checksum {
                let element = checksum.algorithm.xmlElement
                xml += "<\(element)>\(Self.xmlEscape(checksum.base64))</\(element)>"
            }
            xml += "</Part>"
        }
        return xml + "</CompleteMultipartUpload>"
    }

    /// CompleteMultipartUpload with the parts' checksums, a full-object checksum and `If-None-Match: *`.
    ///
    /// A `200` whose document is an `<Error>` counts as a failure of the service (retried); a
    /// `409 ConditionalRequestConflict` is retried, as AWS asks.
    /// - Parameters:
    ///   - fullObject: The full-object checksum to verify (`x-amz-checksum-type: FULL_OBJECT`), nil for none.
    ///   - attempts: Counts the attempts made (to tell whether an earlier attempt may have been applied).
    func completeUpload(
        bucket: String, key: String, uploadId: String, parts: [S3PartToComplete], fullObject: S3ChecksumValue?,
        ifNoneMatch: Bool, policy: RetryPolicy, attempts: inout Int
    ) async throws(S3Error) -> CompletedUpload {
        let payload = Data(Self.completionDocument(parts).utf8)
        var headers: [(name: String, value: String)] = [("content-type", "application/xml")]
        if let fullObject {
            headers.append((fullObject.headerName, fullObject.base64))
            headers.append(("x-amz-checksum-type", "FULL_OBJECT"))
        }
        if ifNoneMatch { headers.append(("if-none-match", "*")) }
        let (_, body) = try await send(
            policy: policy, retryingAlso: Self.isConditionalConflict,
            failureIn2xx: { _, body in Self.embeddedError(body) }
        ) { credentials in
            attempts += 1
            return makeRequest(
                method: "POST", bucket: bucket, key: key, query: [("uploadId", uploadId)], headers: headers,
                body: payload, credentials: credentials)
        }
        return try Self.parseCompletion(body)
    }

    /// What a CompleteMultipartUpload answer says: the object's ETag and checksums.
    package static func parseCompletion(_ body: Data) throws(S3Error) -> CompletedUpload {
        let root = try S3XMLParser.parse(body)
        guard root.name == "CompleteMultipartUploadResult" else {
            throw .malformedResponse("expected <CompleteMultipartUploadResult>, got <\(root.name)>")
        }
        var checksums: [S3ChecksumAlgorithm: String] = [:]
        for algorithm in S3ChecksumAlgorithm.allCases {
            if let value = root.child(algorithm.xmlElement)?.text, !value.isEmpty { checksums[algorithm] = value }
        }
        return CompletedUpload(etag: S3ETag.unquoted(root.child("ETag")?.text ?? ""), checksums: checksums)
    }

    /// The error of a 200 response whose document is an `<Error>` (S3 sends one when CompleteMultipartUpload fails
    /// after the status went out): a failure of the service, so it counts as a 5xx and is retried; nil for any
    /// other body.
    package static func embeddedError(_ body: Data) -> S3Error? {
        // try?: a body that is not XML is no embedded error
        guard let root = try? S3XMLParser.parse(body), root.name == "Error" else { return nil }
        let code = root.child("Code")?.text ?? "InternalError"
        return .service(
            code: code, message: root.child("Message")?.text ?? "", status: 500,
            requestID: root.child("RequestId")?.text)
    }

    /// AbortMultipartUpload; an upload that no longer exists counts as aborted.
    func abortUpload(bucket: String, key: String, uploadId: String, policy: RetryPolicy) async throws(S3Error) {
        do {
            _ = try await send(policy: policy) {
                makeRequest(
                    method: "DELETE", bucket: bucket, key: key, query: [("uploadId", uploadId)], credentials: $0)
            }
        } catch {
            if error.serviceCode == "NoSuchUpload" { return }
            throw error
        }
    }
}
