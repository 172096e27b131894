import AWSSigV4
import Essentials
import Foundation
import Hashing

/// Verifies the legacy AWS Signature Version 2 (`Authorization: AWS key:signature`, and presigned
/// URLs with `AWSAccessKeyId`/`Expires`/`Signature`), which older tools — e.g. `aws s3 presign` of
/// the version 1 CLI — still produce.
struct SigV2Verifier {
    var credentials: [String: AWSCredentials]

    /// Sub-resources that are part of the string to sign.
    private static let subresources: Set<String> = [
        "acl", "cors", "delete", "lifecycle", "location", "logging", "notification", "partNumber", "policy",
        "requestPayment", "response-cache-control", "response-content-disposition", "response-content-encoding",
        "response-content-language", "response-content-type", "response-expires", "restore", "tagging", "torrent",
        "uploadId", "uploads", "versionId", "versioning", "versions", "website",
    ]

    func verifyPresigned(_ request: S3Request, now: Date) throws(S3Error) -> SignedRequest {
        guard let key = request.queryValue("AWSAccessKeyId"), let signature = request.queryValue("Signature"),
            let expiresText = request.queryValue("Expires"), let expires = Int(expiresText)
        else {
            throw .accessDenied(
                "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
        }
        let creds = try RequestAuthenticator.lookup(key, in: credentials)
        if now.timeIntervalSince1970 > TimeInterval(expires) {
            throw S3Error(
                status: 403, code: "AccessDenied", message: "Request has expired",
                details: ["Expires": HTTPDate.iso8601(Date(timeIntervalSince1970: TimeInterval(expires)))])
        }
        try verify(signature, creds: creds, request: request, dateLine: expiresText)
        return SignedRequest(
            credentials: creds, payloadHash: SigV4.unsignedPayload, amzDate: SigV4.amzDate(now), region: "",
            service: "s3", signature: signature)
    }

    func verifyHeader(_ header: String, _ request: S3Request, now: Date) throws(S3Error) -> SignedRequest {
        let rest = header.dropFirst(4)
        guard let colon = rest.lastIndex(of: ":") else {
            throw S3Error(
                status: 400, code: "InvalidArgument",
                message: "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature")
        }
        let key = String(rest[..<colon])
        let signature = String(rest[rest.index(after: colon)...])
        let creds = try RequestAuthenticator.lookup(key, in: credentials)
        let dateText = request.header("x-amz-date") ?? request.header("date") ?? ""
        guard let date = HTTPDate.parse(dateText) else {
            throw .accessDenied("AWS authentication requires a valid Date or x-amz-date header")
        }
        guard abs(date.timeIntervalSince(now)) <= 15 * 60 else {
            throw S3Error(
                status: 403, code: "RequestTimeTooSkewed",
                message: "The difference between the request time and the current time is too large.")
        }
        try verify(
            signature, creds: creds, request: request, dateLine: request.header("x-amz-date") != nil ? "" : dateText)
        return SignedRequest(
            credentials: creds, payloadHash: SigV4.unsignedPayload, amzDate: SigV4.amzDate(date), region: "",
            service: "s3", signature: signature)
    }

    private func verify(_ signature: String, creds: AWSCredentials, request: S3Request, dateLine: String)
        throws(S3Error)
    {
        var amzHeaders: [String: [String]] = [:]
        for (name, value) in request.headers {
            let lower = name.lowercased()
            if lower.hasPrefix("x-amz-") {
                amzHeaders[lower, default: []].append(value.trimmingCharacters(in: .whitespaces))
            }
        }
        let canonicalAmz = amzHeaders.keys.sorted().map { "\($0):\(amzHeaders[$0]!.joined(separator: ","))\n" }.joined()
        var resource = ""
        if request.isVirtualHosted, let bucket = request.bucket { resource = "/" + bucket }
        resource += request.rawPath
        let sub = request.query.filter { Self.subresources.contains($0.name) }.sorted { $0.name < $1.name }
        if !sub.isEmpty {
            resource += "?" + sub.map { $0.value.isEmpty ? $0.name : "\($0.name)=\($0.value)" }.joined(separator: "&")
        }
        let toSign =
            [
                request.method, request.header("content-md5") ?? "", request.header("content-type") ?? "", dateLine,
            ].joined(separator: "\n") + "\n" + canonicalAmz + resource
        let mac = HMAC<Insecure.SHA1>.authenticationCode(
            for: Array(toSign.utf8), using: SymmetricKey(data: Array(creds.secretAccessKey.utf8)))
        let expected = Data(mac).base64EncodedString()
        guard SigV4.constantTimeEquals(expected, signature) else {
            throw S3Error(
                status: 403, code: "SignatureDoesNotMatch",
                message:
                    "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
                details: ["AWSAccessKeyId": creds.accessKeyID, "StringToSign": toSign, "SignatureProvided": signature])
        }
    }
}
