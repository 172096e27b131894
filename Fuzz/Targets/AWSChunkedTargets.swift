import AWSSigV4
import FakeS3
import Foundation
import NIOCore
import NIOHTTP1
import S3Transfer

extension FuzzCatalog {
    /// The fake server's `aws-chunked` body decoder, fed in pieces whose boundaries the input picks. By the first
    /// byte:
    ///
    /// - even: the rest is a body (after the request's settings and the split points): the decoder must not trap
    ///   and must never hand on more bytes than the body holds; one it accepts has the announced decoded length.
    /// - odd: the rest picks a payload, its chunk sizes and a mode (signed chunks through the client's
    ///   `SigV4ChunkSigner`, unsigned, with a checksum trailer); the harness encodes it and feeds it at the chosen
    ///   split points: the decoder must return exactly the payload and the trailer, and refuse the body if one
    ///   byte of a signed chunk's data is changed.
    static let awsChunked = FuzzTarget(
        name: "aws-chunked",
        summary: "fake S3 AWSChunkedDecoder at any split points: encoded payloads decode back, never more bytes",
        maxLength: 8192,
        seeds: { AWSChunkedFuzz.seeds() },
        check: { bytes throws(FuzzFailure) in
            guard let first = bytes.first else { return }
            var reader = FuzzReader(Array(bytes.dropFirst()))
            if first & 1 == 0 {
                try AWSChunkedFuzz.checkArbitrary(&reader)
            } else {
                try AWSChunkedFuzz.checkEncoded(&reader)
            }
        })
}

enum AWSChunkedFuzz {
    static let credentials = ServerRequestFuzz.credentials
    static let authenticator = RequestAuthenticator(credentials: [credentials], region: "us-east-1")
    static let date = ServerRequestFuzz.signingDate

