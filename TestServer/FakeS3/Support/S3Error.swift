import Foundation

/// An S3 error response: the HTTP status and the `<Error>` document's code and message.
///
/// Every failure the server reports to a client is one of these; the seeding API throws them too,
/// so a test sees the same code (`NoSuchBucket`, `InvalidArgument`, …) a client would.
public struct S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status code.
    public var status: Int
    /// The S3 error code, e.g. `NoSuchKey`.
    public var code: String
    /// A human-readable message.
    public var message: String
    /// Extra elements of the error document (e.g. `StringToSign` for `SignatureDoesNotMatch`).
    public var details: [String: String]
    /// Extra response headers (e.g. `Retry-After`, `Content-Range`).
    var headers: [String: String] = [:]

    /// - Parameters:
    ///   - status: HTTP status code.
    ///   - code: S3 error code.
    ///   - message: Human-readable message.
    ///   - details: Extra elements of the error document.
    public init(status: Int, code: String, message: String, details: [String: String] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code) (\(status)): \(message)" }

    /// The `<Error>` XML document.
    func xml(resource: String, requestID: String) -> String {
        var x = XMLWriter()
        x.open("Error", namespace: false)
        x.element("Code", code)
        x.element("Message", message)
        for name in details.keys.sorted() { x.element(name, details[name]!) }
        x.element("Resource", resource)
        x.element("RequestId", requestID)
        x.close("Error")
        return x.document
    }
}

extension S3Error {
    static func noSuchBucket(_ bucket: String) -> S3Error {
        S3Error(
            status: 404, code: "NoSuchBucket", message: "The specified bucket does not exist",
            details: ["BucketName": bucket])
    }
    static func noSuchKey(_ key: String) -> S3Error {
        S3Error(status: 404, code: "NoSuchKey", message: "The specified key does not exist.", details: ["Key": key])
    }
    static func invalidArgument(_ message: String, name: String? = nil, value: String? = nil) -> S3Error {
        var details: [String: String] = [:]
        if let name { details["ArgumentName"] = name }
        if let value { details["ArgumentValue"] = value }
        return S3Error(status: 400, code: "InvalidArgument", message: message, details: details)
    }
    static func invalidRequest(_ message: String) -> S3Error {
        S3Error(status: 400, code: "InvalidRequest", message: message)
    }
    static func accessDenied(_ message: String = "Access Denied") -> S3Error {
        S3Error(status: 403, code: "AccessDenied", message: message)
    }
    static let internalError = S3Error(
        status: 500, code: "InternalError", message: "We encountered an internal error. Please try again.")
    static let notImplemented = S3Error(
        status: 501, code: "NotImplemented",
        message: "A header or query you provided implies functionality that is not implemented.")
    static let methodNotAllowed = S3Error(
        status: 405, code: "MethodNotAllowed", message: "The specified method is not allowed against this resource.")
    static let malformedXML = S3Error(
        status: 400, code: "MalformedXML",
        message: "The XML you provided was not well-formed or did not validate against our published schema.")
    static let badDigest = S3Error(
        status: 400, code: "BadDigest", message: "The Content-MD5 you specified did not match what we received.")
    static let invalidDigest = S3Error(
        status: 400, code: "InvalidDigest", message: "The Content-MD5 you specified is not valid.")
    static let preconditionFailed = S3Error(
        status: 412, code: "PreconditionFailed",
        message: "At least one of the pre-conditions you specified did not hold")
    static let notModified = S3Error(status: 304, code: "NotModified", message: "Not Modified")
    static let invalidURI = S3Error(status: 400, code: "InvalidURI", message: "Couldn't parse the specified URI.")
    static let keyTooLong = S3Error(status: 400, code: "KeyTooLongError", message: "Your key is too long")
    static let invalidBucketName = S3Error(
        status: 400, code: "InvalidBucketName", message: "The specified bucket is not valid.")
    static func invalidRange(size: Int64) -> S3Error {
        var e = S3Error(
            status: 416, code: "InvalidRange", message: "The requested range is not satisfiable",
            details: ["ActualObjectSize": String(size)])
        e.headers["Content-Range"] = "bytes */\(size)"
        return e
    }
    static func slowDown(retryAfter: Int?) -> S3Error {
        var e = S3Error(status: 503, code: "SlowDown", message: "Please reduce your request rate.")
        if let retryAfter { e.headers["Retry-After"] = String(retryAfter) }
        return e
    }
}
