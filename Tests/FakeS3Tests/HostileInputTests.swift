import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("Hostile keys and malformed requests", .heavy)
struct HostileInputTests {
    @Test func keyOver1024BytesIsKeyTooLongError() async throws {
        try await withServer { _, client in
            let r = try await client.send("PUT", "/photos/" + String(repeating: "k", count: 1025), body: Data("x".utf8))
            #expect(r.status == 400)
            #expect(r.errorCode == "KeyTooLongError")
        }
    }

    @Test func nulInAKeyIsInvalidArgument() async throws {
        try await withServer { _, client in
            let r = try await TestHTTPClient.send(
                port: client.port, method: "GET", uri: "/photos/a%00b", headers: [], host: client.host)
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

    /// S3 accepts keys with `..` segments or a leading `/`; so does the fake server, storing each under a hashed
    /// name inside its root, distinct from every other key, and still there after a restart.
    @Test func keysThatLookLikePathsAreStoredInsideTheRootAndReadBackAfterARestart() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("fakes3-hostile-\(UUID().uuidString)")
        let root = base.appendingPathComponent("root")
        defer { try? FileManager.default.removeItem(at: base) }
        let keys = ["../../escape", "../escape", "/escape", "a/../../etc/passwd", "..", "/etc/passwd", "escape"]
        let configure: (inout FakeS3Configuration) -> Void = { $0.storage = .disk(root: root) }
        try await withServer(configure: configure) { server, client in
            for (index, key) in keys.enumerated() {
                let r = try await client.send("PUT", "/photos/" + key, body: Data("v\(index)".utf8))
                #expect(r.status == 200, "\(key): \(r.status) \(r.text)")
                let back = try await client.send("GET", "/photos/" + key)
                #expect(back.body == Data("v\(index)".utf8), "\(key)")
                #expect(try server.objectData(bucket: "photos", key: key) == Data("v\(index)".utf8), "\(key)")
            }
            try server.putObject(bucket: "photos", key: "..\\..\\escape:name", data: Data("ok".utf8))
            #expect(try server.objectData(bucket: "photos", key: "..\\..\\escape:name") == Data("ok".utf8))
        }
        let outside = try FileManager.default.contentsOfDirectory(atPath: base.path)
        #expect(outside == ["root"], "nothing is written beside the root")
        let stored = try FileManager.default.subpathsOfDirectory(atPath: root.path)
        #expect(!stored.contains { $0.contains("escape") || $0.contains("passwd") }, "\(stored)")
        // A new server on the same root reads every object back under its own key.
        try await withServer(configure: configure, bucket: nil) { server, _ in
            for (index, key) in keys.enumerated() {
                let data = try server.objectData(bucket: "photos", key: key)
                #expect(data == Data("v\(index)".utf8), "\(key)")
            }
        }
    }
}