    /// How the body is sent.
    enum Mode: CaseIterable {
        /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: every chunk signed, chained from the request's signature.
        case signed
        /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER` with an `x-amz-checksum-crc32` trailer.
        case unsignedTrailer
        /// `Content-Encoding: aws-chunked` over `UNSIGNED-PAYLOAD`, no trailer.
        case unsigned
    }

    /// A PUT signed by the client's signer for `mode` and authenticated by the server: the request and signature
    /// the decoder starts from.
    static func request(_ mode: Mode, decodedLength: String?) -> (S3Request, SignedRequest?)? {
        let payloadHash =
            switch mode {
            case .signed: SigV4.streamingPayload
            case .unsignedTrailer: "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
            case .unsigned: SigV4.unsignedPayload
            }
        var headers: [(name: String, value: String)] = [("content-encoding", "aws-chunked")]
        if let decodedLength { headers.append(("x-amz-decoded-content-length", decodedLength)) }
        if mode == .unsignedTrailer { headers.append(("x-amz-trailer", "x-amz-checksum-crc32")) }
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1")
        let signed = signer.sign(
            method: "PUT", path: "/photos/chunked", host: "127.0.0.1:9000", headers: headers,
            payloadHash: payloadHash, date: date)
        let head = HTTPRequestHead(
            version: .http1_1, method: .PUT, uri: "/photos/chunked",
            headers: HTTPHeaders([("Host", "127.0.0.1:9000")] + headers + signed))
        guard let request = try? S3Request(head: head, virtualHostSuffixes: []),
            case .signed(let signature) = try? authenticator.authenticate(request, now: date)
        else { return nil }
        return (request, signature)
    }

    /// Feeds `body` to `decoder` cut at `cuts` (offsets, in any order, any number); returns the decoded bytes, or
    /// the error that ended it.
    static func decode(_ decoder: inout AWSChunkedDecoder, _ body: [UInt8], cuts: [Int]) -> Result<
        (payload: [UInt8], trailers: [String: String]), FakeS3.S3Error
    > {
        let points = ([0, body.count] + cuts.map { $0 % (body.count + 1) }).sorted()
        var out: [UInt8] = []
        do {
            for (start, end) in zip(points, points.dropFirst()) {
                try decoder.feed(ByteBuffer(bytes: body[start..<end])) { out += $0.readableBytesView }
            }
            return .success((out, try decoder.finish()))
        } catch {
            return .failure(error)
        }
    }

    static func checkArbitrary(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let mode = Mode.allCases[Int(reader.byte()) % Mode.allCases.count]
        let announced = reader.byte() % 4 == 0 ? nil : String(reader.uint32() % 4096)
        let cuts = (0..<(reader.byte() % 8)).map { _ in Int(reader.byte()) << 4 | Int(reader.byte() & 0xF) }
        var body: [UInt8] = []
        while !reader.isAtEnd { body.append(reader.byte()) }
        // The streaming modes need a decoded length; plain aws-chunked may go without.
        let header = announced ?? (mode == .unsigned ? nil : "0")
        guard let (request, signed) = request(mode, decodedLength: header),
            var decoder = try? AWSChunkedDecoder(request: request, signed: signed)
        else { throw FuzzFailure("the harness's own \(mode) request was refused") }
        var emitted = 0
        let points = ([0, body.count] + cuts.map { $0 % (body.count + 1) }).sorted()
        do {
            for (start, end) in zip(points, points.dropFirst()) {
                try decoder.feed(ByteBuffer(bytes: body[start..<end])) { emitted += $0.readableBytes }
                try expect(emitted <= end, "decoded \(emitted) bytes out of the first \(end) of the body")
            }
            _ = try decoder.finish()
            if let header { try expect(String(emitted) == header, "accepted \(emitted) bytes, \(header) announced") }
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            return  // refused: fine
        }
    }

    static func checkEncoded(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let mode = Mode.allCases[Int(reader.byte()) % Mode.allCases.count]
        var sizes: [Int] = []
        for _ in 0..<(1 + reader.byte() % 6) { sizes.append(1 + Int(reader.byte()) * 4 + Int(reader.byte() % 4)) }
        let corrupt = reader.byte() % 4 == 0 ? Int(reader.uint32()) : nil
        let cuts = (0..<(reader.byte() % 12)).map { _ in Int(reader.uint32() % 65_536) }
        var payload: [UInt8] = []
        while !reader.isAtEnd { payload.append(reader.byte()) }
        guard let (request, signed) = request(mode, decodedLength: String(payload.count)),
            var decoder = try? AWSChunkedDecoder(request: request, signed: signed)
        else { throw FuzzFailure("the harness's own \(mode) request was refused") }

        // Chunks of the sizes picked, cycled, then the empty one that ends the body.
        var chunks: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset < payload.count {
            let n = min(sizes[chunks.count % sizes.count], payload.count - offset)
            chunks.append(payload[offset..<(offset + n)])
            offset += n
        }
        chunks.append([])
        var chain =
            mode == .signed
            ? SigV4ChunkSigner(
                secret: credentials.secretAccessKey, amzDate: signed!.amzDate, region: signed!.region,
                service: signed!.service, seedSignature: signed!.signature) : nil
        var body: [UInt8] = []
        var dataOffsets: [Int] = []
        for chunk in chunks {
            var line = String(chunk.count, radix: 16)
            if chain != nil { line += ";chunk-signature=" + chain!.nextSignature(for: chunk) }
            body += Array((line + "\r\n").utf8)
            dataOffsets += body.count..<(body.count + chunk.count)
            body += chunk
            if !chunk.isEmpty { body += Array("\r\n".utf8) }
        }
        let checksum = "x-amz-checksum-crc32:" + S3ChecksumAlgorithm.crc32.checksum(of: Data(payload))
        if mode == .unsignedTrailer { body += Array((checksum + "\r\n").utf8) }
        body += Array("\r\n".utf8)

        if let corrupt, mode == .signed, !dataOffsets.isEmpty {
            body[dataOffsets[corrupt % dataOffsets.count]] ^= UInt8(1 + (corrupt >> 24) % 255)
            if case .success = decode(&decoder, body, cuts: cuts) {
                throw FuzzFailure("a signed body with a changed data byte was accepted (chunks \(sizes))")
            }
            return
        }
        switch decode(&decoder, body, cuts: cuts) {
        case .failure(let error):
            throw FuzzFailure("\(mode) body of \(payload.count) bytes in chunks \(sizes), cut at \(cuts): \(error)")
        case .success(let (decoded, trailers)):
            try expect(decoded == payload, "\(mode): decoded \(decoded.count) bytes, not the \(payload.count) encoded")
            if mode == .unsignedTrailer {
                let value = String(checksum.dropFirst("x-amz-checksum-crc32:".count))
                try expect(trailers == ["x-amz-checksum-crc32": value], "trailers \(trailers)")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for mode: UInt8 in 0..<3 {
            // Encoded: two sizes, no corruption, three cuts, a payload.
            seeds.append(
                [1, mode, 2, 1, 0, 0, 3, 1, 3] + [0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 1, 0] + Array("hello, chunks".utf8))
            seeds.append([1, mode, 1, 0, 1, 0, 0, 0, 0, 1, 1] + Array(repeating: 0x5A, count: 40))
        }
        seeds.append([1, 0, 1, 2, 0, 0, 0, 0, 0, 9, 0] + Array("corrupt me".utf8))
        // Arbitrary bodies: a real unsigned one and broken ones.
        seeds.append([0, 2, 1, 0, 0, 0, 5, 1, 0, 2] + Array("5\r\nhello\r\n0\r\n\r\n".utf8))
        seeds.append([0, 1, 1, 0, 0, 0, 5, 0] + Array("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n".utf8))
        seeds.append(
            [0, 0, 1, 0, 0, 0, 3, 0] + Array("3;chunk-signature=00\r\nabc\r\n0;chunk-signature=00\r\n\r\n".utf8))
        seeds.append([0, 2, 0, 0] + Array(";a\r\nfffffffffffffff\r\n-1\r\n\r\r\r\n".utf8))
        return seeds
    }
}
