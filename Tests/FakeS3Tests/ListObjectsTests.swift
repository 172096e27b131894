import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("ListObjectsV2, ListObjects, ListObjectVersions", .heavy)
struct ListObjectsTests {
    /// The values of every `<name>` element, in document order.
    func values(_ name: String, in text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: "<\(name)>"),
            let end = rest.range(of: "</\(name)>", range: start.upperBound..<rest.endIndex)
        {
            out.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return out
    }

    func seed(_ server: FakeS3Server, _ keys: [String]) throws {
        for k in keys { try server.putObject(bucket: "photos", key: k, data: Data(k.utf8)) }
    }

    @Test func keysComeInUTF8ByteOrder() async throws {
        try await withServer { server, client in
            // U+00E9 (C3 A9) sorts after "z"; U+FF21 after both; "B" before "a".
            try seed(server, ["é", "z", "a", "B", "Ａ"])
            let r = try await client.send("GET", "/photos", query: [("list-type", "2")])
            #expect(values("Key", in: r.text) == ["B", "a", "z", "é", "Ａ"])
            #expect(values("KeyCount", in: r.text) == ["5"])
        }
    }

    @Test func prefixAndDelimiterGiveCommonPrefixes() async throws {
        try await withServer { server, client in
            try seed(server, ["originals/2020/a.png", "originals/2021/b.png", "originals/c.png", "thumbnails/x.jpg"])
            let r = try await client.send(
                "GET", "/photos", query: [("list-type", "2"), ("prefix", "originals/"), ("delimiter", "/")])
            #expect(values("Key", in: r.text) == ["originals/c.png"])
            #expect(values("Prefix", in: r.text) == ["originals/", "originals/2020/", "originals/2021/"])
            #expect(values("KeyCount", in: r.text) == ["3"])
        }
    }

    @Test func continuationTokensPageThroughEverything() async throws {
        try await withServer { server, client in
            let keys = (0..<7).map { "k\($0)" } + ["p/1", "p/2", "p/3"]
            try seed(server, keys)
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                var query = [("list-type", "2"), ("max-keys", "3"), ("delimiter", "/")]
                if let token { query.append(("continuation-token", token)) }
                let r = try await client.send("GET", "/photos", query: query)
                if let token { #expect(values("ContinuationToken", in: r.text) == [token]) }
                seen += values("Key", in: r.text) + values("Prefix", in: r.text).filter { $0 == "p/" }
                token = values("NextContinuationToken", in: r.text).first
                #expect(values("IsTruncated", in: r.text) == [token == nil ? "false" : "true"])
                pages += 1
            } while token != nil
            #expect(seen == (0..<7).map { "k\($0)" } + ["p/"])
            #expect(pages == 3)
        }
    }

    @Test func startAfterSkipsEarlierKeys() async throws {
        try await withServer { server, client in
            try seed(server, ["a", "b", "c"])
            let r = try await client.send("GET", "/photos", query: [("list-type", "2"), ("start-after", "a")])
            #expect(values("Key", in: r.text) == ["b", "c"])
            #expect(values("StartAfter", in: r.text) == ["a"])
        }
    }

    @Test func urlEncodingTypeEncodesKeys() async throws {
        try await withServer { server, client in
            try seed(server, ["a b+c/é"])
            let r = try await client.send("GET", "/photos", query: [("list-type", "2"), ("encoding-type", "url")])
            #expect(values("Key", in: r.text) == ["a%20b%2Bc/%C3%A9"])
            #expect(values("EncodingType", in: r.text) == ["url"])
        }
    }

    @Test func fetchOwnerAddsOwner() async throws {
        try await withServer { server, client in
            try seed(server, ["a"])
            let without = try await client.send("GET", "/photos", query: [("list-type", "2")])
            #expect(!without.text.contains("<Owner>"))
            let with = try await client.send("GET", "/photos", query: [("list-type", "2"), ("fetch-owner", "true")])
            #expect(with.text.contains("<Owner>"))
        }
    }

    @Test func invalidMaxKeysIsInvalidArgument() async throws {
        try await withServer { _, client in
            let r = try await client.send("GET", "/photos", query: [("list-type", "2"), ("max-keys", "lots")])
            #expect(r.errorCode == "InvalidArgument")
        }
    }

    @Test func listObjectsV1UsesMarkers() async throws {
        try await withServer { server, client in
            try seed(server, ["a", "b", "c"])
            let r = try await client.send("GET", "/photos", query: [("marker", "a"), ("max-keys", "1")])
            #expect(values("Key", in: r.text) == ["b"])
            #expect(values("IsTruncated", in: r.text) == ["true"])
        }
    }

    @Test func listObjectVersionsReportsNullVersions() async throws {
        try await withServer { server, client in
            try seed(server, ["a", "b"])
            let r = try await client.send("GET", "/photos", query: [("versions", "")])
            #expect(values("Key", in: r.text) == ["a", "b"])
            #expect(values("VersionId", in: r.text) == ["null", "null"])
            #expect(values("IsLatest", in: r.text) == ["true", "true"])
        }
    }
}
