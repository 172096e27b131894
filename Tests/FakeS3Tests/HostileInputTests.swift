import FakeS3
import Foundation
import Testing

@Suite("Hostile keys and malformed requests")
struct HostileInputTests {
    @Test func keyOver1024BytesIsKeyTooLongError() async throws {
        try await withServer { _, client in
            let r = try await client.send("PUT", "/photos/" + String(repeating: "k", count: 1025), body: Data("x".utf8))
            #expect(r.status == 400)
            #expect(r.errorCode == "KeyTooLongError")
        }
    }

    @Test(arguments: ["/photos/a/../../etc/passwd", "/photos/..", "/photos//etc/passwd", "/photos/a%00b"])
    func traversalAbsoluteAndNULKeysAreInvalidArgument(uri: String) async throws {
        try await withServer { _, client in
            let r = try await TestHTTPClient.send(
                port: client.port, method: "GET", uri: uri, headers: [], host: client.host)
            #expect(r.status == 400)
            #expect(r.errorCode == "InvalidArgument")
        }
    }

    @Test func invalidUTF8KeyIsInvalidArgument() async throws {
        try await withServer { _, client in
            let r = try await TestHTTPClient.send(port: client.port, method: "GET", uri: "/photos/%C3%28", headers: [])
            #expect(r.errorCode == "InvalidArgument")
        }
    }

    @Test func malformedPercentEscapeIsInvalidURI() async throws {
        try await withServer { _, client in
            let r = try await TestHTTPClient.send(port: client.port, method: "GET", uri: "/photos/%zz", headers: [])
            #expect(r.errorCode == "InvalidURI")
        }
    }

    @Test func hostileKeysNeverTouchFilesOutsideTheRoot() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("fakes3-hostile-\(UUID().uuidString)")
        let root = base.appendingPathComponent("root")
        defer { try? FileManager.default.removeItem(at: base) }
        try await withServer(configure: { $0.storage = .disk(root: root) }) { server, client in
            let uris = ["/photos/..%2F..%2Fescape", "/photos/%2E%2E/escape", "/photos/%2Fescape"]
            for uri in uris {
                let r = try await TestHTTPClient.send(
                    port: client.port, method: "PUT", uri: uri, headers: [], body: Data("x".utf8))
                #expect(r.status >= 400)
            }
            // A key that merely looks like a path is stored under a hashed name inside the root.
            try server.putObject(bucket: "photos", key: "..\\..\\escape:name", data: Data("ok".utf8))
            #expect(try server.objectData(bucket: "photos", key: "..\\..\\escape:name") == Data("ok".utf8))
            let outside = try FileManager.default.contentsOfDirectory(atPath: base.path)
            #expect(outside == ["root"])
            let stored = try FileManager.default.subpathsOfDirectory(atPath: root.path)
            #expect(!stored.contains { $0.contains("escape") })
        }
    }
}
