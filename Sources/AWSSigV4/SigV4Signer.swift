import Essentials
package import Foundation
import Hashing

/// Signs S3 requests with AWS Signature Version 4 (header form and presigned URLs).
///
/// A value type; safe to share between threads.
package struct SigV4Signer: Sendable {
    /// The credentials used to sign.
    package var credentials: AWSCredentials
    /// The region in the credential scope (`us-east-1` unless the bucket lives elsewhere).
    package var region: String
    /// The service in the credential scope; `s3` for S3.
    package var service: String

    /// - Parameters:
    ///   - credentials: The key pair (and session token) to sign with.
    ///   - region: The region in the credential scope.
    ///   - service: The service name in the credential scope.
    package init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// Signs a request in the `Authorization` header form.
    ///
    /// - Parameters:
    ///   - method: HTTP method, upper case.
    ///   - path: The decoded path, starting with `/` (for path-style S3, `/bucket/key`).
    ///   - query: Decoded query items.
    ///   - host: The `Host` header value (with `:port` when not the scheme's default).
    ///   - headers: Further headers to sign (e.g. `range`, `if-match`), names in any case.
    ///   - payloadHash: Hex SHA-256 of the body, ``SigV4/unsignedPayload`` or ``SigV4/emptyPayloadHash``.
    ///   - date: The signing time (pass the server-corrected clock after a skew error).
    /// - Returns: The headers to send in addition to `headers`: `Authorization`,
    ///   `x-amz-date`, `x-amz-content-sha256` and, with a session token, `x-amz-security-token`.
    package func sign(
        method: String, path: String, query: [(name: String, value: String)] = [], host: String,
        headers: [(name: String, value: String)] = [], payloadHash: String = SigV4.unsignedPayload,
        date: Date = Date()
    ) -> [(name: String, value: String)] {
        let amzDate = SigV4.amzDate(date)
        let day = String(amzDate.prefix(8))
        var added: [(name: String, value: String)] = [
            ("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash),
        ]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        var all: [(name: String, value: String)] = []
        all.reserveCapacity(1 + headers.count + added.count)
        all.append(("host", host))
        all.append(contentsOf: headers)
        all.append(contentsOf: added)
        let canonical = SigV4.canonicalRequestBytes(
            method: method, canonicalURI: SigV4.uriEncode(path, encodeSlash: false),
            canonicalQuery: query.isEmpty ? "" : SigV4.canonicalQueryString(query), headers: all,
            payloadHash: payloadHash)
        let scope = SigV4.scope(date: day, region: region, service: service)
        var authorization: [UInt8] = []
        authorization.reserveCapacity(200)
        authorization.append(contentsOf: SigV4.algorithm.utf8)
        authorization.append(contentsOf: " Credential=".utf8)
        authorization.append(contentsOf: credentials.accessKeyID.utf8)
        authorization.append(UInt8(ascii: "/"))
        authorization.append(contentsOf: scope.utf8)
        authorization.append(contentsOf: ", SignedHeaders=".utf8)
        authorization.append(contentsOf: canonical.signedHeaders.utf8)
        authorization.append(contentsOf: ", Signature=".utf8)
        authorization.append(
            contentsOf: SigV4.signatureHex(
                canonicalRequest: canonical.request, amzDate: amzDate, secret: credentials.secretAccessKey, date: day,
                region: region, service: service))
        added.insert(("Authorization", String(decoding: authorization, as: UTF8.self)), at: 0)
        return added
    }

    /// Builds a presigned URL's query string (the request is signed with
    /// `UNSIGNED-PAYLOAD` and only the `host` header).
    ///
    /// - Parameters:
    ///   - method: HTTP method, upper case.
    ///   - path: The decoded path, starting with `/`.
    ///   - query: Decoded query items of the request itself (e.g. `response-content-type`).
    ///   - host: The `Host` header value.
    ///   - expires: Validity in seconds (1…604800).
    ///   - date: The signing time.
    /// - Returns: The full, encoded query string to append after `?`.
    package func presignedQuery(
        method: String, path: String, query: [(name: String, value: String)] = [], host: String,
        expires: Int, date: Date = Date()
    ) -> String {
        let amzDate = SigV4.amzDate(date)
        let day = String(amzDate.prefix(8))
        let scope = SigV4.scope(date: day, region: region, service: service)
        var items = query
        items.append(("X-Amz-Algorithm", SigV4.algorithm))
        items.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"))
        items.append(("X-Amz-Date", amzDate))
        items.append(("X-Amz-Expires", String(expires)))
        if let token = credentials.sessionToken { items.append(("X-Amz-Security-Token", token)) }
        items.append(("X-Amz-SignedHeaders", "host"))
        let canonical = SigV4.canonicalRequest(
            method: method, canonicalURI: SigV4.uriEncode(path, encodeSlash: false),
            canonicalQuery: SigV4.canonicalQueryString(items), headers: [("host", host)],
            payloadHash: SigV4.unsignedPayload)
        let toSign = SigV4.stringToSign(canonicalRequest: canonical.request, amzDate: amzDate, scope: scope)
        let key = SigV4.signingKey(secret: credentials.secretAccessKey, date: day, region: region, service: service)
        items.append(("X-Amz-Signature", SigV4.signature(toSign, key: key)))
        return SigV4.canonicalQueryString(items)
    }
}

/// The parts of an `Authorization: AWS4-HMAC-SHA256 …` header.
package struct SigV4Authorization: Sendable, Hashable {
    /// The access key id from `Credential=`.
    package var accessKeyID: String
    /// The day (`yyyyMMdd`) of the credential scope.
    package var date: String
    /// The region of the credential scope.
    package var region: String
    /// The service of the credential scope.
    package var service: String
    /// Lower-case signed header names, in the order given.
    package var signedHeaders: [String]
    /// The hex signature.
    package var signature: String

    /// Parses the header value; nil when it is not a well-formed SigV4 header.
    /// - Parameter header: The `Authorization` header value.
    package init?(header: String) {
        // Read as bytes: every request a server verifies comes through here.
        let prefix = SigV4.algorithm + " "
        guard header.utf8.starts(with: prefix.utf8) else { return nil }
        let rest = Substring(header).utf8.dropFirst(prefix.utf8.count)
        var credential: Substring?
        var signed: Substring?
        var signature: Substring?
        for part in rest.split(separator: UInt8(ascii: ",")) {
            let trimmed = ASCII.trimmingSpaces(Substring(part)).utf8
            guard let eq = trimmed.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let value = Substring(trimmed[trimmed.index(after: eq)...])
            // The last of a repeated field counts.
            switch Substring(trimmed[..<eq]) {
            case "Credential": credential = value
            case "SignedHeaders": signed = value
            case "Signature": signature = value
            default: continue
            }
        }
        guard let credential, let signed, let signature else { return nil }
        self.init(credential: String(credential), signedHeaders: String(signed), signature: String(signature))
    }

    /// Builds from the three fields (as found in a header or a presigned query).
    /// - Parameters:
    ///   - credential: `KEY/yyyyMMdd/region/service/aws4_request`.
    ///   - signedHeaders: `;`-separated lower-case names.
    ///   - signature: Hex signature.
    package init?(credential: String, signedHeaders: String, signature: String) {
        let parts = credential.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map {
            String(Substring($0))
        }
        guard parts.count >= 5, parts.last == "aws4_request" else { return nil }
        // An access key may itself contain '/', so take the scope from the end.
        let n = parts.count
        accessKeyID = parts[0..<(n - 4)].joined(separator: "/")
        date = parts[n - 4]
        region = parts[n - 3]
        service = parts[n - 2]
        self.signedHeaders = signedHeaders.utf8.split(separator: UInt8(ascii: ";")).map { name in
            // Clients send lower-case ASCII names: only another name pays for Unicode case mapping.
            name.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 })
                ? Substring(name).lowercased() : String(Substring(name))
        }
        self.signature = signature
        guard !accessKeyID.isEmpty, date.count == 8, !self.signedHeaders.isEmpty, !signature.isEmpty else {
            return nil
        }
    }

    /// The credential scope.
    package var scope: String { SigV4.scope(date: date, region: region, service: service) }
}

