import NIOCore
import NIOHTTP1

/// A response ready to write: status, headers and a body source.
struct S3Response {
    enum Body {
        /// No body (Content-Length 0 unless a header says otherwise, as for HEAD).
        case empty
        /// A small body in memory (XML).
        case buffer(ByteBuffer)
        /// Part or all of a stored object.
        case object(ObjectBody, range: Range<Int64>)
    }

    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: Body

    init(status: HTTPResponseStatus, headers: HTTPHeaders = HTTPHeaders(), body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// An XML document with status 200 (or `status`).
    static func xml(_ document: String, status: HTTPResponseStatus = .ok) -> S3Response {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/xml")
        return S3Response(status: status, headers: headers, body: .buffer(ByteBuffer(string: document)))
    }

    /// An S3 error document (no body for HEAD and for 304, as S3 does).
    static func error(_ error: S3Error, resource: String, requestID: String, isHead: Bool) -> S3Response {
        var headers = HTTPHeaders()
        for (name, value) in error.headers.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        let status = HTTPResponseStatus(statusCode: error.status)
        if isHead || error.status == 304 {
            return S3Response(status: status, headers: headers)
        }
        headers.add(name: "Content-Type", value: "application/xml")
        let body = ByteBuffer(string: error.xml(resource: resource, requestID: requestID))
        return S3Response(status: status, headers: headers, body: .buffer(body))
    }

    /// Closes the object's file, if the body holds one. Call when the response will not be written.
    func discard() {
        if case .object(.file(let fd), _) = body { POSIX.closeFile(fd) }
    }
}
