import AWSSigV4
import Essentials
import FakeS3
import Foundation
import S3Transfer

extension FuzzCatalog {
    /// Every response body the client reads as XML: the parser must return a whole tree or a typed error, and the
    /// listing reader must keep its promises about what it returns.
    static let s3XML = FuzzTarget(
        name: "s3-xml",
        summary: "S3XMLParser and the listing / error readers on any body; a listing's fields within its document",
        maxLength: 16_384,
        cpuMinutesGoal: 30,
        seeds: {
            [
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>photos</Name>\
                <Prefix>originals/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>\
                <IsTruncated>true</IsTruncated><NextContinuationToken>abc</NextContinuationToken>\
                <Contents><Key>originals/a&amp;b.jpg</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>\
                <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size></Contents>\
                </ListBucketResult>
                """,
                """
                <ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>\
                <Contents><Key>a%2Bb+c</Key><LastModified>2009-10-12T17:50:30Z</LastModified><ETag>x</ETag>\
                <Size>0</Size></Contents><CommonPrefixes><Prefix>p%2F</Prefix></CommonPrefixes></ListBucketResult>
                """,
                """
                <?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The resource \
                you requested does not exist</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>
                """,
                "<a><!-- c --><b>&#x41;&#66;&lt;&gt;</b><![CDATA[x<y]]></a>",
                """
                <ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>7</NextPartNumberMarker>\
                <ChecksumAlgorithm>CRC32C</ChecksumAlgorithm><Part><PartNumber>6</PartNumber><Size>5242880</Size>\
                <ETag>"e"</ETag><ChecksumCRC32C>AAAAAA==</ChecksumCRC32C></Part></ListPartsResult>
                """,
                "<InitiateMultipartUploadResult><UploadId>VXBsb2Fk</UploadId></InitiateMultipartUploadResult>",
                """
                <CompleteMultipartUploadResult><ETag>"3858f62230ac3c915f300c664312c11f-9"</ETag>\
                <ChecksumCRC32C>sOO8/Q==-9</ChecksumCRC32C></CompleteMultipartUploadResult>
                """,
                """
                <AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA</AccessKeyId>\
                <SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken>\
                <Expiration>2026-05-01T12:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>
                """,
            ].map { Array($0.utf8) }
        },
        check: { bytes throws(FuzzFailure) in
            let body = Data(bytes)
            if let root = try? S3XMLParser.parse(body) {
                try expect(!root.name.isEmpty, "a parsed root element has no name")
                // Entities decode to fewer bytes than they take; an ill-formed UTF-8 byte becomes U+FFFD (three).
                try expect(textBytes(root) <= 3 * bytes.count, "the tree holds more text than the document allows")
            }
            if let page = try? S3Client.parseListing(body) {
                try expect(page.objects.allSatisfy { !$0.key.isEmpty && $0.size >= 0 }, "empty key or negative size")
                try expect(!page.isTruncated || page.nextContinuationToken != nil, "truncated page without a token")
            }
            _ = S3Client.embeddedError(body)
            if let id = try? S3Client.parseUploadID(body) { try expect(!id.isEmpty, "an empty upload id") }
            if let page = try? S3Client.parsePartsPage(body, checksum: .crc32c, marker: 5) {
                try expect(page.nextMarker.map { $0 > 5 } ?? true, "a truncated parts page that does not advance")
            }
            _ = try? S3Client.parseCompletion(body)
            for status in [200, 403] {
                if let issued = try? STSClient.issued(body, status: status, result: "AssumeRoleResult", provider: "f") {
                    try expect(status == 200, "credentials issued by an answer of status \(status)")
                    try expect(
                        !issued.credentials.accessKeyID.isEmpty && !issued.credentials.secretAccessKey.isEmpty,
                        "credentials issued without a key or a secret")
                }
            }
        })

    /// The bytes of every name and text in the tree (entities decode to no more bytes than they take).
    private static func textBytes(_ element: S3XMLElement) -> Int {
        element.children.reduce(element.name.utf8.count + element.text.utf8.count) { $0 + textBytes($1) }
    }
}

extension FuzzCatalog {
    /// The fake server's XML writer against the client's parser: a listing of any keys (any Unicode: markup,
    /// quotes, control characters, ill-formed UTF-8 turned into U+FFFD), written as the server writes one, plain
    /// or url-encoded, parses back to exactly those keys, sizes, ETags and dates.
    static let listingRoundTrip = FuzzTarget(
        name: "listing-roundtrip",
        summary: "FakeS3's XMLWriter → S3Client.parseListing; keys, sizes, ETags, dates and prefixes come back",
        maxLength: 2048,
        cpuMinutesGoal: 30,
        seeds: { [Array("\u{0}\u{3}a&b<c>\"d'\u{1F}\u{7F}é/f g+h%".utf8), Array(repeating: 0x41, count: 64)] },
        check: { bytes throws(FuzzFailure) in
            var reader = FuzzReader(bytes)
            let urlEncoded = reader.byte() & 1 == 1
            var objects: [S3ObjectSummary] = []
            for _ in 0..<Int(reader.byte() % 8) {
                var key = reader.string(upTo: 48)
                if key.isEmpty { key = "k" }
                let size = Int64(reader.uint32())
                let millis = Int64(reader.uint64() % 253_402_300_799_000)
                let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
                objects.append(
                    S3ObjectSummary(key: key, size: size, etag: reader.string(upTo: 34), lastModified: date))
            }
            let prefixes = (0..<Int(reader.byte() % 3)).map { _ in reader.string(upTo: 16) }
            let encode: (String) -> String = { urlEncoded ? SigV4.uriEncode($0, encodeSlash: false) : $0 }
            var x = XMLWriter()
            x.open("ListBucketResult")
            x.element("Name", "photos")
            x.element("KeyCount", objects.count + prefixes.count)
            if urlEncoded { x.element("EncodingType", "url") }
            x.element("IsTruncated", false)
            for object in objects {
                x.open("Contents", namespace: false)
                x.element("Key", encode(object.key))
                x.element("LastModified", HTTPDate.iso8601(object.lastModified))
                x.element("ETag", S3ETag.quoted(object.etag))
                x.element("Size", object.size)
                x.close("Contents")
            }
            for prefix in prefixes {
                x.open("CommonPrefixes", namespace: false)
                x.element("Prefix", encode(prefix))
                x.close("CommonPrefixes")
            }
            x.close("ListBucketResult")
            let page: ListObjectsPage
            do {
                page = try S3Client.parseListing(Data(x.document.utf8), bucket: "photos")
            } catch {
                throw FuzzFailure("the server's listing does not parse: \(error)\n\(x.document)")
            }
            try expect(page.commonPrefixes == prefixes, "prefixes \(prefixes) came back as \(page.commonPrefixes)")
            try expect(
                page.objects.count == objects.count, "\(objects.count) objects came back as \(page.objects.count)")
            for (sent, got) in zip(objects, page.objects) {
                try expect(
                    got.key == sent.key && got.size == sent.size
                        && got.etag == S3ETag.unquoted(S3ETag.quoted(sent.etag))
                        && abs(got.lastModified.timeIntervalSince(sent.lastModified)) < 0.001,
                    "\(sent) (\(sent.lastModified.timeIntervalSince1970)) came back as \(got) (\(got.lastModified.timeIntervalSince1970))"
                )
            }
        })
}
