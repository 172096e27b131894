import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("GetObject and HeadObject", .heavy)
struct ObjectReadTests {
    let data = Data((0..<1000).map { UInt8($0 % 251) })

    @Test func getReturnsBytesETagAndMetadata() async throws {
        try await withServer { server, client in
            let etag = try server.putObject(
                bucket: "photos", key: "originals/a.png", data: data, contentType: "image/png",
                metadata: ["pixel-width": "640"])
            let r = try await client.send("GET", "/photos/originals/a.png")
            #expect(r.status == 200)
            #expect(r.body == data)
            #expect(r.header("ETag") == etag)
            #expect(r.header("Content-Type") == "image/png")
            #expect(r.header("Content-Length") == "1000")
            #expect(r.header("Accept-Ranges") == "bytes")
            #expect(r.header("x-amz-meta-pixel-width") == "640")
            #expect(r.header("Last-Modified")?.hasSuffix("GMT") == true)
        }
    }

    @Test func headReturnsHeadersWithoutBody() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("HEAD", "/photos/k")
            #expect(r.status == 200)
            #expect(r.header("Content-Length") == "1000")
            #expect(r.body.isEmpty)
        }
    }

    @Test func missingKeyIsNoSuchKey() async throws {
        try await withServer { _, client in
            let r = try await client.send("GET", "/photos/nope")
            #expect(r.status == 404)
            #expect(r.errorCode == "NoSuchKey")
            #expect(r.text.contains("<Resource>/photos/nope</Resource>"))
            #expect(r.text.contains("<RequestId>"))
        }
    }

    @Test(arguments: [
        ("bytes=0-9", 206, 0..<10), ("bytes=990-", 206, 990..<1000), ("bytes=-10", 206, 990..<1000),
        ("bytes=995-2000", 206, 995..<1000), ("bytes=-5000", 206, 0..<1000),
    ])
    func rangeFormsServePartialContent(header: String, status: Int, expected: Range<Int>) async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("Range", header)])
            #expect(r.status == status)
            #expect(r.body == data[expected])
            #expect(r.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/1000")
        }
    }

    @Test(arguments: ["bytes=1000-", "bytes=5000-6000", "bytes=-0"])
    func unsatisfiableRangeIs416(header: String) async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("Range", header)])
            #expect(r.status == 416)
            #expect(r.errorCode == "InvalidRange")
            #expect(r.header("Content-Range") == "bytes */1000")
        }
    }

    @Test func anyRangeOnEmptyObjectIs416() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "empty", data: Data())
            let r = try await client.send("GET", "/photos/empty", headers: [("Range", "bytes=0-")])
            #expect(r.status == 416)
            #expect(r.header("Content-Range") == "bytes */0")
        }
    }

    @Test(arguments: ["bytes=0-1,5-6", "bytes=abc", "items=0-5", "bytes=9-3"])
    func multiOrMalformedRangeServesFullObject(header: String) async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("Range", header)])
            #expect(r.status == 200)
            #expect(r.body == data)
            #expect(r.header("Content-Range") == nil)
        }
    }
}
