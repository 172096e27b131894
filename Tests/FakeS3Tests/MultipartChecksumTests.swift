import FakeS3
import Foundation
import TestSupport
import Testing

/// Checksums of uploads as AWS documents them: per part (`x-amz-checksum-crc32c`, verified, returned, listed),
/// and for the whole object, `FULL_OBJECT` (over the assembled bytes, verified at completion) or `COMPOSITE`
/// (over the parts' checksums, `<base64>-N`), returned by HEAD/GET with `x-amz-checksum-mode: ENABLED`.
@Suite("Multipart checksums", .heavy)
struct MultipartChecksumTests {
    let first = Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let second = Data("the last part".utf8)
    let fullObject = [("x-amz-checksum-algorithm", "CRC32C"), ("x-amz-checksum-type", "FULL_OBJECT")]

    @Test func aPartWithTheRightCRC32CIsStoredAndItsChecksumReturned() async throws {
        try await withServer { _, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let crc = TestCRC32C.base64(of: second)
            let part = try await upload.put(1, second, headers: [("x-amz-checksum-crc32c", crc)])
            #expect(part.response.status == 200)
            #expect(part.response.header("x-amz-checksum-crc32c") == crc)
            let listed = try await upload.list()
            #expect(xmlValues("ChecksumCRC32C", in: listed.text) == [crc])
            #expect(xmlValues("ChecksumAlgorithm", in: listed.text) == ["CRC32C"])
            #expect(xmlValues("ChecksumType", in: listed.text) == ["FULL_OBJECT"])
        }
    }

    @Test func aPartWithAWrongCRC32CIsBadDigestAndNotStored() async throws {
        try await withServer { _, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let wrong = TestCRC32C.base64(of: Data("something else".utf8))
            let part = try await upload.put(1, second, headers: [("x-amz-checksum-crc32c", wrong)])
            #expect(part.response.status == 400)
            #expect(part.response.errorCode == "BadDigest")
            #expect(xmlValues("PartNumber", in: try await upload.list().text).isEmpty)
        }
    }

    @Test func aPartOfAnotherAlgorithmThanTheUploadsIsRefused() async throws {
        try await withServer { _, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let crc32 = Data([0, 0, 0, 0]).base64EncodedString()
            let part = try await upload.put(1, second, headers: [("x-amz-checksum-crc32", crc32)])
            #expect(part.response.status == 400)
            #expect(part.response.errorCode == "InvalidRequest")
        }
    }

    @Test func aPartSentWithoutAChecksumGetsTheUploadsComputed() async throws {
        try await withServer { _, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let part = try await upload.put(1, second)
            #expect(part.response.header("x-amz-checksum-crc32c") == TestCRC32C.base64(of: second))
        }
    }

