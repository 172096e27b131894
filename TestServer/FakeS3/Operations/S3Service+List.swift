import AWSSigV4
import Essentials
import Foundation

extension S3Service {
    /// One page of a listing: keys and common prefixes in UTF-8 byte order.
    struct ListPage {
        var contents: [ObjectInfo] = []
        var commonPrefixes: [String] = []
        var isTruncated = false
        /// The last key or common prefix on the page (where the next page starts after).
        var last: String?
    }

    /// Lists up to `maxKeys` entries after `marker` (exclusive) under `prefix`, rolling keys that
    /// contain `delimiter` after the prefix into common prefixes (each counts as one entry).
    func listPage(bucket: String, prefix: String, delimiter: String, marker: String?, maxKeys: Int) throws(S3Error)
        -> ListPage
    {
        let prefixBytes = Array(prefix.utf8)
        let delimiterBytes = Array(delimiter.utf8)
        let markerBytes = marker.map { KeyBytes($0) }
        return try store.withSortedObjects(bucket: bucket) { (keys, objects) throws(S3Error) -> ListPage in
            var page = ListPage()
            if maxKeys == 0 { return page }  // as S3: nothing listed, not truncated
            // First key ≥ prefix and > marker.
            var lower = KeyBytes(prefix)
            var strictlyAfter = false
            if let markerBytes, markerBytes >= lower {
                lower = markerBytes
                strictlyAfter = true
            }
            var lo = 0
            var hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if keys[mid] < lower || (strictlyAfter && keys[mid] == lower) { lo = mid + 1 } else { hi = mid }
            }
            var count = 0
            var lastPrefix: [UInt8]?
            var i = lo
            while i < keys.count {
                let key = keys[i]
                i += 1
                guard key.hasPrefix(prefixBytes) else { break }
                var commonPrefix: [UInt8]?
                if !delimiterBytes.isEmpty,
                    let range = Self.firstRange(of: delimiterBytes, in: key.bytes, from: prefixBytes.count)
                {
                    commonPrefix = Array(key.bytes[0..<range.upperBound])
                }
                if let cp = commonPrefix {
                    if cp == lastPrefix { continue }
                    if let markerBytes, !(markerBytes < KeyBytes(bytes: cp)) { continue }
                    if count == maxKeys {
                        page.isTruncated = true
                        break
                    }
                    lastPrefix = cp
                    let s = String(decoding: cp, as: UTF8.self)
                    page.commonPrefixes.append(s)
                    page.last = s
                } else {
                    if count == maxKeys {
                        page.isTruncated = true
                        break
                    }
                    let info = objects[key]!.info
                    page.contents.append(info)
                    page.last = info.key
                }
                count += 1
            }
            return page
        }
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Range<Int>? {
        guard needle.count <= haystack.count - start else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) {
                return i..<(i + needle.count)
            }
            i += 1
        }
        return nil
    }

    static func maxKeys(_ request: S3Request) throws(S3Error) -> Int {
        guard let raw = request.queryValue("max-keys") else { return 1000 }
        guard let n = Int(raw), n >= 0 else {
            throw .invalidArgument(
                "Provided max-keys not an integer or within integer range", name: "max-keys", value: raw)
        }
        return min(n, 1000)
    }

    static func encoder(_ request: S3Request) throws(S3Error) -> (String) -> String {
        guard let type = request.queryValue("encoding-type") else { return { $0 } }
        guard type == "url" else {
            throw .invalidArgument("Invalid Encoding Method specified in Request", name: "encoding-type", value: type)
        }
        return { SigV4.uriEncode($0, encodeSlash: false) }
    }

    private func writeContents(_ x: inout XMLWriter, _ info: ObjectInfo, encode: (String) -> String, owner: Bool) {
        x.open("Contents", namespace: false)
        x.element("Key", encode(info.key))
        x.element("LastModified", HTTPDate.iso8601(info.lastModified))
        x.element("ETag", info.etag)
        x.element("Size", info.size)
        if owner { writeOwner(&x) }
        x.element("StorageClass", "STANDARD")
        x.close("Contents")
    }

    func writeOwner(_ x: inout XMLWriter) {
        x.open("Owner", namespace: false)
        x.element("ID", Self.ownerID)
        x.element("DisplayName", Self.ownerName)
        x.close("Owner")
    }

    private func writePrefixes(_ x: inout XMLWriter, _ prefixes: [String], encode: (String) -> String) {
        for p in prefixes {
            x.open("CommonPrefixes", namespace: false)
            x.element("Prefix", encode(p))
            x.close("CommonPrefixes")
        }
    }

    func listObjectsV2(_ bucket: String, _ request: S3Request) throws(S3Error) -> S3Response {
        let prefix = request.queryValue("prefix") ?? ""
        let delimiter = request.queryValue("delimiter") ?? ""
        let maxKeys = try Self.maxKeys(request)
        let encode = try Self.encoder(request)
        let startAfter = request.queryValue("start-after")
        let token = request.queryValue("continuation-token")
        var marker = startAfter
        if let token {
            guard let data = Data(base64Encoded: token), let decoded = String(data: data, encoding: .utf8),
                decoded.hasPrefix("v2:")
            else {
                throw .invalidArgument(
                    "The continuation token provided is incorrect", name: "continuation-token", value: token)
            }
            marker = String(decoded.dropFirst(3))
        }
        let fetchOwner = request.queryValue("fetch-owner") == "true"
        let page = try listPage(
            bucket: bucket, prefix: prefix, delimiter: delimiter, marker: marker, maxKeys: maxKeys)
        var x = XMLWriter()
        x.open("ListBucketResult")
        x.element("Name", bucket)
        x.element("Prefix", encode(prefix))
        if let token { x.element("ContinuationToken", token) }
        if let startAfter { x.element("StartAfter", encode(startAfter)) }
        x.element("KeyCount", page.contents.count + page.commonPrefixes.count)
        x.element("MaxKeys", maxKeys)
        if !delimiter.isEmpty { x.element("Delimiter", encode(delimiter)) }
        if request.queryValue("encoding-type") != nil { x.element("EncodingType", "url") }
        x.element("IsTruncated", page.isTruncated)
        if page.isTruncated, let last = page.last {
            x.element("NextContinuationToken", Data("v2:\(last)".utf8).base64EncodedString())
        }
        for info in page.contents { writeContents(&x, info, encode: encode, owner: fetchOwner) }
        writePrefixes(&x, page.commonPrefixes, encode: encode)
        x.close("ListBucketResult")
        return .xml(x.document)
    }

    func listObjectsV1(_ bucket: String, _ request: S3Request) throws(S3Error) -> S3Response {
        let prefix = request.queryValue("prefix") ?? ""
        let delimiter = request.queryValue("delimiter") ?? ""
        let maxKeys = try Self.maxKeys(request)
        let encode = try Self.encoder(request)
        let marker = request.queryValue("marker")
        let page = try listPage(
            bucket: bucket, prefix: prefix, delimiter: delimiter, marker: marker, maxKeys: maxKeys)
        var x = XMLWriter()
        x.open("ListBucketResult")
        x.element("Name", bucket)
        x.element("Prefix", encode(prefix))
        x.element("Marker", encode(marker ?? ""))
        if page.isTruncated, !delimiter.isEmpty, let last = page.last { x.element("NextMarker", encode(last)) }
        x.element("MaxKeys", maxKeys)
        if !delimiter.isEmpty { x.element("Delimiter", encode(delimiter)) }
        if request.queryValue("encoding-type") != nil { x.element("EncodingType", "url") }
        x.element("IsTruncated", page.isTruncated)
        for info in page.contents { writeContents(&x, info, encode: encode, owner: true) }
        writePrefixes(&x, page.commonPrefixes, encode: encode)
        x.close("ListBucketResult")
        return .xml(x.document)
    }
}
