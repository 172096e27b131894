import Foundation
import Hashing
import TestSupport

@testable import S3Transfer

/// Serves one object the way S3 does for GET/HEAD: ETag (MD5), Range → 206 with Content-Range,
/// If-Match → 412 on another ETag.
struct ObjectResponder: Sendable {
    var data: Data
    var etag: String

    init(data: Data) {
        self.data = data
        etag = Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    func respond(_ request: ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Response {
        if let ifMatch = request.headers["if-match"], S3ETag.unquoted(ifMatch) != etag {
            return .init(
                status: 412, body: Data("<Error><Code>PreconditionFailed</Code><Message>x</Message></Error>".utf8))
        }
        var headers: [(String, String)] = [("ETag", "\"\(etag)\""), ("Last-Modified", "Wed, 01 May 2024 10:20:30 GMT")]
        if let range = request.headers["range"], range.hasPrefix("bytes=") {
            let spec = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            let start = Int(spec[0]) ?? 0
            let end = spec.count > 1 && !spec[1].isEmpty ? min(Int(spec[1])! + 1, data.count) : data.count
            guard start < data.count else { return .init(status: 416) }
            headers.append(("Content-Range", "bytes \(start)-\(end - 1)/\(data.count)"))
            return .init(status: 206, headers: headers, body: data.subdata(in: start..<end))
        }
        if request.method == "HEAD" {
            headers.append(("Content-Length", String(data.count)))
            return .init(status: 200, headers: headers)
        }
        return .init(status: 200, headers: headers, body: data)
    }
}

/// Deterministic pseudo-random bytes.
func testBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        out[i] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return Data(out)
}

/// The folder that holds every temporary folder of this test process; removed when the process exits, so that
/// a test that returns early (or fails) leaves nothing behind in the system's temporary directory.
let testFolderRoot: URL = {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("s3transfer-tests-\(getpid())")
    atexit { try? FileManager.default.removeItem(at: testFolderRoot) }
    return root
}()

/// A fresh temporary directory (inside ``testFolderRoot``).
func makeTempDirectory() throws -> URL {
    let url = testFolderRoot.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
