import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("Conditional GETs, partNumber, response overrides, checksum mode", .heavy)
struct ConditionalRequestTests {
    let data = Data("conditional body".utf8)
    let past = "Sat, 01 Jan 2000 00:00:00 GMT"
    let future = "Fri, 01 Jan 2100 00:00:00 GMT"

    @Test func ifMatchWithOtherETagIs412() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("If-Match", "\"nope\"")])
            #expect(r.status == 412)
            #expect(r.errorCode == "PreconditionFailed")
        }
    }

    @Test func ifMatchWithCurrentETagServes() async throws {
        try await withServer { server, client in
            let etag = try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("If-Match", etag)])
            #expect(r.status == 200)
            #expect(r.body == data)
        }
    }

    @Test func ifNoneMatchWithCurrentETagIs304WithoutBody() async throws {
        try await withServer { server, client in
            let etag = try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("If-None-Match", etag)])
            #expect(r.status == 304)
            #expect(r.body.isEmpty)
            #expect(r.header("ETag") == etag)
        }
    }

    @Test func ifModifiedSinceFutureIs304AndPastServes() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let notModified = try await client.send("GET", "/photos/k", headers: [("If-Modified-Since", future)])
            #expect(notModified.status == 304)
            let modified = try await client.send("GET", "/photos/k", headers: [("If-Modified-Since", past)])
            #expect(modified.status == 200)
        }
    }

    @Test func ifUnmodifiedSincePastIs412() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", headers: [("If-Unmodified-Since", past)])
            #expect(r.status == 412)
            let ok = try await client.send("GET", "/photos/k", headers: [("If-Unmodified-Since", future)])
            #expect(ok.status == 200)
        }
    }

    @Test func ifRangeWithStaleETagServesWholeObject() async throws {
        try await withServer { server, client in
            let etag = try server.putObject(bucket: "photos", key: "k", data: data)
            let stale = try await client.send(
                "GET", "/photos/k", headers: [("Range", "bytes=0-3"), ("If-Range", "\"stale\"")])
            #expect(stale.status == 200)
            #expect(stale.body == data)
            let fresh = try await client.send(
                "GET", "/photos/k", headers: [("Range", "bytes=0-3"), ("If-Range", etag)])
            #expect(fresh.status == 206)
            #expect(fresh.body == data.prefix(4))
        }
    }

    @Test func responseOverridesReplaceHeaders() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data, contentType: "text/plain")
            let r = try await client.send(
                "GET", "/photos/k",
                query: [
                    ("response-content-type", "application/x-test"),
                    ("response-content-disposition", "attachment; filename=\"k.bin\""),
                ])
            #expect(r.header("Content-Type") == "application/x-test")
            #expect(r.header("Content-Disposition") == "attachment; filename=\"k.bin\"")
        }
    }

    @Test func checksumModeReturnsStoredCRC32() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("hello world".utf8), checksumCRC32: true)
            let plain = try await client.send("HEAD", "/photos/k")
            #expect(plain.header("x-amz-checksum-crc32") == nil)
            let r = try await client.send("HEAD", "/photos/k", headers: [("x-amz-checksum-mode", "ENABLED")])
            // CRC32("hello world") = 0x0D4A1185
            #expect(r.header("x-amz-checksum-crc32") == Data([0x0D, 0x4A, 0x11, 0x85]).base64EncodedString())
        }
    }

    @Test func partNumberOneOfSimpleObjectIsWholeObject() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: data)
            let r = try await client.send("GET", "/photos/k", query: [("partNumber", "1")])
            #expect(r.status == 200)
            #expect(r.body == data)
            let r2 = try await client.send("GET", "/photos/k", query: [("partNumber", "2")])
            #expect(r2.status == 416)
        }
    }
}
