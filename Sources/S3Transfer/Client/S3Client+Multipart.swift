import Foundation

/// One uploaded part, as CompleteMultipartUpload wants it.
public struct S3CompletedPart: Sendable, Hashable {
    /// The part number (1…10000).
    public var partNumber: Int
    /// The ETag UploadPart returned.
    public var etag: String

    /// - Parameters:
    ///   - partNumber: The part number.
    ///   - etag: The part's ETag.
    public init(partNumber: Int, etag: String) {
        self.partNumber = partNumber
        self.etag = etag
    }
}

extension S3Client {
    /// Starts a multipart upload.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - contentType: The `Content-Type` to store.
    ///   - metadata: User metadata.
    /// - Returns: The upload id.
    public func createMultipartUpload(
        bucket: String, key: String, contentType: String? = nil, metadata: [String: String] = [:]
    ) async throws(S3Error) -> String {
        var headers: [(name: String, value: String)] = []
        if let contentType { headers.append(("content-type", contentType)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            headers.append(("x-amz-meta-\(name.lowercased())", value))
        }
        let (_, body) = try await send {
            makeRequest(
                method: "POST", bucket: bucket, key: key, query: [("uploads", "")], headers: headers, body: Data())
        }
        let root = try S3XMLParser.parse(body)
        guard root.name == "InitiateMultipartUploadResult" else {
            throw .malformedResponse("expected <InitiateMultipartUploadResult>, got <\(root.name)>")
        }
        let id = try root.requiredText("UploadId")
        guard !id.isEmpty else { throw .malformedResponse("empty UploadId") }
        return id
    }

    /// Uploads one part.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - uploadId: From ``createMultipartUpload(bucket:key:contentType:metadata:)``.
    ///   - partNumber: 1…10000.
    ///   - body: The part's bytes (at least 5 MiB except for the last part).
    /// - Returns: The part's ETag.
    public func uploadPart(bucket: String, key: String, uploadId: String, partNumber: Int, body: Data)
        async throws(S3Error) -> String
    {
        let query: [(name: String, value: String)] = [("partNumber", String(partNumber)), ("uploadId", uploadId)]
        let (head, _) = try await send {
            makeRequest(
                method: "PUT", bucket: bucket, key: key, query: query,
                headers: [("content-length", String(body.count))], body: body)
        }
        guard let etag = head["etag"] else { throw .malformedResponse("UploadPart response without an ETag") }
        return S3ETag.unquoted(etag)
    }

    /// Completes a multipart upload.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - uploadId: The upload.
    ///   - parts: Every part, in part-number order.
    /// - Returns: The object's ETag.
    @discardableResult
    public func completeMultipartUpload(bucket: String, key: String, uploadId: String, parts: [S3CompletedPart])
        async throws(S3Error) -> String
    {
        var xml = "<CompleteMultipartUpload>"
        for part in parts {
            xml +=
                "<Part><PartNumber>\(part.partNumber)</PartNumber><ETag>\(Self.xmlEscape(S3ETag.quoted(part.etag)))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let payload = Data(xml.utf8)
        let (_, body) = try await send {
            makeRequest(
                method: "POST", bucket: bucket, key: key, query: [("uploadId", uploadId)],
                headers: [("content-type", "application/xml")], body: payload)
        }
        // S3 can answer 200 with an <Error> body.
        let root = try S3XMLParser.parse(body)
        if root.name == "Error" {
            throw S3Error.fromService(
                code: root.child("Code")?.text ?? "InternalError", message: root.child("Message")?.text ?? "",
                status: 200, requestID: root.child("RequestId")?.text, region: nil)
        }
        guard root.name == "CompleteMultipartUploadResult" else {
            throw .malformedResponse("expected <CompleteMultipartUploadResult>, got <\(root.name)>")
        }
        return S3ETag.unquoted(root.child("ETag")?.text ?? "")
    }

    /// Abandons a multipart upload and frees its parts.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - uploadId: The upload.
    public func abortMultipartUpload(bucket: String, key: String, uploadId: String) async throws(S3Error) {
        _ = try await send { makeRequest(method: "DELETE", bucket: bucket, key: key, query: [("uploadId", uploadId)]) }
    }

    static func xmlEscape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
