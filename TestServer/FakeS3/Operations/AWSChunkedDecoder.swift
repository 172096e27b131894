import AWSSigV4
import Hashing
import NIOCore

/// Decodes an `aws-chunked` body (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`, `…-TRAILER`,
/// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`), verifying each chunk's signature in the signed modes and
/// collecting trailing headers (`x-amz-checksum-*`).
///
/// Fed incrementally; holds at most one chunk-header line, never a chunk's data.
package struct AWSChunkedDecoder {
    private enum State {
        case header
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    private var state = State.header
    private var line: [UInt8] = []
    private var signed: Bool
    private var signingKey: SymmetricKey?
    private var previousSignature = ""
    private var amzDate = ""
    private var scope = ""
    private var chunkHash = SHA256()
    private var chunkSignature: String?
    private var decodedCount: Int64 = 0
    private let decodedLength: Int64?
    private var trailers: [String: String] = [:]

    package init(request: S3Request, signed: SignedRequest?) throws(S3Error) {
        let mode = signed?.payloadHash ?? ""
        self.signed = mode.hasPrefix("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
        if let raw = request.header("x-amz-decoded-content-length") {
            guard let n = Int64(raw), n >= 0 else {
                throw .invalidArgument(
                    "x-amz-decoded-content-length is not a valid length", name: "x-amz-decoded-content-length")
            }
            decodedLength = n
        } else if mode.hasPrefix("STREAMING-") {
            throw S3Error(
                status: 411, code: "MissingContentLength",
                message: "You must provide the x-amz-decoded-content-length header for aws-chunked uploads.")
        } else {
            decodedLength = nil
        }
        if self.signed, let signed {
            signingKey = SigV4.signingKey(
                secret: signed.credentials.secretAccessKey, date: String(signed.amzDate.prefix(8)),
                region: signed.region, service: signed.service)
            previousSignature = signed.signature
            amzDate = signed.amzDate
            scope = SigV4.scope(date: String(signed.amzDate.prefix(8)), region: signed.region, service: signed.service)
        }
    }

    private static let malformed = S3Error(
        status: 400, code: "IncompleteBody", message: "The aws-chunked body is malformed or incomplete.")

    /// Consumes encoded bytes, handing decoded data to `emit` in order.
    package mutating func feed(_ buffer: ByteBuffer, emit: (ByteBuffer) -> Void) throws(S3Error) {
        var buffer = buffer
        while buffer.readableBytes > 0 {
            switch state {
            case .header, .trailers:
                guard let byte = buffer.readInteger(as: UInt8.self) else { return }
                if byte == UInt8(ascii: "\n") {
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    let text = String(decoding: line, as: UTF8.self)
                    line.removeAll(keepingCapacity: true)
                    if case .header = state { try startChunk(text) } else { try trailerLine(text) }
                } else {
                    line.append(byte)
                    if line.count > 8192 { throw Self.malformed }
                }
            case .data(let remaining):
                let n = min(remaining, buffer.readableBytes)
                let slice = buffer.readSlice(length: n)!
                if signed { slice.withUnsafeReadableBytes { chunkHash.update(bufferPointer: $0) } }
                decodedCount += Int64(n)
                emit(slice)
                if remaining == n {
                    try endChunk()
                    state = .dataEnd
                } else {
                    state = .data(remaining: remaining - n)
                }
            case .dataEnd:
                guard let byte = buffer.readInteger(as: UInt8.self) else { return }
                if byte == UInt8(ascii: "\r") { continue }
                guard byte == UInt8(ascii: "\n") else { throw Self.malformed }
                state = .header
            case .done:
                // Bytes after the final CRLF are ignored, as S3 does.
                return
            }
        }
    }

    private mutating func startChunk(_ text: String) throws(S3Error) {
        if text.isEmpty { return }  // tolerate a stray blank line between chunks
        // Empty pieces kept: ";b" has no size (it is not a chunk of 0xb bytes).
        let parts = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        guard let sizeText = parts.first, let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16),
            size >= 0
        else { throw Self.malformed }
        chunkSignature = nil
        if parts.count == 2 {
            let ext = parts[1].trimmingCharacters(in: .whitespaces)
            if ext.hasPrefix("chunk-signature=") { chunkSignature = String(ext.dropFirst("chunk-signature=".count)) }
        }
        if signed && chunkSignature == nil { throw Self.malformed }
        chunkHash = SHA256()
        if size == 0 {
            try endChunk()
            state = .trailers
        } else {
            state = .data(remaining: size)
        }
    }

    private mutating func endChunk() throws(S3Error) {
        guard signed, let key = signingKey else { return }
        let hash = SigV4.hex(chunkHash.finalize())
        let toSign = [
            "AWS4-HMAC-SHA256-PAYLOAD", amzDate, scope, previousSignature, SigV4.emptyPayloadHash, hash,
        ].joined(separator: "\n")
        let expected = SigV4.signature(toSign, key: key)
        guard SigV4.constantTimeEquals(expected, chunkSignature ?? "") else {
            throw S3Error(
                status: 403, code: "SignatureDoesNotMatch",
                message: "The chunk signature we calculated does not match the signature you provided.")
        }
        previousSignature = expected
    }

    private mutating func trailerLine(_ text: String) throws(S3Error) {
        if text.isEmpty {
            state = .done
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw Self.malformed }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        trailers[name] = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// Checks the body ended properly and had the announced decoded length.
    /// - Returns: The trailing headers (lower-cased names).
    package mutating func finish() throws(S3Error) -> [String: String] {
        switch state {
        case .done: break
        case .trailers where line.isEmpty: break  // trailer section ended with the stream
        default: throw Self.malformed
        }
        if let decodedLength, decodedLength != decodedCount {
            throw S3Error(
                status: 400, code: "IncompleteBody",
                message: "You did not provide the number of bytes specified by the x-amz-decoded-content-length header."
            )
        }
        return trailers
    }
}
