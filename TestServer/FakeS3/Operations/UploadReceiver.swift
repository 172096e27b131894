import AWSSigV4
import Foundation
import NIOCore

/// Streams an upload's body into storage while computing the digests needed to verify it:
/// MD5 (ETag and `Content-MD5`), SHA-256 (`x-amz-content-sha256`) and any `x-amz-checksum-*`.
///
/// Used on one event loop; not thread-safe. Either ``finish()`` or ``abort()`` ends it.
final class UploadReceiver {
    let sink: UploadSink
    private var digests: BodyDigests
    private let expectedSHA256: String?
    /// The checksum the client announced (header value, base64) or only named (trailer / SDK algorithm).
    let checksumAlgorithm: ChecksumAlgorithm?
    private let announcedChecksum: String?
    private let contentMD5: String?
    private var decoder: AWSChunkedDecoder?
    private var trailerChecksum: String?

    /// Prepares a receiver for `request`, validating the digest headers it can check before the body.
    /// - Parameter required: The checksum every part of the multipart upload carries (a part of another
    ///   algorithm is refused; one without a checksum has it computed here and kept).
    /// - Throws: `InvalidDigest`, `InvalidRequest` (bad or several checksum headers, or another algorithm than
    ///   `required`), `InvalidArgument`.
    init(request: S3Request, signed: SignedRequest?, sink: UploadSink, required: ChecksumAlgorithm? = nil)
        throws(S3Error)
    {
        self.sink = sink
        let payloadHash = signed?.payloadHash ?? SigV4.unsignedPayload
        expectedSHA256 =
            RequestAuthenticator.isValidPayloadHash(payloadHash) && !payloadHash.hasPrefix("STREAMING-")
                && payloadHash != SigV4.unsignedPayload ? payloadHash.lowercased() : nil

        if let md5 = request.header("content-md5") {
            guard let data = Data(base64Encoded: md5), data.count == 16 else { throw .invalidDigest }
            contentMD5 = md5
        } else {
            contentMD5 = nil
        }
        var algorithm: ChecksumAlgorithm?
        var value: String?
        for candidate in ChecksumAlgorithm.allCases {
            guard let v = request.header(candidate.headerName) else { continue }
            if algorithm != nil { throw .invalidRequest("Expecting a single x-amz-checksum- header") }
            guard let d = Data(base64Encoded: v), d.count == candidate.digestLength else {
                throw .invalidRequest("Value for \(candidate.headerName) header is invalid.")
            }
            algorithm = candidate
            value = v
        }
        if algorithm == nil, let trailer = request.header("x-amz-trailer")?.lowercased(),
            trailer.hasPrefix("x-amz-checksum-")
        {
            guard let a = ChecksumAlgorithm(rawValue: String(trailer.dropFirst("x-amz-checksum-".count))) else {
                throw .invalidRequest("The value specified in the x-amz-trailer header is not supported")
            }
            algorithm = a
        }
        if algorithm == nil, let sdk = request.header("x-amz-sdk-checksum-algorithm") {
            guard let a = ChecksumAlgorithm(rawValue: sdk.lowercased()) else {
                throw .invalidRequest("Checksum algorithm provided is unsupported.")
            }
            algorithm = a
        }
        if let required {
            if let algorithm, algorithm != required {
                throw .invalidRequest(
                    "Checksum Type mismatch occurred, expected checksum Type: \(required.rawValue), actual checksum "
                        + "Type: \(algorithm.rawValue)")
            }
            algorithm = required
        }
        checksumAlgorithm = algorithm
        announcedChecksum = value
        digests = BodyDigests(sha256: expectedSHA256 != nil, checksums: algorithm.map { [$0] } ?? [])

        let isChunked =
            payloadHash.hasPrefix("STREAMING-")
            || (request.header("content-encoding")?.lowercased().contains("aws-chunked") ?? false)
        if isChunked {
            decoder = try AWSChunkedDecoder(request: request, signed: signed)
        }
    }

    /// Consumes a piece of the body as received.
    func receive(_ buffer: ByteBuffer) throws(S3Error) {
        if decoder != nil {
            var pieces: [ByteBuffer] = []
            try decoder!.feed(buffer) { pieces.append($0) }
            for piece in pieces { try store(piece) }
        } else {
            try store(buffer)
        }
    }

    private func store(_ buffer: ByteBuffer) throws(S3Error) {
        buffer.withUnsafeReadableBytes { digests.update($0) }
        try sink.write(buffer)
    }

    /// The verified result of an upload.
    struct Verified {
        var size: Int64
        var md5: [UInt8]
        var checksums: [String: String]
    }

    /// Ends the body and verifies every digest the client sent.
    /// - Throws: `BadDigest`, `XAmzContentSHA256Mismatch`, `IncompleteBody`, or a signature error of a chunk.
    func finish() throws(S3Error) -> Verified {
        if decoder != nil {
            let trailers = try decoder!.finish()
            if let algorithm = checksumAlgorithm, let value = trailers[algorithm.headerName] {
                guard let d = Data(base64Encoded: value), d.count == algorithm.digestLength else {
                    throw .invalidRequest("Value for \(algorithm.headerName) trailing header is invalid.")
                }
                trailerChecksum = value
            }
        }
        let result = digests.finalize()
        if let contentMD5, Data(base64Encoded: contentMD5).map(Array.init) != result.md5 { throw .badDigest }
        if let expectedSHA256, expectedSHA256 != result.sha256Hex {
            throw S3Error(
                status: 400, code: "XAmzContentSHA256Mismatch",
                message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
                details: [
                    "ClientComputedContentSHA256": expectedSHA256, "S3ComputedContentSHA256": result.sha256Hex ?? "",
                ])
        }
        var stored: [String: String] = [:]
        if let algorithm = checksumAlgorithm, let computed = result.checksums[algorithm] {
            let computedBase64 = Data(computed).base64EncodedString()
            if let sent = announcedChecksum ?? trailerChecksum, Data(base64Encoded: sent) != Data(computed) {
                throw S3Error(
                    status: 400, code: "BadDigest",
                    message: "The \(algorithm.displayName) you specified did not match the calculated checksum.")
            }
            stored[algorithm.rawValue] = computedBase64
        }
        return Verified(size: sink.count, md5: result.md5, checksums: stored)
    }

    /// Drops whatever was received; nothing becomes visible.
    func abort() { sink.abort() }
}
