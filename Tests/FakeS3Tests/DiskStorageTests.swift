import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("Disk storage", .heavy)
struct DiskStorageTests {
    func temporaryRoot() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fakes3-disk-\(UUID().uuidString)")
    }

    @Test func objectsAndMetadataSurviveARestart() async throws {
        let root = temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        var etag = ""
        try await withServer(configure: { $0.storage = .disk(root: root) }) { _, client in
            let r = try await client.send(
                "PUT", "/photos/originals/a.png",
                headers: [("Content-Type", "image/png"), ("x-amz-meta-pixel-width", "12")],
                body: Data("png bytes".utf8))
            etag = r.header("ETag") ?? ""
        }
        try await withServer(configure: { $0.storage = .disk(root: root) }, bucket: nil) { server, client in
            let r = try await client.send("GET", "/photos/originals/a.png")
            #expect(r.status == 200)
            #expect(r.body == Data("png bytes".utf8))
            #expect(r.header("ETag") == etag)
            #expect(r.header("Content-Type") == "image/png")
            #expect(r.header("x-amz-meta-pixel-width") == "12")
            #expect(try server.objectData(bucket: "photos", key: "originals/a.png") == Data("png bytes".utf8))
        }
    }

    @Test func aRestartKeepsObjectsWithTheirDataAndDropsWhatHalfAWriteLeft() async throws {
        let root = temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServer(configure: { $0.storage = .disk(root: root) }) { server, _ in
            for i in 0..<40 { try server.putObject(bucket: "photos", key: "k\(i)", data: Data("object \(i)".utf8)) }
        }
        // A crash between the steps of a write: a data file without its sidecar, a sidecar without its data.
        let objects = root.appendingPathComponent("buckets/photos/objects")
        let stray = objects.appendingPathComponent("stray.data")
        try Data("stray".utf8).write(to: stray)
        let names = try FileManager.default.contentsOfDirectory(atPath: objects.path)
        let lost = try #require(names.first { $0.hasSuffix(".data") && $0 != "stray.data" })
        try FileManager.default.removeItem(at: objects.appendingPathComponent(lost))
        try await withServer(configure: { $0.storage = .disk(root: root) }, bucket: nil) { _, client in
            var served = 0
            for i in 0..<40 {
                let r = try await client.send("GET", "/photos/k\(i)")
                if r.status == 200 {
                    #expect(r.body == Data("object \(i)".utf8))
                    served += 1
                } else {
                    #expect(r.status == 404)
                }
            }
            #expect(served == 39, "every object whose data is there, and only those")
            #expect(!FileManager.default.fileExists(atPath: stray.path), "a data file no sidecar names is removed")
        }
    }

    @Test func rangedReadsAndOverwritesWorkOnDisk() async throws {
        let root = temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServer(configure: { $0.storage = .disk(root: root) }) { server, client in
            let data = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("Range", "bytes=100000-199999")])
            #expect(r.body == data[100_000..<200_000])
            try server.putObject(bucket: "photos", key: "k", data: Data("small".utf8))
            #expect(try await client.send("GET", "/photos/k").body == Data("small".utf8))
            // The replaced object's data file is gone: one data file, one sidecar.
            let files = try FileManager.default.contentsOfDirectory(
                atPath: root.appendingPathComponent("buckets/photos/objects").path)
            #expect(files.filter { $0.hasSuffix(".data") }.count == 1)
            #expect(files.filter { $0.hasSuffix(".json") }.count == 1)
        }
    }

    @Test func clientDisconnectingMidUploadLeavesNothingVisible() async throws {
        let root = temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServer(configure: { $0.storage = .disk(root: root) }) { server, client in
            let body = Data(count: 1_000_000)
            await #expect(throws: TestHTTPClient.ConnectionClosed.self) {
                _ = try await TestHTTPClient.send(
                    port: client.port, method: "PUT", uri: "/photos/partial",
                    headers: [("x-amz-content-sha256", "UNSIGNED-PAYLOAD")], body: body,
                    sendBodyPrefixThenClose: 400_000)
            }
            // The server answers later requests on other connections in order; by the time this
            // listing is answered, the aborted connection's close has been processed or not — either
            // way the object must not be visible.
            let list = try await client.send("GET", "/photos", query: [("list-type", "2")])
            #expect(!list.text.contains("partial"))
            #expect(try server.objectData(bucket: "photos", key: "partial") == nil)
        }
        // After a restart the temp folder is empty too.
        try await withServer(configure: { $0.storage = .disk(root: root) }, bucket: nil) { _, _ in
            let tmp = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("tmp").path)
            #expect(tmp.isEmpty)
        }
    }

    @Test func largeObjectIsServedInFullFromDisk() async throws {
        let root = temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServer(configure: { $0.storage = .disk(root: root) }) { server, client in
            var data = Data(repeating: 0x5A, count: 3_000_000)
            for i in stride(from: 0, to: data.count, by: 4099) { data[i] = UInt8(truncatingIfNeeded: i) }
            try server.putObject(bucket: "photos", key: "big", data: data)
            let r = try await client.send("GET", "/photos/big")
            #expect(r.body.count == data.count)
            #expect(r.body == data)
        }
    }
}
