import AWSSigV4
import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("Signature V4 authentication and addressing", .heavy)
struct AuthenticationTests {
    @Test func unknownAccessKeyIsInvalidAccessKeyId() async throws {
        try await withServer { server, _ in
            let stranger = S3TestClient(port: server.port, accessKey: "AKIDOTHER")
            let r = try await stranger.send("GET", "/photos", query: [("list-type", "2")])
            #expect(r.status == 403)
            #expect(r.errorCode == "InvalidAccessKeyId")
        }
    }

    @Test func wrongSecretIsSignatureDoesNotMatch() async throws {
        try await withServer { server, _ in
            let wrong = S3TestClient(port: server.port, secret: "not-the-secret")
            let r = try await wrong.send("GET", "/photos", query: [("list-type", "2")])
            #expect(r.status == 403)
            #expect(r.errorCode == "SignatureDoesNotMatch")
            #expect(r.text.contains("<CanonicalRequest>"))
        }
    }

    @Test func tamperedSignedHeaderIsSignatureDoesNotMatch() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("0123456789".utf8))
            let signed = client.signer.sign(
                method: "GET", path: "/photos/k", host: client.host, headers: [("range", "bytes=0-1")],
                payloadHash: SigV4.emptyPayloadHash)
            let r = try await TestHTTPClient.send(
                port: client.port, method: "GET", uri: "/photos/k",
                headers: [("Range", "bytes=0-5")] + signed.map { ($0.name, $0.value) })
            #expect(r.errorCode == "SignatureDoesNotMatch")
        }
    }

    @Test func clockSkewOverFifteenMinutesIsRequestTimeTooSkewed() async throws {
        try await withServer { _, client in
            let r = try await client.send("GET", "/", date: Date().addingTimeInterval(-16 * 60))
            #expect(r.status == 403)
            #expect(r.errorCode == "RequestTimeTooSkewed")
            let ok = try await client.send("GET", "/", date: Date().addingTimeInterval(-14 * 60))
            #expect(ok.status == 200)
        }
    }

    @Test func wrongRegionIsAuthorizationHeaderMalformed() async throws {
        try await withServer { server, _ in
            let other = S3TestClient(port: server.port, region: "eu-west-1")
            let r = try await other.send("GET", "/")
            #expect(r.status == 400)
            #expect(r.errorCode == "AuthorizationHeaderMalformed")
        }
    }

    @Test func presignedURLWorksAndExpires() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "a b.png", data: Data("png".utf8))
            let ok = try await client.send("GET", "/photos/a b.png", signing: .presigned(expires: 60))
            #expect(ok.status == 200)
            #expect(ok.body == Data("png".utf8))
            let expired = try await client.send(
                "GET", "/photos/a b.png", signing: .presigned(expires: 60), date: Date().addingTimeInterval(-120))
            #expect(expired.status == 403)
            #expect(expired.errorCode == "AccessDenied")
            #expect(expired.text.contains("Request has expired"))
        }
    }

    @Test func presignedURLWithWrongSecretIsRejected() async throws {
        try await withServer { server, _ in
            try server.putObject(bucket: "photos", key: "k", data: Data("x".utf8))
            let wrong = S3TestClient(port: server.port, secret: "nope")
            let r = try await wrong.send("GET", "/photos/k", signing: .presigned(expires: 60))
            #expect(r.errorCode == "SignatureDoesNotMatch")
        }
    }

    @Test func anonymousRequestIsDeniedOnPrivateBucket() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("x".utf8))
            let r = try await client.send("GET", "/photos/k", signing: .anonymous)
            #expect(r.status == 403)
            #expect(r.errorCode == "AccessDenied")
        }
    }

    @Test func anonymousReadsArePermittedOnPublicBucketButNotWrites() async throws {
        try await withServer(configure: { $0.publicBuckets = ["photos"] }) { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("x".utf8))
            let read = try await client.send("GET", "/photos/k", signing: .anonymous)
            #expect(read.status == 200)
            let list = try await client.send("GET", "/photos", query: [("list-type", "2")], signing: .anonymous)
            #expect(list.status == 200)
            let write = try await client.send("PUT", "/photos/new", body: Data("y".utf8), signing: .anonymous)
            #expect(write.errorCode == "AccessDenied")
        }
    }

    @Test(arguments: ["with space.png", "plus+sign", "tilde~x", "eq=ual", "at@sign", "unicodé/日本.jpg", "100%25 pct"])
    func keysWithSpecialCharactersRoundTripSigned(key: String) async throws {
        try await withServer { server, client in
            let data = Data(key.utf8)
            let put = try await client.send("PUT", "/photos/\(key)", body: data)
            #expect(put.status == 200)
            #expect(try server.objectData(bucket: "photos", key: key) == data)
            let get = try await client.send("GET", "/photos/\(key)")
            #expect(get.body == data)
            let presigned = try await client.send("GET", "/photos/\(key)", signing: .presigned(expires: 60))
            #expect(presigned.body == data)
        }
    }

    @Test func virtualHostedStyleAddressesTheBucketFromHost() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "originals/a.png", data: Data("v".utf8))
            let host = "photos.localhost:\(client.port)"
            let r = try await client.send("GET", "/originals/a.png", host: host)
            #expect(r.status == 200)
            #expect(r.body == Data("v".utf8))
            let list = try await client.send("GET", "/", query: [("list-type", "2")], host: host)
            #expect(list.text.contains("<Key>originals/a.png</Key>"))
        }
    }

    @Test func virtualHostedUnderTheBoundAddressAndTheMostSpecificSuffix() async throws {
        try await withServer(configure: { $0.virtualHostSuffixes = ["test", "s3.test"] }) { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("v".utf8))
            // The bound host is a suffix too: Host: photos.<its host>.
            let bound = try await client.send("GET", "/k", host: "photos.127.0.0.1:\(client.port)")
            #expect(bound.status == 200 && bound.body == Data("v".utf8))
            // photos.s3.test is the bucket photos under s3.test, not the bucket photos.s3 under test.
            let specific = try await client.send("GET", "/k", host: "photos.s3.test")
            #expect(specific.status == 200 && specific.body == Data("v".utf8))
            let pathStyle = try await client.send("GET", "/photos/k")
            #expect(pathStyle.status == 200)
            let entries = server.requestLog.entries()
            #expect(entries.map(\.isVirtualHosted) == [true, true, false])
            #expect(entries.map(\.bucket) == ["photos", "photos", "photos"])
            #expect(
                entries.map(\.host) == [
                    "photos.127.0.0.1:\(client.port)", "photos.s3.test", "127.0.0.1:\(client.port)",
                ])
        }
    }

    @Test func aVirtualHostedSignatureIsCheckedAgainstTheHostAsSent() async throws {
        try await withServer { server, client in
            try server.putObject(bucket: "photos", key: "k", data: Data("v".utf8))
            // Signed for the path-style host, sent to the virtual-hosted one: the signature no longer matches.
            let signed = client.signer.sign(
                method: "GET", path: "/k", query: [], host: "localhost:\(client.port)", headers: [],
                payloadHash: SigV4.emptyPayloadHash, date: Date())
            let response = try await TestHTTPClient.send(
                port: client.port, method: "GET", uri: "/k", headers: signed.map { ($0.name, $0.value) }, body: nil,
                host: "photos.localhost:\(client.port)")
            #expect(response.status == 403)
            #expect(response.text.contains("SignatureDoesNotMatch"))
        }
    }

    @Test func serverWithoutCredentialsAcceptsUnsignedRequests() async throws {
        try await withServer(configure: { $0.credentials = [] }) { server, client in
            let put = try await client.send("PUT", "/photos/k", body: Data("open".utf8), signing: .anonymous)
            #expect(put.status == 200)
            #expect(try server.objectData(bucket: "photos", key: "k") == Data("open".utf8))
        }
    }
}