/// Signs (client) or verifies (server) the chunks of an aws-chunked upload
/// (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`).
package struct SigV4ChunkSigner: Sendable {
    private let keyBytes: [UInt8]
    private let amzDate: String
    private let scope: String
    /// The signature of the previous chunk (the seed signature at the start).
    package private(set) var previousSignature: String

    /// - Parameters:
    ///   - secret: The secret access key.
    ///   - amzDate: The request's `x-amz-date`.
    ///   - region: Region of the scope.
    ///   - service: Service of the scope.
    ///   - seedSignature: The signature of the request headers.
    package init(secret: String, amzDate: String, region: String, service: String, seedSignature: String) {
        let day = String(amzDate.prefix(8))
        keyBytes = SigV4.signingKey(secret: secret, date: day, region: region, service: service)
            .withUnsafeBytes { Array($0) }
        self.amzDate = amzDate
        scope = SigV4.scope(date: day, region: region, service: service)
        previousSignature = seedSignature
    }

    /// The signature of the next chunk (an empty chunk ends the stream); advances the chain.
    /// - Parameter chunk: The chunk's bytes.
    package mutating func nextSignature<D: DataProtocol>(for chunk: D) -> String {
        let toSign = [
            "AWS4-HMAC-SHA256-PAYLOAD", amzDate, scope, previousSignature, SigV4.emptyPayloadHash,
            SigV4.sha256Hex(data: chunk),
        ].joined(separator: "\n")
        previousSignature = SigV4.signature(toSign, key: SymmetricKey(data: keyBytes))
        return previousSignature
    }
}
