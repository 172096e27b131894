import FakeS3
import Foundation
import S3Transfer
import TestSupport
import Testing

@testable import CloudAssets

/// `requestPlaybackURL`: a loopback server that streams an asset by range, fetching what is missing into the
/// partial cache, under the network gate, behind its token.
@Suite("Library: playback URLs", .heavy, .timeLimit(.minutes(2)))
struct PlaybackServerTests {
    /// A 3 MiB "video" (bytes; the server does not parse them).
    static let bytes = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })

    static func port(of url: URL) -> Int { url.port ?? 0 }
    static func target(of url: URL) -> String { url.path }

    @Test("a cloud-only video streams by range: 206 near the seek point, fetched by ranged GETs, and kept")
    func cloudOnlyRanges() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "clips/big.mp4", data: Self.bytes)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let url = try await library.requestPlaybackURL(for: asset, options: options)
            #expect(url.host == "127.0.0.1")
            #expect(try await library.requestPlaybackURL(for: asset, options: options) == url, "one URL per asset")
            harness.server.requestLog.clear()
            let seek: Int64 = 2 << 20
            let answer = try await RawHTTP.send(
                port: Self.port(of: url), "GET \(Self.target(of: url))",
                headers: ["Range": "bytes=\(seek)-\(seek + 999)"])
            #expect(answer.status == 206)
            #expect(answer.headers["accept-ranges"] == "bytes")
            #expect(answer.headers["content-range"] == "bytes \(seek)-\(seek + 999)/\(Self.bytes.count)")
            #expect(answer.body == Self.bytes[Int(seek)..<Int(seek) + 1000])
            // Only ranged GETs of the original, starting at the seek point: never the whole file.
            let gets = harness.gets(of: "clips/big.mp4")
            #expect(!gets.isEmpty && gets.allSatisfy { $0.rangeHeader?.hasPrefix("bytes=\(seek)") == true }, "\(gets)")
            #expect(try library.asset(path: "clips/big.mp4").availability == .partial)
            // The same range again: from the cache, no request.
            harness.server.requestLog.clear()
            let again = try await RawHTTP.send(
                port: Self.port(of: url), "GET \(Self.target(of: url))",
                headers: ["Range": "bytes=\(seek)-\(seek + 999)"])
            #expect(again.body == answer.body)
            #expect(harness.gets(of: "clips/big.mp4").isEmpty)
        }
    }

    @Test("whole, suffix and past-the-end ranges, HEAD, and two readers of one asset at once")
    func rangeForms() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "clips/big.mp4", data: Self.bytes)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let url = try await library.requestPlaybackURL(for: asset, options: options)
            let port = Self.port(of: url)
            let path = Self.target(of: url)
            let whole = try await RawHTTP.send(port: port, "GET \(path)")
            #expect(whole.status == 200 && whole.body == Self.bytes)
            #expect(whole.headers["content-length"] == String(Self.bytes.count))
            let suffix = try await RawHTTP.send(port: port, "GET \(path)", headers: ["Range": "bytes=-100"])
            #expect(suffix.status == 206 && suffix.body == Self.bytes.suffix(100))
            let past = try await RawHTTP.send(port: port, "GET \(path)", headers: ["Range": "bytes=\(1 << 30)-"])
            #expect(past.status == 416 && past.headers["content-range"] == "bytes */\(Self.bytes.count)")
            let head = try await RawHTTP.send(port: port, "HEAD \(path)", headers: ["Range": "bytes=10-19"])
            #expect(head.status == 206 && head.body.isEmpty && head.headers["content-length"] == "10")
            async let first = RawHTTP.send(port: port, "GET \(path)", headers: ["Range": "bytes=0-999999"])
            async let second = RawHTTP.send(port: port, "GET \(path)", headers: ["Range": "bytes=1500000-2499999"])
            let (a, b) = try await (first, second)
            #expect(a.body == Self.bytes[0..<1_000_000] && b.body == Self.bytes[1_500_000..<2_500_000])
        }
    }

    @Test("the network gate: without network a missing range is 503 and a local one still plays")
    func networkGate() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "clips/big.mp4", data: Self.bytes)
            let offline = try await library.requestPlaybackURL(for: asset)  // network not allowed (the default)
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            let online = try await library.requestPlaybackURL(for: asset, options: options)
            #expect(offline != online)
            let range = ["Range": "bytes=0-4095"]
            let refused = try await RawHTTP.send(
                port: Self.port(of: offline), "GET \(Self.target(of: offline))", headers: range)
            #expect(refused.status == 503)
            _ = try await RawHTTP.send(port: Self.port(of: online), "GET \(Self.target(of: online))", headers: range)
            harness.server.requestLog.clear()
            let local = try await RawHTTP.send(
                port: Self.port(of: offline), "GET \(Self.target(of: offline))", headers: range)
            #expect(local.status == 206 && local.body == Self.bytes.prefix(4096))
            #expect(harness.gets(of: "clips/big.mp4").isEmpty)
        }
    }

    @Test("the token: another token, path or method is refused; after close nothing answers")
    func token() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "clips/big.mp4", data: Self.bytes)
            let url = try await library.requestPlaybackURL(for: asset)
            let port = Self.port(of: url)
            let path = Self.target(of: url)
            let forged = path.replacingOccurrences(of: "/play/", with: "/play/0").dropLast(0)
            for target in ["/play/" + String(repeating: "0", count: 32) + "/big.mp4", String(forged), "/", "/play"] {
                #expect(try await RawHTTP.send(port: port, "GET \(target)").status == 404, "\(target)")
            }
            #expect(try await RawHTTP.send(port: port, "POST \(path)").status == 405)
            library.close()
            await library.playback.closed()
            #expect(!LoopbackSocket.canConnect(port: port))
        }
    }
}
