import Foundation
import Testing

@testable import S3Transfer

@Suite struct ListingParserTests {
    static let page = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>photos</Name><Prefix>originals/</Prefix><KeyCount>3</KeyCount><MaxKeys>2</MaxKeys>
          <IsTruncated>true</IsTruncated>
          <Contents><Key>originals/a &amp; b.jpg</Key><LastModified>2024-05-01T10:20:30.000Z</LastModified>
            <ETag>&quot;9e107d9d372bb6826bd81d3542a419d6&quot;</ETag><Size>1234</Size><StorageClass>STANDARD</StorageClass></Contents>
          <Contents><Key>originals/caf\u{E9} +1.heic</Key><LastModified>2024-05-02T00:00:00Z</LastModified>
            <ETag>"d41d8cd98f00b204e9800998ecf8427e-2"</ETag><Size>0</Size></Contents>
          <CommonPrefixes><Prefix>originals/2024/</Prefix></CommonPrefixes>
          <NextContinuationToken>tok/en==</NextContinuationToken>
        </ListBucketResult>
        """

    @Test func parsesObjectsPrefixesAndToken() throws {
        let page = try S3Client.parseListing(Data(Self.page.utf8), bucket: "photos")
        #expect(page.objects.map(\.key) == ["originals/a & b.jpg", "originals/caf\u{E9} +1.heic"])
        #expect(page.objects[0].size == 1234)
        #expect(page.objects[0].etag == "9e107d9d372bb6826bd81d3542a419d6")
        #expect(page.objects[1].etag == "d41d8cd98f00b204e9800998ecf8427e-2")
        #expect(page.objects[0].lastModified == Date(timeIntervalSince1970: 1_714_558_830))
        #expect(page.commonPrefixes == ["originals/2024/"])
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "tok/en==")
    }

    @Test func everyTruncationOfAListingIsAnError() {
        let bytes = Array(Self.page.utf8)
        // Cut after the root's last child and everywhere before: never a short page.
        let end = bytes.count - 1
        var accepted: [Int] = []
        for cut in 0..<end {
            if (try? S3Client.parseListing(Data(bytes[0..<cut]), bucket: "photos")) != nil { accepted.append(cut) }
        }
        #expect(accepted.isEmpty)
    }

    @Test func truncatedListingWithoutTokenIsAnError() {
        let xml = Self.page.replacingOccurrences(
            of: "<NextContinuationToken>tok/en==</NextContinuationToken>", with: "")
        #expect(throws: S3Error.self) { try S3Client.parseListing(Data(xml.utf8)) }
    }

    @Test func keyCountDisagreeingWithEntriesIsAnError() {
        let xml = Self.page.replacingOccurrences(of: "<KeyCount>3</KeyCount>", with: "<KeyCount>4</KeyCount>")
        #expect(throws: S3Error.self) { try S3Client.parseListing(Data(xml.utf8)) }
    }

    @Test func entryMissingSizeIsAnError() {
        let xml = Self.page.replacingOccurrences(of: "<Size>1234</Size>", with: "")
        #expect(throws: S3Error.self) { try S3Client.parseListing(Data(xml.utf8)) }
    }

    @Test(arguments: [
        "<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>",
        "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResul>",
        "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult><extra/>",
        "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key></Contents></ListBucketResult>",
        "<Error><Code>InternalError</Code></Error>",
        "<ListBucketResult><IsTruncated>false</IsTruncated>&bogus;</ListBucketResult>",
        "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>-1</Size>"
            + "<ETag>x</ETag><LastModified>2024-01-01T00:00:00Z</LastModified></Contents></ListBucketResult>",
        "",
    ])
    func malformedListingsAreErrors(_ xml: String) {
        #expect(throws: S3Error.self) { try S3Client.parseListing(Data(xml.utf8)) }
    }

    @Test func lastPageNeedsNoToken() throws {
        let xml =
            "<ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>"
        let page = try S3Client.parseListing(Data(xml.utf8), bucket: "b")
        #expect(page.objects.isEmpty)
        #expect(!page.isTruncated)
        #expect(page.nextContinuationToken == nil)
    }

    /// Character data split by references, CDATA sections, comments and child elements reads as one text, in
    /// order; a single run is read as it lies.
    @Test func characterDataSplitAnyWayReadsAsOneText() throws {
        let cases: [(String, String)] = [
            ("<a>plain</a>", "plain"),
            ("<a></a>", ""),
            ("<a/>", ""),
            ("<a>x&amp;y</a>", "x&y"),
            ("<a>&lt;&gt;&quot;&apos;&#x41;&#66;</a>", "<>\"'AB"),
            ("<a>x<![CDATA[<&>]]>y</a>", "x<&>y"),
            ("<a><![CDATA[]]>y</a>", "y"),
            ("<a>x<![CDATA[]]></a>", "x"),
            ("<a>x<!-- c -->y<?pi?>z</a>", "xyz"),
            ("<a><!-- c --></a>", ""),
            ("<a>x<b>inner</b>y</a>", "xy"),
            ("<p:a>caf\u{E9} \u{65E5}</p:a>", "caf\u{E9} \u{65E5}"),
        ]
        for (xml, text) in cases {
            let root = try S3XMLParser.parse(Data(xml.utf8))
            #expect(root.text == text, "\(xml)")
            #expect(root.name == "a", "\(xml)")
        }
        let nested = try S3XMLParser.parse(Data("<a>x<b>inner</b>y</a>".utf8))
        #expect(nested.child("b")?.text == "inner")
        #expect(throws: S3Error.self) { try S3XMLParser.parse(Data("<a>x</ab>".utf8)) }
        #expect(throws: S3Error.self) { try S3XMLParser.parse(Data("<a>x</>".utf8)) }
        #expect(throws: S3Error.self) { try S3XMLParser.parse(Data("<p:a>x</a>".utf8)) }
        // A name with an empty prefix or local part, or two colons (`make fuzz`: Fuzz/regressions/s3-xml).
        for malformed in ["<:/>", "<a:/>", "<:a/>", "<p:q:a/>", "<a><:b/></a>"] {
            #expect(throws: S3Error.self, "\(malformed)") { try S3XMLParser.parse(Data(malformed.utf8)) }
        }
    }

    @Test func listingOfAnotherBucketIsAnError() {
        #expect(throws: S3Error.self) { try S3Client.parseListing(Data(Self.page.utf8), bucket: "other") }
    }
}
