import Essentials
import Foundation
import NIOHTTP1
import Testing

@testable import FakeS3

@Suite("Parsing helpers")
struct ParsingTests {
    @Test(arguments: [
        ("originals/*", "originals/2020/a.png", true), ("originals/*", "thumbnails/a.jpg", false),
        ("*.jpg", "thumbnails/x/a.jpg", true), ("a?c", "abc", true), ("a?c", "ac", false), ("*", "", true),
        ("*a*b", "xxaxxbyb", true), ("exact", "exactly", false),
    ])
    func globMatchesWholeKeys(pattern: String, key: String, matches: Bool) {
        #expect(Glob.matches(pattern: Array(pattern.utf8), text: Array(key.utf8)) == matches)
    }

    @Test func xmlReaderDecodesEntitiesAndCDATAAndSkipsDeclarations() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- comment --><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Object><Key>a &amp; b &lt;c&gt; &#x41;&#66;</Key></Object>
              <Object><Key><![CDATA[<raw & text>]]></Key></Object>
            </Delete>
            """
        let root = try XMLElement.parse(Array(xml.utf8))
        #expect(root.name == "Delete")
        #expect(root.all("Object").compactMap { $0.child("Key")?.text } == ["a & b <c> AB", "<raw & text>"])
    }

    @Test(arguments: ["<a><b></a>", "<a>", "<a></a><b/>", "text", "<a>&bogus;</a>", ""])
    func xmlReaderRejectsMalformedDocuments(xml: String) {
        #expect(throws: S3Error.self) { try XMLElement.parse(Array(xml.utf8)) }
    }

    /// Each level of nesting was a call on the stack: a body of 10,000 `<a>`s (30 KB; a DeleteObjects body may
    /// hold 2 MiB) overflowed it and killed the server (Fuzz/regressions/server-xml).
    @Test func xmlReaderRefusesNestingPastItsBound() throws {
        let deep = String(repeating: "<a>", count: 200_000)
        #expect(throws: S3Error.self) { try XMLElement.parse(Array(deep.utf8)) }
        let limit = XMLElement.maxDepth
        let deepest = String(repeating: "<a>", count: limit) + "x" + String(repeating: "</a>", count: limit)
        var element = try XMLElement.parse(Array(deepest.utf8))
        for _ in 1..<limit { element = try #require(element.children.first) }
        #expect(element.text == "x")
        let over = "<a>" + deepest + "</a>"
        #expect(throws: S3Error.self) { try XMLElement.parse(Array(over.utf8)) }
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
    ])
    func httpDatesParseInAllThreeForms(text: String) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    /// A clock of exactly three fields of one or two digits: a negative or over-long field, or one that is not a
    /// number, makes the date malformed (`8:-44…:6` trapped: Fuzz/regressions/http-date).
    @Test(arguments: [
        "Sunday, 06-Nov-94 8:-4444444444444444:6 GMT", "Sunday, 06-Nov-94 08:x:49:37 GMT", "Sun Nov  6 08:49 1994",
        "Sun, 06 Nov 1994 08:49:370 GMT", "Sun, 06 Nov 1994 08::37 GMT", "Sun, 06 Nov 1994 +8:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
    ])
    func httpDatesWithAMalformedClockAreRefused(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    /// The byte-level reading of `Sun, 06 Nov 1994 08:49:37 GMT` gives what the token reading gives, and leaves
    /// every variant it does not read exactly (a sign, one digit, another zone, a longer weekday) to it.
    @Test func theFixdateFastPathAgreesWithTheTokenReading() {
        let read = [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Xyz, 31 Dec 9999 23:59:60 GMT", "Mon, 29 Feb 2021 00:00:00 GMT",
        ]
        for text in read {
            #expect(HTTPDate.parseFixdate(text) != nil && HTTPDate.parseFixdate(text) == HTTPDate.parseTokens(text))
        }
        let leftToTokens = [
            "Sun, +6 Nov 1994 08:49:37 GMT", "Sun,  6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 0000 08:49:37 GMT", "S,n, 06 Nov 1994 08:49:37 GMT",
        ]
        for text in leftToTokens {
            #expect(HTTPDate.parseFixdate(text) == nil)
            #expect(HTTPDate.parse(text) == HTTPDate.parseTokens(text))
        }
        #expect(HTTPDate.parse("Sun, +6 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func httpDateRoundTripsRFC1123() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(HTTPDate.rfc1123(date) == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.parse(HTTPDate.rfc1123(date)) == date)
        #expect(HTTPDate.iso8601(date) == "2023-11-14T22:13:20.000Z")
    }

    @Test func byteRangeResolvesLikeS3() {
        #expect(ByteRangeRequest(header: "bytes=0-0")?.resolve(size: 10) == .partial(0..<1))
        #expect(ByteRangeRequest(header: "bytes=5-")?.resolve(size: 10) == .partial(5..<10))
        #expect(ByteRangeRequest(header: "bytes=-3")?.resolve(size: 10) == .partial(7..<10))
        #expect(ByteRangeRequest(header: "bytes=10-")?.resolve(size: 10) == .unsatisfiable)
        #expect(ByteRangeRequest(header: "bytes=0-1,3-4") == nil)
        #expect(ByteRangeRequest(header: "bytes=-") == nil)
    }

    /// `%CC%81` after a `/` decodes to a combining mark that makes one Character with the slash: the bucket still
    /// ends at the slash byte, and the key keeps its first letter (Fuzz/regressions/server-request).
    @Test(arguments: ["/photos/%CC%81x", "/photos/%CC%81x?%CC%81a=%CC%81"])
    func aKeyStartingWithACombiningMarkStaysTheKeys(uri: String) throws {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: ["Host": "127.0.0.1:9000"])
        let request = try S3Request(head: head, virtualHostSuffixes: ["localhost"])
        #expect(request.bucket == "photos")
        #expect(request.key.map { Array($0.utf8) } == Array("\u{301}x".utf8))
        if uri.contains("?") {
            #expect(request.query.map { Array($0.name.utf8) } == [Array("\u{301}a".utf8)])
        }
    }

    @Test func crc64NVMEMatchesTheReferenceCheckValue() {
        // The CRC-64/NVME check value for "123456789".
        let value = Array("123456789".utf8).withUnsafeBytes { CRC64NVME.update(0, $0) }
        #expect(value == 0xAE8B_1486_0A79_9888)
    }
}
