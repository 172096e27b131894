import FakeS3
import Foundation
import TestSupport
import Testing

/// Multipart parts on disk go to their slots in one file per upload; a completion of parts 1…n of one size takes
/// that file as the object. Every other shape is copied as before.
@Suite("Multipart slots (disk)", .heavy)
struct MultipartSlotTests {
    let partSize = 5 << 20

    func withDiskServer(_ body: (FakeS3Server, S3TestClient, URL) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fakes3-slots-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServer(configure: { $0.storage = .disk(root: root) }) { server, client in
            try await body(server, client, root)
        }
    }

    func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    func tmpFiles(_ root: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("tmp").path)
    }

    @Test func partsOfOneSizeOutOfOrderBecomeTheObjectWithoutACopy() async throws {
        try await withDiskServer { server, client, root in
            let p1 = bytes(partSize, seed: 1)
            let p2 = bytes(partSize, seed: 2)
            let p3 = bytes(1234, seed: 3)
            let session = try await MultipartSession.start(client, key: "big")
            let e2 = try await session.put(2, p2).etag
            let e1 = try await session.put(1, p1).etag
            let e3 = try await session.put(3, p3).etag
            let slotFile = root.appendingPathComponent("tmp/\(session.id).slots").path
            let slotInode = try #require(inode(slotFile))
            let r = try await session.complete([(1, e1), (2, e2), (3, e3)])
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "big") == p1 + p2 + p3)
            // The object's data file is the slot file itself, cut after the last part; its temporary name is gone.
            let objects = root.appendingPathComponent("buckets/photos/objects")
            let data = try #require(
                try FileManager.default.contentsOfDirectory(atPath: objects.path).first { $0.hasSuffix(".data") })
            #expect(inode(objects.appendingPathComponent(data).path) == slotInode)
            #expect(try tmpFiles(root).isEmpty)
        }
    }

    @Test func aReplacedPartAndALargerLastPartAreCopiedRight() async throws {
        try await withDiskServer { server, client, root in
            let p1 = bytes(partSize, seed: 1)
            let p2 = bytes(partSize, seed: 2)
            let p2b = bytes(partSize, seed: 9)
            let p3 = bytes(partSize + 100, seed: 3)
            let session = try await MultipartSession.start(client, key: "mixed")
            let e1 = try await session.put(1, p1).etag
            _ = try await session.put(2, p2)
            // Its slot holds a recorded part: the new part 2 gets a file of its own, and the old one stays whole
            // until the new one is recorded.
            let e2 = try await session.put(2, p2b).etag
            // Larger than the slots: a file of its own.
            let e3 = try await session.put(3, p3).etag
            let r = try await session.complete([(1, e1), (2, e2), (3, e3)])
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "mixed") == p1 + p2b + p3)
            #expect(try tmpFiles(root).isEmpty)
        }
    }

    @Test func completingASubsetCopiesItAndAbortingRemovesTheSlotFile() async throws {
        try await withDiskServer { server, client, root in
            let p1 = bytes(partSize, seed: 1)
            let p2 = bytes(partSize, seed: 2)
            let subset = try await MultipartSession.start(client, key: "subset")
            let e1 = try await subset.put(1, p1).etag
            _ = try await subset.put(2, p2)
            // Part 2 is recorded but not completed: the object is part 1 alone, copied out of the slot file.
            #expect(try await subset.complete([(1, e1)]).status == 200)
            #expect(try server.objectData(bucket: "photos", key: "subset") == p1)
            #expect(try tmpFiles(root).isEmpty)

            let aborted = try await MultipartSession.start(client, key: "aborted")
            _ = try await aborted.put(1, p1)
            #expect(try tmpFiles(root) == ["\(aborted.id).slots"])
            let r = try await client.send("DELETE", "/photos/aborted", query: [("uploadId", aborted.id)])
            #expect(r.status == 204)
            #expect(try tmpFiles(root).isEmpty)
        }
    }

    @Test func aCompletionRefusedByItsConditionLeavesTheUploadToComplete() async throws {
        try await withDiskServer { server, client, _ in
            try server.putObject(bucket: "photos", key: "taken", data: Data("first".utf8))
            let p1 = bytes(partSize, seed: 4)
            let p2 = bytes(10, seed: 5)
            let session = try await MultipartSession.start(client, key: "taken")
            let e1 = try await session.put(1, p1).etag
            let e2 = try await session.put(2, p2).etag
            let refused = try await session.complete([(1, e1), (2, e2)], headers: [("If-None-Match", "*")])
            #expect(refused.status == 412)
            #expect(try server.objectData(bucket: "photos", key: "taken") == Data("first".utf8))
            #expect(try await session.complete([(1, e1), (2, e2)]).status == 200)
            #expect(try server.objectData(bucket: "photos", key: "taken") == p1 + p2)
        }
    }

    @Test func aPartCutOffGivesItsSlotBack() async throws {
        try await withDiskServer { server, client, root in
            let p1 = bytes(partSize, seed: 6)
            let p2 = bytes(300, seed: 7)
            let session = try await MultipartSession.start(client, key: "cut")
            await #expect(throws: TestHTTPClient.ConnectionClosed.self) {
                _ = try await TestHTTPClient.send(
                    port: client.port, method: "PUT", uri: "/photos/cut?partNumber=1&uploadId=\(session.id)",
                    headers: [("x-amz-content-sha256", "UNSIGNED-PAYLOAD")], body: p1,
                    sendBodyPrefixThenClose: 1 << 20)
            }
            // The cut body may still be in the server's hands: part 1 is sent again until it lands in its slot.
            var e1 = ""
            for _ in 0..<50 {
                e1 = try await session.put(1, p1).etag
                let slotFile = root.appendingPathComponent("tmp/\(session.id).slots").path
                var info = stat()
                if stat(slotFile, &info) == 0, info.st_size >= partSize { break }
            }
            let e2 = try await session.put(2, p2).etag
            let slotInode = try #require(inode(root.appendingPathComponent("tmp/\(session.id).slots").path))
            #expect(try await session.complete([(1, e1), (2, e2)]).status == 200)
            #expect(try server.objectData(bucket: "photos", key: "cut") == p1 + p2)
            let objects = root.appendingPathComponent("buckets/photos/objects")
            let data = try #require(
                try FileManager.default.contentsOfDirectory(atPath: objects.path).first { $0.hasSuffix(".data") })
            #expect(inode(objects.appendingPathComponent(data).path) == slotInode)
        }
    }
}
