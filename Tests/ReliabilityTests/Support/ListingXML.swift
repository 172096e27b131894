import Foundation

/// Builds ListObjectsV2 answers, honest or not.
enum ListingXML {
    struct Entry {
        var key: String
        var size: Int
        var etag: String
    }

    /// A complete, well-formed page.
    static func page(_ entries: [Entry], urlEncoded: Bool = false) -> Data {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>photos</Name>
            """
        if urlEncoded { xml += "<EncodingType>url</EncodingType>" }
        xml += "<KeyCount>\(entries.count)</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
        for entry in entries {
            xml += "<Contents><Key>\(escape(entry.key))</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified>"
            xml += "<ETag>&quot;\(entry.etag)&quot;</ETag><Size>\(entry.size)</Size>"
            xml += "<StorageClass>STANDARD</StorageClass></Contents>"
        }
        xml += "</ListBucketResult>"
        return Data(xml.utf8)
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
