import AWSSigV4
import Essentials
package import Foundation

extension S3Client {
    /// Lists one page of a bucket (ListObjectsV2).
    ///
    /// The response is parsed strictly: a malformed, truncated or incomplete listing throws
    /// ``S3Error/malformedResponse(_:)`` and never yields a short page; `IsTruncated` true without a
    /// continuation token is an error too.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - prefix: Only keys starting with this.
    ///   - delimiter: Group keys sharing a prefix up to this into ``ListObjectsPage/commonPrefixes``.
    ///   - continuationToken: The previous page's ``ListObjectsPage/nextContinuationToken``.
    ///   - startAfter: Only keys after this one.
    ///   - maxKeys: The most keys on the page (the service caps it at 1000).
    /// - Returns: The page.
    package func listObjectsV2(
        bucket: String, prefix: String? = nil, delimiter: String? = nil, continuationToken: String? = nil,
        startAfter: String? = nil, maxKeys: Int? = nil
    ) async throws(S3Error) -> ListObjectsPage {
        var query: [(name: String, value: String)] = [("list-type", "2")]
        if let prefix { query.append(("prefix", prefix)) }
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        if let startAfter { query.append(("start-after", startAfter)) }
        if let maxKeys { query.append(("max-keys", String(maxKeys))) }
        let (_, body) = try await send {
            makeRequest(method: "GET", bucket: bucket, key: nil, query: query, credentials: $0)
        }
        return try Self.parseListing(body, bucket: bucket)
    }

    /// Lists every page under a prefix, one element per page, in order. The stream ends after the last page
    /// or throws the first error (then no further pages follow). Cancelling the consuming task stops it.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - prefix: Only keys starting with this.
    /// - Returns: The pages.
    package func listAllObjects(bucket: String, prefix: String? = nil) -> AsyncThrowingStream<
        ListObjectsPage, any Error
    > {
        AsyncThrowingStream { continuation in
            let task = Task {
                var token: String?
                var seen = Set<String>()
                do {
                    repeat {
                        let page = try await listObjectsV2(bucket: bucket, prefix: prefix, continuationToken: token)
                        continuation.yield(page)
                        token = page.isTruncated ? page.nextContinuationToken : nil
                        if let next = token, !seen.insert(next).inserted {
                            throw S3Error.malformedResponse("the listing repeated continuation token \(next)")
                        }
                    } while token != nil
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Parses a ListBucketResult document strictly.
    package static func parseListing(_ body: Data, bucket: String? = nil) throws(S3Error) -> ListObjectsPage {
        let root = try S3XMLParser.parse(body)
        guard root.name == "ListBucketResult" else {
            throw .malformedResponse("expected <ListBucketResult>, got <\(root.name)>")
        }
        if let bucket, let name = root.child("Name")?.text, name != bucket {
            throw .malformedResponse("listing is for bucket \(name), not \(bucket)")
        }
        let truncatedText = try root.requiredText("IsTruncated")
        let isTruncated: Bool
        switch truncatedText {
        case "true": isTruncated = true
        case "false": isTruncated = false
        default: throw .malformedResponse("IsTruncated is \"\(truncatedText)\"")
        }
        let urlEncoded = root.child("EncodingType")?.text == "url"
        func decode(_ s: String) throws(S3Error) -> String {
            guard urlEncoded else { return s }
            guard let decoded = SigV4.percentDecode(s, plusAsSpace: true) else {
                throw .malformedResponse("bad url-encoded key \(s)")
            }
            return decoded
        }
        var objects: [S3ObjectSummary] = []
        for element in root.children("Contents") {
            let key = try decode(try element.requiredText("Key"))
            let sizeText = try element.requiredText("Size")
            guard let size = Int64(sizeText), size >= 0 else {
                throw .malformedResponse("bad Size \(sizeText) of \(key)")
            }
            let etag = S3ETag.unquoted(try element.requiredText("ETag"))
            let modifiedText = try element.requiredText("LastModified")
            guard let modified = HTTPDate.parseISO8601(modifiedText) else {
                throw .malformedResponse("bad LastModified \(modifiedText) of \(key)")
            }
            guard !key.isEmpty else { throw .malformedResponse("empty Key in listing") }
            objects.append(S3ObjectSummary(key: key, size: size, etag: etag, lastModified: modified))
        }
        var prefixes: [String] = []
        for element in root.children("CommonPrefixes") {
            prefixes.append(try decode(try element.requiredText("Prefix")))
        }
        if let countText = root.child("KeyCount")?.text {
            guard let count = Int(countText), count == objects.count + prefixes.count else {
                throw .malformedResponse(
                    "KeyCount \(countText) but \(objects.count) objects and \(prefixes.count) prefixes: incomplete listing"
                )
            }
        }
        var token = root.child("NextContinuationToken")?.text
        if token?.isEmpty == true { token = nil }
        if isTruncated, token == nil {
            throw .malformedResponse("IsTruncated is true but there is no NextContinuationToken")
        }
        return ListObjectsPage(
            objects: objects, commonPrefixes: prefixes, isTruncated: isTruncated,
            nextContinuationToken: isTruncated ? token : nil)
    }
}