    @Test func fullObjectChecksumIsVerifiedStoredAndReturnedWithChecksumMode() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let p1 = try await upload.put(1, first, headers: [("x-amz-checksum-crc32c", TestCRC32C.base64(of: first))])
            let p2 = try await upload.put(
                2, second, headers: [("x-amz-checksum-crc32c", TestCRC32C.base64(of: second))])
            let whole = TestCRC32C.base64(of: first + second)
            let r = try await upload.complete(
                [(1, p1.etag), (2, p2.etag)],
                checksums: [
                    "ChecksumCRC32C#1": TestCRC32C.base64(of: first), "ChecksumCRC32C#2": TestCRC32C.base64(of: second),
                ],
                headers: [("x-amz-checksum-crc32c", whole), ("x-amz-checksum-type", "FULL_OBJECT")])
            #expect(r.status == 200)
            #expect(xmlValues("ChecksumCRC32C", in: r.text) == [whole])
            #expect(xmlValues("ChecksumType", in: r.text) == ["FULL_OBJECT"])
            let head = try await client.send("HEAD", "/photos/mp", headers: [("x-amz-checksum-mode", "ENABLED")])
            #expect(head.header("x-amz-checksum-crc32c") == whole)
            #expect(head.header("x-amz-checksum-type") == "FULL_OBJECT")
            let plain = try await client.send("HEAD", "/photos/mp")
            #expect(plain.header("x-amz-checksum-crc32c") == nil)
            let stored = try #require(try server.objectChecksums(bucket: "photos", key: "mp"))
            #expect(stored.checksums == ["crc32c": whole])
            #expect(stored.type == "FULL_OBJECT")
        }
    }

    @Test func aWrongFullObjectChecksumIsBadDigestAndCreatesNothing() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let p1 = try await upload.put(1, first)
            let p2 = try await upload.put(2, second)
            let r = try await upload.complete(
                [(1, p1.etag), (2, p2.etag)],
                headers: [
                    ("x-amz-checksum-crc32c", TestCRC32C.base64(of: first)), ("x-amz-checksum-type", "FULL_OBJECT"),
                ])
            #expect(r.status == 400)
            #expect(r.errorCode == "BadDigest")
            #expect(try server.objectData(bucket: "photos", key: "mp") == nil)
            #expect(try server.multipartUploads(bucket: "photos").count == 1)
        }
    }

    @Test func aPartChecksumInTheCompletionThatDiffersIsInvalidPart() async throws {
        try await withServer { _, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let p1 = try await upload.put(1, second)
            let r = try await upload.complete(
                [(1, p1.etag)], checksums: ["ChecksumCRC32C#1": TestCRC32C.base64(of: first)])
            #expect(r.errorCode == "InvalidPart")
        }
    }

    @Test func completionInAnotherChecksumModeThanTheUploadIsRefused() async throws {
        try await withServer { _, client in
            let upload = try await MultipartSession.start(client, key: "mp", headers: fullObject)
            let p1 = try await upload.put(1, second)
            let r = try await upload.complete([(1, p1.etag)], headers: [("x-amz-checksum-type", "COMPOSITE")])
            #expect(r.status == 400)
            #expect(r.errorCode == "InvalidRequest")
        }
    }

    @Test func compositeIsTheDefaultAndCoversThePartChecksumsWithAPartCount() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(
                client, key: "mp", headers: [("x-amz-checksum-algorithm", "CRC32C")])
            let p1 = try await upload.put(1, first, headers: [("x-amz-checksum-crc32c", TestCRC32C.base64(of: first))])
            let p2 = try await upload.put(2, second)
            let r = try await upload.complete([(1, p1.etag), (2, p2.etag)])
            #expect(r.status == 200)
            let partCRCs = [first, second].map { part -> Data in
                let c = TestCRC32C.checksum(part)
                return Data([UInt8(c >> 24), UInt8(c >> 16 & 0xFF), UInt8(c >> 8 & 0xFF), UInt8(c & 0xFF)])
            }
            let expected = TestCRC32C.base64(of: partCRCs[0] + partCRCs[1]) + "-2"
            let head = try await client.send("HEAD", "/photos/mp", headers: [("x-amz-checksum-mode", "ENABLED")])
            #expect(head.header("x-amz-checksum-crc32c") == expected)
            #expect(head.header("x-amz-checksum-type") == "COMPOSITE")
            #expect(try server.objectChecksums(bucket: "photos", key: "mp")?.type == "COMPOSITE")
        }
    }

    @Test func fullObjectIsRefusedForSHA256AndCompositeForCRC64() async throws {
        try await withServer { _, client in
            for headers in [
                [("x-amz-checksum-algorithm", "SHA256"), ("x-amz-checksum-type", "FULL_OBJECT")],
                [("x-amz-checksum-algorithm", "CRC64NVME"), ("x-amz-checksum-type", "COMPOSITE")],
            ] {
                let r = try await client.send("POST", "/photos/mp", query: [("uploads", "")], headers: headers)
                #expect(r.status == 400)
                #expect(r.errorCode == "InvalidRequest")
            }
        }
    }

    @Test func createAnnouncesTheChecksumAlgorithmAndType() async throws {
        try await withServer { _, client in
            let r = try await client.send("POST", "/photos/mp", query: [("uploads", "")], headers: fullObject)
            #expect(r.header("x-amz-checksum-algorithm") == "CRC32C")
            #expect(r.header("x-amz-checksum-type") == "FULL_OBJECT")
        }
    }

    @Test func aPutWithAChecksumIsAFullObjectChecksum() async throws {
        try await withServer { _, client in
            let crc = TestCRC32C.base64(of: second)
            let put = try await client.send(
                "PUT", "/photos/k", headers: [("x-amz-checksum-crc32c", crc)], body: second,
                payloadHash: "UNSIGNED-PAYLOAD")
            #expect(put.status == 200)
            #expect(put.header("x-amz-checksum-crc32c") == crc)
            let head = try await client.send("HEAD", "/photos/k", headers: [("x-amz-checksum-mode", "ENABLED")])
            #expect(head.header("x-amz-checksum-crc32c") == crc)
            #expect(head.header("x-amz-checksum-type") == "FULL_OBJECT")
        }
    }
}

