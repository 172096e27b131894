import FakeS3
import Foundation
import Hashing
import TestSupport
import Testing

@Suite("Multipart upload", .heavy)
struct MultipartUploadTests {
    let partSize = 5 << 20

    func values(_ name: String, in text: String) -> [String] {
        text.components(separatedBy: "<\(name)>").dropFirst().map { String($0.prefix { $0 != "<" }) }
    }

    func create(_ client: S3TestClient, _ key: String) async throws -> String {
        let r = try await client.send("POST", "/photos/\(key)", query: [("uploads", "")])
        #expect(r.status == 200)
        return try #require(values("UploadId", in: r.text).first)
    }

    func upload(_ client: S3TestClient, _ key: String, _ id: String, _ n: Int, _ data: Data) async throws -> String {
        let r = try await client.send(
            "PUT", "/photos/\(key)", query: [("partNumber", String(n)), ("uploadId", id)], body: data,
            payloadHash: "UNSIGNED-PAYLOAD")
        #expect(r.status == 200)
        return try #require(r.header("ETag"))
    }

    func complete(_ client: S3TestClient, _ key: String, _ id: String, _ parts: [(Int, String)]) async throws
        -> TestResponse
    {
        let xml =
            "<CompleteMultipartUpload>"
            + parts.map { "<Part><PartNumber>\($0.0)</PartNumber><ETag>\($0.1)</ETag></Part>" }.joined()
            + "</CompleteMultipartUpload>"
        return try await client.send("POST", "/photos/\(key)", query: [("uploadId", id)], body: Data(xml.utf8))
    }

    @Test func completedUploadHasConcatenatedBytesAndMultipartETag() async throws {
        try await withServer { server, client in
            let p1 = Data(repeating: 1, count: partSize)
            let p2 = Data("tail".utf8)
            let id = try await create(client, "mp")
            let e1 = try await upload(client, "mp", id, 1, p1)
            let e2 = try await upload(client, "mp", id, 2, p2)
            let listed = try await client.send("GET", "/photos/mp", query: [("uploadId", id)])
            #expect(values("PartNumber", in: listed.text) == ["1", "2"])
            let r = try await complete(client, "mp", id, [(1, e1), (2, e2)])
            #expect(r.status == 200)
            let md5s = Data(Insecure.MD5.hash(data: p1)) + Data(Insecure.MD5.hash(data: p2))
            let expected = "\"\(Insecure.MD5.hash(data: md5s).map { String(format: "%02x", $0) }.joined())-2\""
            #expect(values("ETag", in: r.text) == [expected.replacingOccurrences(of: "\"", with: "&quot;")])
            #expect(try server.objectData(bucket: "photos", key: "mp") == p1 + p2)
            let part2 = try await client.send("GET", "/photos/mp", query: [("partNumber", "2")])
            #expect(part2.status == 206)
            #expect(part2.body == p2)
            #expect(part2.header("x-amz-mp-parts-count") == "2")
        }
    }

    @Test func smallNonLastPartIsEntityTooSmall() async throws {
        try await withServer { _, client in
            let id = try await create(client, "mp")
            let e1 = try await upload(client, "mp", id, 1, Data("small".utf8))
            let e2 = try await upload(client, "mp", id, 2, Data("tail".utf8))
            let r = try await complete(client, "mp", id, [(1, e1), (2, e2)])
            #expect(r.errorCode == "EntityTooSmall")
        }
    }

    @Test func partsOutOfOrderAreInvalidPartOrder() async throws {
        try await withServer { _, client in
            let id = try await create(client, "mp")
            let e1 = try await upload(client, "mp", id, 1, Data("a".utf8))
            let e2 = try await upload(client, "mp", id, 2, Data("b".utf8))
            let r = try await complete(client, "mp", id, [(2, e2), (1, e1)])
            #expect(r.errorCode == "InvalidPartOrder")
        }
    }

    @Test func wrongPartETagIsInvalidPart() async throws {
        try await withServer { _, client in
            let id = try await create(client, "mp")
            _ = try await upload(client, "mp", id, 1, Data("a".utf8))
            let r = try await complete(client, "mp", id, [(1, "\"0000\"")])
            #expect(r.errorCode == "InvalidPart")
        }
    }

    @Test func abortedUploadIsGone() async throws {
        try await withServer { server, client in
            let id = try await create(client, "mp")
            _ = try await upload(client, "mp", id, 1, Data("a".utf8))
            let abort = try await client.send("DELETE", "/photos/mp", query: [("uploadId", id)])
            #expect(abort.status == 204)
            let r = try await client.send(
                "PUT", "/photos/mp", query: [("partNumber", "2"), ("uploadId", id)], body: Data("b".utf8))
            #expect(r.errorCode == "NoSuchUpload")
            #expect(try server.objectData(bucket: "photos", key: "mp") == nil)
        }
    }
}
