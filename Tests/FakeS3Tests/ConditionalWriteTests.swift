import FakeS3
import Foundation
import TestSupport
import Testing

@testable import FakeS3

/// PutObject and CompleteMultipartUpload under `If-None-Match: *` and `If-Match`, as AWS documents them: 412 when
/// the condition fails, 404 for `If-Match` on a missing key, 409 `ConditionalRequestConflict` when another write to
/// the key is in flight.
@Suite("Conditional writes", .heavy)
struct ConditionalWriteTests {
    let body = Data("conditional write".utf8)

    @Test func putIfMatchWithTheCurrentETagReplacesTheObject() async throws {
        try await withServer { server, client in
            let etag = try server.putObject(bucket: "photos", key: "k", data: Data("old".utf8))
            let r = try await client.send("PUT", "/photos/k", headers: [("If-Match", etag)], body: body)
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "k") == body)
        }
    }

    @Test func putIfMatchWithAnotherETagIs412AndKeepsTheObject() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("old".utf8))
            let r = try await client.send("PUT", "/photos/k", headers: [("If-Match", "\"0000\"")], body: body)
            #expect(r.status == 412)
            #expect(r.errorCode == "PreconditionFailed")
            #expect(try server.objectData(bucket: "photos", key: "k") == Data("old".utf8))
        }
    }

    @Test func putIfMatchOnAMissingKeyIs404NoSuchKey() async throws {
        try await withServer { server, client in
            let r = try await client.send("PUT", "/photos/none", headers: [("If-Match", "\"0000\"")], body: body)
            #expect(r.status == 404)
            #expect(r.errorCode == "NoSuchKey")
            #expect(try server.objectData(bucket: "photos", key: "none") == nil)
        }
    }

    @Test func putIfNoneMatchOnAFreeKeyCreatesIt() async throws {
        try await withServer { server, client in
            let r = try await client.send("PUT", "/photos/new", headers: [("If-None-Match", "*")], body: body)
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "new") == body)
        }
    }

    @Test func putIfNoneMatchWhileAnotherConditionalWriteIsInFlightIs409() async throws {
        try await withServer { server, client in
            // A conditional write to the key is between its check and its commit.
            #expect(server.core.service.conditionalWrites.begin(bucket: "photos", key: "k"))
            let r = try await client.send("PUT", "/photos/k", headers: [("If-None-Match", "*")], body: body)
            #expect(r.status == 409)
            #expect(r.errorCode == "ConditionalRequestConflict")
            #expect(try server.objectData(bucket: "photos", key: "k") == nil)
            server.core.service.conditionalWrites.end(bucket: "photos", key: "k")
            let again = try await client.send("PUT", "/photos/k", headers: [("If-None-Match", "*")], body: body)
            #expect(again.status == 200)
        }
    }

    @Test func aKeyWrittenBetweenTheCheckAndTheCommitIsAConflictNotAnOverwrite() async throws {
        try await withServer { server, _ in
            let store = server.core.store
            let sink = try store.makeUpload(bucket: "photos", allocator: .init(), expectedSize: 3)
            try sink.write(.init(string: "new"))
            // The conditional write saw no object; another writer stores one before it commits.
            try server.putObject(bucket: "photos", key: "k", data: Data("other".utf8))
            let info = ObjectInfo(key: "k", size: 3, etag: "\"x\"", lastModified: Date(), contentType: "a/b")
            #expect(throws: ObjectStore.conditionalConflict) {
                try store.commit(bucket: "photos", info: info, upload: sink, expecting: .absent)
            }
            #expect(try server.objectData(bucket: "photos", key: "k") == Data("other".utf8))
        }
    }

    @Test func completeIfNoneMatchOnAnExistingKeyIs412AndKeepsTheUpload() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "mp", data: Data("old".utf8))
            let upload = try await MultipartSession.start(client, key: "mp")
            let part = try await upload.put(1, Data("part".utf8))
            let r = try await upload.complete([(1, part.etag)], headers: [("If-None-Match", "*")])
            #expect(r.status == 412)
            #expect(r.errorCode == "PreconditionFailed")
            #expect(try server.objectData(bucket: "photos", key: "mp") == Data("old".utf8))
            // The upload stays: the client decides to abort it.
            #expect(try server.multipartUploads(bucket: "photos").map(\.uploadId) == [upload.id])
        }
    }

    @Test func completeIfNoneMatchOnAFreeKeyCreatesTheObject() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp")
            let part = try await upload.put(1, Data("part".utf8))
            let r = try await upload.complete([(1, part.etag)], headers: [("If-None-Match", "*")])
            #expect(r.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "mp") == Data("part".utf8))
            #expect(try server.multipartUploads(bucket: "photos").isEmpty)
        }
    }

    @Test func completeIfMatchChecksTheETagAndTheKey() async throws {
        try await withServer { server, client in
            let etag = try server.putObject(bucket: "photos", key: "mp", data: Data("old".utf8))
            let upload = try await MultipartSession.start(client, key: "mp")
            let part = try await upload.put(1, Data("part".utf8))
            let stale = try await upload.complete([(1, part.etag)], headers: [("If-Match", "\"0000\"")])
            #expect(stale.status == 412)
            let ok = try await upload.complete([(1, part.etag)], headers: [("If-Match", etag)])
            #expect(ok.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "mp") == Data("part".utf8))

            let other = try await MultipartSession.start(client, key: "absent")
            let otherPart = try await other.put(1, Data("x".utf8))
            let missing = try await other.complete([(1, otherPart.etag)], headers: [("If-Match", etag)])
            #expect(missing.status == 404)
            #expect(missing.errorCode == "NoSuchKey")
        }
    }

    @Test func completeWhileAnotherConditionalWriteToTheKeyIsInFlightIs409() async throws {
        try await withServer { server, client in
            let upload = try await MultipartSession.start(client, key: "mp")
            let part = try await upload.put(1, Data("part".utf8))
            #expect(server.core.service.conditionalWrites.begin(bucket: "photos", key: "mp"))
            let r = try await upload.complete([(1, part.etag)], headers: [("If-None-Match", "*")])
            #expect(r.status == 409)
            #expect(r.errorCode == "ConditionalRequestConflict")
            server.core.service.conditionalWrites.end(bucket: "photos", key: "mp")
            let retried = try await upload.complete([(1, part.etag)], headers: [("If-None-Match", "*")])
            #expect(retried.status == 200)
        }
    }

    @Test func twoConcurrentConditionalCompletesOfOneKeyCreateItOnce() async throws {
        try await withServer { server, client in
            let first = try await MultipartSession.start(client, key: "race")
            let second = try await MultipartSession.start(client, key: "race")
            let a = Data(repeating: 0xA, count: 6 << 20)
            let b = Data(repeating: 0xB, count: 6 << 20)
            let pa = try await first.put(1, a)
            let pb = try await second.put(1, b)
            async let ra = first.complete([(1, pa.etag)], headers: [("If-None-Match", "*")])
            async let rb = second.complete([(1, pb.etag)], headers: [("If-None-Match", "*")])
            let statuses = try await [ra.status, rb.status]
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.allSatisfy { [200, 409, 412].contains($0) }, "\(statuses)")
            let stored = try #require(try server.objectData(bucket: "photos", key: "race"))
            #expect(stored == (statuses[0] == 200 ? a : b))
        }
    }
}
