import AWSSigV4
import FakeS3
import Foundation
import NIOCore

/// Signs and sends S3 requests to a ``FakeS3Server`` in tests.
struct S3TestClient: Sendable {
    enum Signing: Sendable {
        case header
        case presigned(expires: Int)
        case anonymous
    }

    var port: Int
    var signer: SigV4Signer
    var host: String { "127.0.0.1:\(port)" }

    init(port: Int, accessKey: String = "AKIDTEST", secret: String = "test-secret", region: String = "us-east-1") {
        self.port = port
        signer = SigV4Signer(
            credentials: AWSCredentials(accessKeyID: accessKey, secretAccessKey: secret), region: region)
    }

    /// Sends a request for a decoded `path` (e.g. `/bucket/a b.txt`) with decoded query items.
    func send(
        _ method: String, _ path: String, query: [(name: String, value: String)] = [],
        headers: [(String, String)] = [], body: Data? = nil, signing: Signing = .header,
        payloadHash: String? = nil, date: Date = Date(), host: String? = nil,
        onBodyBytes: (@Sendable (Int, any Channel) -> Void)? = nil
    ) async throws -> TestResponse {
        let host = host ?? self.host
        let encodedPath = SigV4.uriEncode(path, encodeSlash: false)
        var all = headers
        var queryString = SigV4.canonicalQueryString(query)
        switch signing {
        case .header:
            let hash = payloadHash ?? body.map { SigV4.sha256Hex(data: $0) } ?? SigV4.emptyPayloadHash
            let signed = signer.sign(
                method: method, path: path, query: query, host: host,
                headers: headers.map { (name: $0.0, value: $0.1) }, payloadHash: hash, date: date)
            all += signed.map { ($0.name, $0.value) }
        case .presigned(let expires):
            queryString = signer.presignedQuery(
                method: method, path: path, query: query, host: host, expires: expires, date: date)
        case .anonymous:
            break
        }
        let uri = queryString.isEmpty ? encodedPath : encodedPath + "?" + queryString
        return try await TestHTTPClient.send(
            port: port, method: method, uri: uri, headers: all, body: body, host: host, onBodyBytes: onBodyBytes)
    }
}

/// Starts an in-memory server with one key pair and a bucket for the test, and stops it afterwards.
func withServer<R>(
    configure: (inout FakeS3Configuration) -> Void = { _ in }, bucket: String? = "photos",
    _ body: (FakeS3Server, S3TestClient) async throws -> R
) async throws -> R {
    var configuration = FakeS3Configuration(accessKeyID: "AKIDTEST", secretAccessKey: "test-secret")
    configure(&configuration)
    let server = try FakeS3Server(configuration: configuration)
    try await server.start()
    if let bucket { try server.createBucket(bucket) }
    do {
        let result = try await body(server, S3TestClient(port: server.port))
        try await server.stop()
        return result
    } catch {
        try await server.stop()
        throw error
    }
}