/// What the request log tells about multipart requests, and faults that cut an upload.
@Suite("Upload request log and faults", .heavy)
struct UploadFaultTests {
    @Test func theRequestLogNamesEachUploadPartsNumberAndUpload() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp")
            try await upload.put(3, Data("c".utf8))
            try await upload.put(1, Data("a".utf8))
            let parts = server.requestLog.entries().filter(\.isUploadPart)
            #expect(parts.map(\.partNumber) == [3, 1])
            #expect(parts.allSatisfy { $0.uploadId == upload.id && $0.status == 200 })
            let create = try #require(server.requestLog.entries().first)
            #expect(!create.isUploadPart && create.partNumber == nil)
        }
    }

    @Test func theRequestLogKeepsIfNoneMatch() async throws {
        try await withServer { server, client in
            _ = try await client.send("PUT", "/photos/k", headers: [("If-None-Match", "*")], body: Data("x".utf8))
            #expect(server.requestLog.entries().last?.ifNoneMatch == "*")
        }
    }

    @Test func aResetUploadKeepsNothingAndGetsNoAnswer() async throws {
        try await withServer { server, client in
            server.faults.add(.resetAfter(bytes: 100_000), keyPattern: "k", method: "PUT", times: 1)
            await #expect(throws: (any Error).self) {
                _ = try await client.send("PUT", "/photos/k", body: Data(count: 1 << 20))
            }
            #expect(try server.objectData(bucket: "photos", key: "k") == nil)
            let again = try await client.send("PUT", "/photos/k", body: Data(count: 1 << 20))
            #expect(again.status == 200)
            // The cut request is logged without an answer (status 0).
            #expect(server.requestLog.entries().map(\.status) == [0, 200])
        }
    }

    @Test func aTruncatedUploadPartKeepsNoPart() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp")
            server.faults.add(.truncateBody(afterBytes: 1000), keyPattern: "mp", method: "PUT", times: 1)
            await #expect(throws: (any Error).self) { try await upload.put(1, Data(count: 200_000)) }
            #expect(xmlValues("PartNumber", in: try await upload.list().text).isEmpty)
        }
    }

    @Test func aTruncatedCompletionAnswerStillStoresTheObject() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp")
            let part = try await upload.put(1, Data("whole".utf8))
            server.faults.add(.truncateBody(afterBytes: 40), keyPattern: "mp", method: "POST", times: 1)
            let r = try await upload.complete([(1, part.etag)])
            #expect(r.status == 200)
            #expect(!r.complete)
            #expect(r.body.count == 40)
            #expect(try server.objectData(bucket: "photos", key: "mp") == Data("whole".utf8))
        }
    }
}

extension UploadFaultTests {
    @Test func aDroppedResponseStillStoresTheWriteButAnswersNothing() async throws {
        try await withServer { server, client in
            server.faults.add(.dropResponse, keyPattern: "k", method: "PUT", times: 1)
            await #expect(throws: (any Error).self) {
                _ = try await client.send("PUT", "/photos/k", body: Data("kept".utf8))
            }
            let stored = try server.objectData(bucket: "photos", key: "k")
            #expect(stored == Data("kept".utf8))
            #expect(server.requestLog.entries().map(\.status) == [0])
        }
    }
}
