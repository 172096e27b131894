import AWSSigV4
import FakeS3
import Foundation
import Hashing
import TestSupport
import Testing

@Suite("PutObject, DeleteObject, CopyObject", .heavy)
struct ObjectWriteTests {
    let body = Data((0..<5000).map { UInt8($0 & 0xFF) })

    @Test func putStoresBytesMetadataAndReturnsMD5ETag() async throws {
        try await withServer { server, client in
            let r = try await client.send(
                "PUT", "/photos/originals/x.bin",
                headers: [("Content-Type", "image/png"), ("x-amz-meta-orientation", "6")], body: body)
            #expect(r.status == 200)
            #expect(
                r.header("ETag") == "\"\(Insecure.MD5.hash(data: body).map { String(format: "%02x", $0) }.joined())\"")
            #expect(try server.objectData(bucket: "photos", key: "originals/x.bin") == body)
            let head = try await client.send("HEAD", "/photos/originals/x.bin")
            #expect(head.header("x-amz-meta-orientation") == "6")
            #expect(head.header("Content-Type") == "image/png")
        }
    }

    @Test func correctContentMD5IsAccepted() async throws {
        try await withServer { _, client in
            let md5 = Data(Insecure.MD5.hash(data: body)).base64EncodedString()
            let r = try await client.send("PUT", "/photos/k", headers: [("Content-MD5", md5)], body: body)
            #expect(r.status == 200)
        }
    }

    @Test func wrongContentMD5IsBadDigestAndStoresNothing() async throws {
        try await withServer { server, client in
            let md5 = Data(Insecure.MD5.hash(data: Data("other".utf8))).base64EncodedString()
            let r = try await client.send("PUT", "/photos/k", headers: [("Content-MD5", md5)], body: body)
            #expect(r.status == 400)
            #expect(r.errorCode == "BadDigest")
            #expect(try server.objectData(bucket: "photos", key: "k") == nil)
        }
    }

    @Test func malformedContentMD5IsInvalidDigest() async throws {
        try await withServer { _, client in
            let r = try await client.send("PUT", "/photos/k", headers: [("Content-MD5", "not-base64!")], body: body)
            #expect(r.errorCode == "InvalidDigest")
        }
    }

    @Test func crc32ChecksumIsVerifiedAndStored() async throws {
        try await withServer { server, client in
            let hello = Data("hello world".utf8)
            let good = Data([0x0D, 0x4A, 0x11, 0x85]).base64EncodedString()
            let ok = try await client.send("PUT", "/photos/k", headers: [("x-amz-checksum-crc32", good)], body: hello)
            #expect(ok.status == 200)
            #expect(ok.header("x-amz-checksum-crc32") == good)
            let bad = try await client.send(
                "PUT", "/photos/k2", headers: [("x-amz-checksum-crc32", "AAAAAA==")], body: hello)
            #expect(bad.status == 400)
            #expect(bad.errorCode == "BadDigest")
            #expect(try server.objectData(bucket: "photos", key: "k2") == nil)
        }
    }

    @Test func crc32cAndSHA256ChecksumsAreVerified() async throws {
        try await withServer { _, client in
            let hello = Data("hello world".utf8)
            let sha = Data(SHA256.hash(data: hello)).base64EncodedString()
            let ok = try await client.send("PUT", "/photos/a", headers: [("x-amz-checksum-sha256", sha)], body: hello)
            #expect(ok.status == 200)
            // CRC32C("hello world") = 0xC99465AA
            let crc32c = Data([0xC9, 0x94, 0x65, 0xAA]).base64EncodedString()
            let ok2 = try await client.send(
                "PUT", "/photos/b", headers: [("x-amz-checksum-crc32c", crc32c)], body: hello)
            #expect(ok2.status == 200)
            let bad = try await client.send(
                "PUT", "/photos/c", headers: [("x-amz-checksum-crc32c", "AAAAAA==")], body: hello)
            #expect(bad.errorCode == "BadDigest")
        }
    }

    @Test func payloadHashMismatchIsRejected() async throws {
        try await withServer { server, client in
            let r = try await client.send(
                "PUT", "/photos/k", body: body, payloadHash: SigV4.sha256Hex(data: Data("different".utf8)))
            #expect(r.status == 400)
            #expect(r.errorCode == "XAmzContentSHA256Mismatch")
            #expect(try server.objectData(bucket: "photos", key: "k") == nil)
        }
    }

    @Test func unsignedPayloadIsAccepted() async throws {
        try await withServer { server, client in
            let r = try await client.send("PUT", "/photos/k", body: body, payloadHash: SigV4.unsignedPayload)
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "k") == body)
        }
    }

    /// Signs a PUT as an aws-chunked upload and encodes `body` in two signed chunks.
    private func chunkedUpload(_ client: S3TestClient, path: String) -> (headers: [(String, String)], body: Data) {
        let date = Date()
        let headers = [("Content-Encoding", "aws-chunked"), ("x-amz-decoded-content-length", String(body.count))]
        let signed = client.signer.sign(
            method: "PUT", path: path, host: client.host, headers: headers.map { (name: $0.0, value: $0.1) },
            payloadHash: SigV4.streamingPayload, date: date)
        let seed = String(signed[0].value.split(separator: "=").last!)
        var chunker = SigV4ChunkSigner(
            secret: "test-secret", amzDate: SigV4.amzDate(date), region: "us-east-1", service: "s3",
            seedSignature: seed)
        var encoded = Data()
        for chunk in [body.prefix(3000), body.suffix(2000), Data()] {
            let signature = chunker.nextSignature(for: chunk)
            encoded += Data("\(String(chunk.count, radix: 16));chunk-signature=\(signature)\r\n".utf8)
            encoded += chunk + Data("\r\n".utf8)
        }
        return (headers + signed.map { ($0.name, $0.value) }, encoded)
    }

    @Test func signedAWSChunkedUploadIsDecodedAndVerified() async throws {
        try await withServer { server, client in
            let upload = chunkedUpload(client, path: "/photos/chunked")
            let r = try await TestHTTPClient.send(
                port: client.port, method: "PUT", uri: "/photos/chunked", headers: upload.headers, body: upload.body)
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "chunked") == body)
        }
    }

    @Test func alteredChunkFailsItsSignatureAndStoresNothing() async throws {
        try await withServer { server, client in
            var upload = chunkedUpload(client, path: "/photos/chunked")
            upload.body[200] ^= 0xFF  // inside the first chunk's data
            let r = try await TestHTTPClient.send(
                port: client.port, method: "PUT", uri: "/photos/chunked", headers: upload.headers, body: upload.body)
            #expect(r.status == 403)
            #expect(r.errorCode == "SignatureDoesNotMatch")
            #expect(try server.objectData(bucket: "photos", key: "chunked") == nil)
        }
    }

    @Test func unsignedTrailerChunkedUploadVerifiesTrailingChecksum() async throws {
        try await withServer { server, client in
            let hello = Data("hello world".utf8)
            let crc = Data([0x0D, 0x4A, 0x11, 0x85]).base64EncodedString()
            func encoded(_ checksum: String) -> Data {
                Data("b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:\(checksum)\r\n\r\n".utf8)
            }
            let headers = [
                ("Content-Encoding", "aws-chunked"), ("x-amz-decoded-content-length", "11"),
                ("x-amz-trailer", "x-amz-checksum-crc32"),
            ]
            let ok = try await client.send(
                "PUT", "/photos/t", headers: headers, body: encoded(crc),
                payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
            #expect(ok.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "t") == hello)
            let bad = try await client.send(
                "PUT", "/photos/t2", headers: headers, body: encoded("AAAAAA=="),
                payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
            #expect(bad.errorCode == "BadDigest")
        }
    }

    /// A chunk-size line must start with its size: ";b" read as a chunk of 0xb bytes (the empty piece before the
    /// `;` was dropped).
    @Test func aChunkSizeLineWithoutASizeIsRefused() async throws {
        try await withServer { server, client in
            let headers = [("Content-Encoding", "aws-chunked"), ("x-amz-decoded-content-length", "11")]
            let answer = try await client.send(
                "PUT", "/photos/c", headers: headers, body: Data(";b\r\nhello world\r\n0\r\n\r\n".utf8),
                payloadHash: "UNSIGNED-PAYLOAD")
            #expect(answer.errorCode == "IncompleteBody")
            #expect(try server.objectData(bucket: "photos", key: "c") == nil)
        }
    }

    @Test func ifNoneMatchStarRefusesToOverwrite() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("old".utf8))
            let r = try await client.send("PUT", "/photos/k", headers: [("If-None-Match", "*")], body: body)
            #expect(r.status == 412)
            #expect(try server.objectData(bucket: "photos", key: "k") == Data("old".utf8))
        }
    }

    @Test func deleteRemovesObjectAndMissingKeySucceeds() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: body)
            let r = try await client.send("DELETE", "/photos/k")
            #expect(r.status == 204)
            #expect(try server.objectData(bucket: "photos", key: "k") == nil)
            let again = try await client.send("DELETE", "/photos/k")
            #expect(again.status == 204)
        }
    }

    @Test func copyDuplicatesBytesAndMetadata() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "src", data: body, metadata: ["a": "1"])
            let r = try await client.send("PUT", "/photos/dst", headers: [("x-amz-copy-source", "/photos/src")])
            #expect(r.status == 200)
            #expect(r.text.contains("<CopyObjectResult"))
            #expect(try server.objectData(bucket: "photos", key: "dst") == body)
            let head = try await client.send("HEAD", "/photos/dst")
            #expect(head.header("x-amz-meta-a") == "1")
            let replaced = try await client.send(
                "PUT", "/photos/dst",
                headers: [
                    ("x-amz-copy-source", "photos/src"), ("x-amz-metadata-directive", "REPLACE"),
                    ("x-amz-meta-b", "2"),
                ])
            #expect(replaced.status == 200)
            let head2 = try await client.send("HEAD", "/photos/dst")
            #expect(head2.header("x-amz-meta-a") == nil)
            #expect(head2.header("x-amz-meta-b") == "2")
        }
    }

    @Test func deleteObjectsRemovesListedKeys() async throws {
        try await withServer { server, client in
            for k in ["a", "b", "c"] { try server.putObject(bucket: "photos", key: k, data: body) }
            let xml = "<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object></Delete>"
            let r = try await client.send("POST", "/photos", query: [("delete", "")], body: Data(xml.utf8))
            #expect(r.status == 200)
            #expect(r.text.contains("<Deleted><Key>a</Key></Deleted>"))
            #expect(try server.objectData(bucket: "photos", key: "a") == nil)
            #expect(try server.objectData(bucket: "photos", key: "c") != nil)
        }
    }

    @Test func malformedDeleteObjectsXMLIsMalformedXML() async throws {
        try await withServer { _, client in
            let r = try await client.send(
                "POST", "/photos", query: [("delete", "")], body: Data("<Delete><Object><Key>a</Key>".utf8))
            #expect(r.status == 400)
            #expect(r.errorCode == "MalformedXML")
        }
    }
}
