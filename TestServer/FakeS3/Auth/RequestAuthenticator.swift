import AWSSigV4
import Essentials
import Foundation
import NIOHTTP1

/// Who sent a request, as established by its signature.
package enum Authentication {
    /// No signature at all.
    case anonymous
    /// A valid SigV4 signature (header or presigned URL).
    case signed(SignedRequest)
}

/// What a verified signature tells the rest of the request's handling.
package struct SignedRequest {
    package var credentials: AWSCredentials
    /// The `x-amz-content-sha256` value: a hex digest to verify, `UNSIGNED-PAYLOAD` or a `STREAMING-…` mode.
    package var payloadHash: String
    package var amzDate: String
    package var region: String
    package var service: String
    /// The request's signature, the seed of an aws-chunked signature chain.
    package var signature: String
}

/// Verifies AWS Signature Version 4 on incoming requests, in both the header and the presigned-URL form.
package struct RequestAuthenticator: Sendable {
    var credentials: [String: AWSCredentials]
    var region: String
    /// Largest accepted difference between the request's time and the server's.
    package var maxSkew: TimeInterval = 15 * 60
    /// Key pairs accepted until they expire (added while the server runs).
    let temporary = TemporaryCredentials()

    package init(credentials: [AWSCredentials], region: String) {
        var byKey: [String: AWSCredentials] = [:]
        for c in credentials { byKey[c.accessKeyID] = c }
        self.credentials = byKey
        self.region = region
    }

    /// Checks the request's signature (not yet its payload hash, which needs the body).
    /// - Throws: `InvalidAccessKeyId`, `SignatureDoesNotMatch`, `RequestTimeTooSkewed`, `AccessDenied`
    ///   (expired presigned URL), `AuthorizationHeaderMalformed`, `AuthorizationQueryParametersError`.
    package func authenticate(_ request: S3Request, now: Date = Date()) throws(S3Error) -> Authentication {
        if let header = request.header("authorization") {
            return .signed(try verifyHeader(header, request, now: now))
        }
        if request.hasQuery("X-Amz-Signature") || request.hasQuery("X-Amz-Algorithm") {
            return .signed(try verifyPresigned(request, now: now))
        }
        if request.hasQuery("Signature") || request.hasQuery("AWSAccessKeyId") {
            return .signed(try SigV2Verifier(credentials: credentials).verifyPresigned(request, now: now))
        }
        return .anonymous
    }

    private func lookup(_ accessKeyID: String, _ request: S3Request) throws(S3Error) -> AWSCredentials {
        if credentials[accessKeyID] == nil, let issued = try temporary.lookup(accessKeyID) {
            try TemporaryCredentials.checkToken(issued, request)
            return issued
        }
        return try Self.lookup(accessKeyID, in: credentials)
    }

    static func lookup(_ accessKeyID: String, in credentials: [String: AWSCredentials]) throws(S3Error)
        -> AWSCredentials
    {
        guard let c = credentials[accessKeyID] else {
            throw S3Error(
                status: 403, code: "InvalidAccessKeyId",
                message: "The AWS Access Key Id you provided does not exist in our records.",
                details: ["AWSAccessKeyId": accessKeyID])
        }
        return c
    }

    private func checkScope(_ auth: SigV4Authorization, amzDate: String, code: String) throws(S3Error) {
        guard auth.region == region else {
            throw S3Error(
                status: 400, code: code,
                message:
                    "The authorization header is malformed; the region '\(auth.region)' is wrong; expecting '\(region)'",
                details: ["Region": region])
        }
        guard auth.service == "s3" else {
            throw S3Error(
                status: 400, code: code,
                message:
                    "The authorization header is malformed; incorrect service '\(auth.service)'. This endpoint belongs to 's3'."
            )
        }
        guard amzDate.hasPrefix(auth.date) else {
            throw S3Error(
                status: 400, code: code,
                message:
                    "The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date."
            )
        }
    }

    private func verifyHeader(_ header: String, _ request: S3Request, now: Date) throws(S3Error) -> SignedRequest {
        if header.hasPrefix("AWS ") {
            return try SigV2Verifier(credentials: credentials).verifyHeader(header, request, now: now)
        }
        guard let auth = SigV4Authorization(header: header) else {
            throw S3Error(
                status: 400, code: "AuthorizationHeaderMalformed",
                message:
                    "The authorization header is malformed; it must be AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…."
            )
        }
        let creds = try lookup(auth.accessKeyID, request)
        let amzDate: String
        let date: Date
        if let value = request.header("x-amz-date") {
            guard let d = SigV4.parseAmzDate(value) else {
                throw .accessDenied("AWS authentication requires a valid Date or x-amz-date header")
            }
            amzDate = value
            date = d
        } else if let value = request.header("date"), let d = HTTPDate.parse(value) {
            amzDate = SigV4.amzDate(d)
            date = d
        } else {
            throw .accessDenied("AWS authentication requires a valid Date or x-amz-date header")
        }
        try checkScope(auth, amzDate: amzDate, code: "AuthorizationHeaderMalformed")
        try checkSkew(date, amzDate: amzDate, now: now)
        guard auth.signedHeaders.contains("host") else {
            throw S3Error(
                status: 403, code: "SignatureDoesNotMatch", message: "The host header must be signed.")
        }
        guard let payloadHash = request.header("x-amz-content-sha256") else {
            throw .invalidRequest("Missing required header for this request: x-amz-content-sha256")
        }
        guard Self.isValidPayloadHash(payloadHash) else {
            throw .invalidArgument(
                "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-… or a valid sha256 value.",
                name: "x-amz-content-sha256", value: payloadHash)
        }
        let query = request.query
        try verifySignature(
            auth, creds: creds, request: request, query: query, amzDate: amzDate, payloadHash: payloadHash)
        return SignedRequest(
            credentials: creds, payloadHash: payloadHash, amzDate: amzDate, region: auth.region,
            service: auth.service, signature: auth.signature)
    }

    private func verifyPresigned(_ request: S3Request, now: Date) throws(S3Error) -> SignedRequest {
        func param(_ name: String) throws(S3Error) -> String {
            guard let v = request.queryValue(name) else {
                throw S3Error(
                    status: 400, code: "AuthorizationQueryParametersError",
                    message:
                        "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."
                )
            }
            return v
        }
        guard try param("X-Amz-Algorithm") == SigV4.algorithm else {
            throw S3Error(
                status: 400, code: "AuthorizationQueryParametersError",
                message: "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
        }
        guard
            let auth = SigV4Authorization(
                credential: try param("X-Amz-Credential"), signedHeaders: try param("X-Amz-SignedHeaders"),
                signature: try param("X-Amz-Signature"))
        else {
            throw S3Error(
                status: 400, code: "AuthorizationQueryParametersError",
                message: "Error parsing the X-Amz-Credential parameter; the Credential is mal-formed.")
        }
        let amzDate = try param("X-Amz-Date")
        guard let date = SigV4.parseAmzDate(amzDate) else {
            throw S3Error(
                status: 400, code: "AuthorizationQueryParametersError",
                message: "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
        }
        guard let expires = Int(try param("X-Amz-Expires")), expires >= 1, expires <= 604_800 else {
            throw S3Error(
                status: 400, code: "AuthorizationQueryParametersError",
                message: "X-Amz-Expires must be a number of seconds between 1 and 604800 (seven days).")
        }
        let creds = try lookup(auth.accessKeyID, request)
        try checkScope(auth, amzDate: amzDate, code: "AuthorizationQueryParametersError")
        if now.timeIntervalSince(date) > TimeInterval(expires) {
            throw S3Error(
                status: 403, code: "AccessDenied", message: "Request has expired",
                details: [
                    "X-Amz-Expires": String(expires), "Expires": HTTPDate.iso8601(date + TimeInterval(expires)),
                    "ServerTime": HTTPDate.iso8601(now),
                ])
        }
        if date.timeIntervalSince(now) > maxSkew {
            throw S3Error(status: 403, code: "AccessDenied", message: "Request is not valid yet")
        }
        let query = request.query.filter { $0.name != "X-Amz-Signature" }
        let payloadHash = request.queryValue("X-Amz-Content-Sha256") ?? SigV4.unsignedPayload
        try verifySignature(
            auth, creds: creds, request: request, query: query, amzDate: amzDate, payloadHash: payloadHash)
        return SignedRequest(
            credentials: creds, payloadHash: SigV4.unsignedPayload, amzDate: amzDate, region: auth.region,
            service: auth.service, signature: auth.signature)
    }

    private func checkSkew(_ date: Date, amzDate: String, now: Date) throws(S3Error) {
        guard abs(date.timeIntervalSince(now)) <= maxSkew else {
            throw S3Error(
                status: 403, code: "RequestTimeTooSkewed",
                message: "The difference between the request time and the current time is too large.",
                details: [
                    "RequestTime": amzDate, "ServerTime": HTTPDate.iso8601(now), "MaxAllowedSkewMilliseconds": "900000",
                ])
        }
    }

    private func verifySignature(
        _ auth: SigV4Authorization, creds: AWSCredentials, request: S3Request,
        query: [(name: String, value: String)], amzDate: String, payloadHash: String
    ) throws(S3Error) {
        var headers: [(name: String, value: String)] = []
        for name in auth.signedHeaders {
            let values = request.headers[name]
            if values.isEmpty {
                throw S3Error(
                    status: 403, code: "SignatureDoesNotMatch",
                    message:
                        "The request signature we calculated does not match the signature you provided. The signed header '\(name)' is missing."
                )
            }
            for value in values { headers.append((name, value)) }
        }
        let canonical = SigV4.canonicalRequestBytes(
            method: request.method, canonicalURI: SigV4.uriEncode(request.path, encodeSlash: false),
            canonicalQuery: query.isEmpty ? "" : SigV4.canonicalQueryString(query), headers: headers,
            payloadHash: payloadHash)
        let expected = SigV4.signatureHex(
            canonicalRequest: canonical.request, amzDate: amzDate, secret: creds.secretAccessKey, date: auth.date,
            region: auth.region, service: auth.service)
        let provided = auth.signature.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        guard SigV4.constantTimeEquals(expected, provided) else {
            // The texts are made only for the error document.
            let canonicalText = String(decoding: canonical.request, as: UTF8.self)
            let toSign = SigV4.stringToSign(canonicalRequest: canonicalText, amzDate: amzDate, scope: auth.scope)
            throw S3Error(
                status: 403, code: "SignatureDoesNotMatch",
                message:
                    "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
                details: [
                    "AWSAccessKeyId": creds.accessKeyID, "StringToSign": toSign, "SignatureProvided": auth.signature,
                    "CanonicalRequest": canonicalText,
                ])
        }
    }

    /// `UNSIGNED-PAYLOAD`, a `STREAMING-…` mode, or 64 hex digits.
    static func isValidPayloadHash(_ value: String) -> Bool {
        if value == SigV4.unsignedPayload || value.hasPrefix("STREAMING-") { return true }
        let bytes = value.utf8
        return bytes.count == 64
            && bytes.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) }
    }
}
