import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("Bucket operations", .heavy)
struct BucketTests {
    @Test func createListHeadDeleteBucket() async throws {
        try await withServer(bucket: nil) { _, client in
            let created = try await client.send("PUT", "/albums")
            #expect(created.status == 200)
            let list = try await client.send("GET", "/")
            #expect(list.text.contains("<Name>albums</Name>"))
            #expect(try await client.send("HEAD", "/albums").status == 200)
            #expect(try await client.send("DELETE", "/albums").status == 204)
            let gone = try await client.send("HEAD", "/albums")
            #expect(gone.status == 404)
            #expect(gone.body.isEmpty)
        }
    }

    @Test func creatingExistingBucketIsBucketAlreadyOwnedByYou() async throws {
        try await withServer { _, client in
            let r = try await client.send("PUT", "/photos")
            #expect(r.status == 409)
            #expect(r.errorCode == "BucketAlreadyOwnedByYou")
        }
    }

    @Test func deletingNonEmptyBucketIsBucketNotEmpty() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("x".utf8))
            let r = try await client.send("DELETE", "/photos")
            #expect(r.status == 409)
            #expect(r.errorCode == "BucketNotEmpty")
        }
    }

    @Test(arguments: ["ab", "Upper", "bad_name", "-dash", "a..b", "192.168.1.1"])
    func invalidBucketNameIsRejected(name: String) async throws {
        try await withServer { _, client in
            let r = try await client.send("PUT", "/\(name)")
            #expect(r.status == 400)
            #expect(r.errorCode == "InvalidBucketName")
        }
    }

    @Test func missingBucketIsNoSuchBucket() async throws {
        try await withServer { _, client in
            let r = try await client.send("GET", "/nosuch/key")
            #expect(r.status == 404)
            #expect(r.errorCode == "NoSuchBucket")
        }
    }

    @Test func unsupportedSubresourceIsNotImplemented() async throws {
        try await withServer { _, client in
            let r = try await client.send("GET", "/photos", query: [("acl", "")])
            #expect(r.status == 501)
            #expect(r.errorCode == "NotImplemented")
        }
    }
}
