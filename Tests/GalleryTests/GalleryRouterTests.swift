import Gallery
import NIOHTTP1
import Testing

/// The router's request checks on their own (the fuzz target gallery-router runs them on any input).
@Suite("Gallery router checks")
struct GalleryRouterTests {
    /// `%CC%81` after a `/` decodes to a combining mark that makes one Character with the slash: a Character search
    /// for `/` missed it, and `..` passed as part of a longer "segment" (Fuzz/regressions/gallery-router).
    @Test(arguments: ["/a/../%CC%81b", "/%CC%81/..", "/a/%2E%2E/%CC%81", "/a/./%CC%81x", "/a//%CC%81"])
    func aDotSegmentBeforeACombiningMarkIsRefused(target: String) {
        #expect(GalleryRouter.parseTarget(target) == nil)
    }

    /// Foundation's `removingPercentEncoding` puts U+FFFD for escaped bytes that are not UTF-8 on Linux (and
    /// returns nil on macOS): such a path is refused on both (Fuzz/regressions/gallery-router).
    @Test func anEscapeOfBytesThatAreNotUTF8IsRefused() throws {
        #expect(GalleryRouter.parseTarget("/'C3%A9") == nil)
        #expect(GalleryRouter.parseTarget("/api/%FF%FE") == nil)
        let parsed = try #require(GalleryRouter.parseTarget("/api/info?%FF=1&token=%C3%A9"))
        #expect(parsed.query[""] == "1")
        #expect(parsed.query["token"] == "é")
    }

    @Test func aSegmentStartingWithACombiningMarkIsKeptWhole() throws {
        let parsed = try #require(GalleryRouter.parseTarget("/api/thumbnails/%CC%81x?%CC%81=%CC%81&token=t"))
        #expect(Array(parsed.path.utf8) == Array("/api/thumbnails/\u{301}x".utf8))
        #expect(parsed.query["token"] == "t")
        #expect(parsed.query["\u{301}"] == "\u{301}")
    }

    /// A port is ASCII digits (`\.isNumber` took `٣` and `½`), and a plain name ends at its first colon: an
    /// unbracketed IPv6 literal (`::1:80`) names nothing (Fuzz/regressions/gallery-router).
    @Test(arguments: [
        ("localhost:8080", true), ("[::1]:1", true), ("LOCALHOST", true), ("127.0.0.1:", true), ("[127.0.0.1]", true),
        ("localhost:\u{663}", false), ("localhost:\u{BD}", false), ("::1:80", false), ("::1", false),
        ("localhost:80:80", false), ("[::1]x", false), ("localhost.evil", false), ("localhost, evil", false),
    ])
    func hostRule(host: String, allowed: Bool) {
        #expect(GalleryRouter.hostAllowed(HTTPHeaders([("Host", host)]), boundHost: "127.0.0.1") == allowed)
    }
}
