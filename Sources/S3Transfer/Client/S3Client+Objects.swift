import AWSSigV4
import CZlib
package import Foundation
import Hashing

extension S3Client {
    /// Reads an object's size, ETag, dates, content type, user metadata and checksums (HeadObject, with
    /// checksum mode enabled).
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    /// - Returns: The head. A missing key throws ``S3Error/noSuchKey``.
    package func headObject(bucket: String, key: String) async throws(S3Error) -> S3ObjectHead {
        let (head, _) = try await send { headRequest(bucket: bucket, key: key, checksums: true, credentials: $0) }
        return try S3ObjectHead(head: head)
    }

    /// ``headObject(bucket:key:)`` of many objects at once, for a pass over a whole bucket (not in checksum mode:
    /// the heads carry no ``S3ObjectHead/checksums`` unless an object had to be asked again): the requests are
    /// signed together and handed to the engine in one go, and the answers come back together (a request per
    /// object, without the two thread hops per request of one at a time). An object whose request failed in a
    /// way another attempt may cure (the connection, a 5xx, throttling, the clock) is asked again alone, through
    /// the usual retry loop; the batch's attempt is not counted in that loop's budget.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - keys: The keys, any number (the engine's connection limits apply; keep a batch to a few times them).
    /// - Returns: Each key's head or error, in the order of `keys` (a missing key: ``S3Error/noSuchKey``).
    package func headObjects(bucket: String, keys: [String]) async -> [Result<S3ObjectHead, S3Error>] {
        guard !keys.isEmpty else { return [] }
        let credentials: AWSCredentials?
        do {
            credentials = try await signingCredentials()
        } catch {
            return keys.map { _ in .failure(error) }
        }
        let requests = keys.map { headRequest(bucket: bucket, key: $0, checksums: false, credentials: credentials) }
        let observer = configuration.observer
        let started = observer != nil ? TransferObserver.now() : 0
        let responses = await engine.responses(for: requests, bodyLimit: 64 << 10)
        var results: [Result<S3ObjectHead, S3Error>] = []
        results.reserveCapacity(keys.count)
        for (index, (key, response)) in zip(keys, responses).enumerated() {
            let failure: S3Error
            switch response {
            case .success(let (head, body)):
                observer?.onResponse("HEAD", head.status)
                // The batch's requests went together: each is told with the batch's duration.
                if (200..<300).contains(head.status) {
                    observer?.ended(
                        requests[index], attempt: 1, status: head.status, received: 0, started: started, failure: nil)
                    results.append(Result { () throws(S3Error) in try S3ObjectHead(head: head) })
                    continue
                }
                failure = error(for: head, body: body)
                observer?.ended(
                    requests[index], attempt: 1, status: head.status, received: Int64(body.count), started: started,
                    failure: failure)
            case .failure(let transport):
                failure = S3Error(transport)
                observer?.ended(
                    requests[index], attempt: 1, status: nil, received: 0, started: started, failure: failure)
            }
            switch failure {
            case .noSuchKey, .preconditionFailed, .accessDenied, .noSuchBucket:
                results.append(.failure(failure))
            default:
                // Whatever another attempt may cure, the one retry loop decides (and says it retried).
                if Task.isCancelled {
                    results.append(.failure(.cancelled))
                    continue
                }
                do {
                    results.append(.success(try await headObject(bucket: bucket, key: key)))
                } catch {
                    results.append(.failure(error))
                }
            }
        }
        return results
    }

    /// A signed HeadObject request, keeping of a successful answer only the headers ``S3ObjectHead`` reads; with
    /// `checksums`, in checksum mode (the object's full-object checksums come back).
    private func headRequest(bucket: String, key: String, checksums: Bool, credentials: AWSCredentials?)
        -> HTTPRequest
    {
        var request = makeRequest(
            method: "HEAD", bucket: bucket, key: key, headers: checksums ? [("x-amz-checksum-mode", "ENABLED")] : [],
            credentials: credentials)
        request.successHeaders = S3ObjectHead.headersRead
        return request
    }

    /// Reads a small object (or a range of one) into memory — meant for thumbnails and sidecars, not originals
    /// (use ``Downloader`` for those).
    ///
    /// The body's length is checked against the response; a whole object is also checked against its MD5
    /// ETag and any checksum the service returns (``S3Error/checksumMismatch(expected:actual:algorithm:)``).
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - range: A byte range, or nil for the whole object.
    ///   - ifMatch: Only if the object still has this ETag (else ``S3Error/preconditionFailed``).
    /// - Returns: The bytes and the object's head (its ``S3ObjectHead/size`` is the whole object's).
    package func getObject(bucket: String, key: String, range: Range<Int64>? = nil, ifMatch: String? = nil)
        async throws(S3Error) -> (Data, S3ObjectHead)
    {
        var headers: [(name: String, value: String)] = [("x-amz-checksum-mode", "ENABLED")]
        if let range {
            guard !range.isEmpty, range.lowerBound >= 0 else { throw .invalidRange }
            headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        if let ifMatch { headers.append(("if-match", S3ETag.quoted(S3ETag.unquoted(ifMatch)))) }
        let (head, body) = try await send {
            makeRequest(method: "GET", bucket: bucket, key: key, headers: headers, credentials: $0)
        }
        let objectHead = try S3ObjectHead(head: head)
        if let length = head["content-length"].flatMap({ Int($0) }), length != body.count {
            throw .transport(curlCode: 18, message: "got \(body.count) of \(length) bytes")
        }
        if head.status == 200 {
            guard Int64(body.count) == objectHead.size else {
                throw .malformedResponse("body of \(body.count) bytes for an object of \(objectHead.size)")
            }
            let verifier = IntegrityHasher(etag: objectHead.etag, checksums: objectHead.checksums)
            body.withUnsafeBytes { verifier.update($0) }
            if let mismatch = verifier.firstMismatch() { throw mismatch }
        } else if let range {
            guard let served = head["content-range"].flatMap(ContentRange.init(header:)),
                served.range == range.clamped(to: 0..<objectHead.size)
            else { throw .malformedResponse("the service sent a different range than asked for") }
        }
        return (body, objectHead)
    }

    /// Reads a whole object of at most `maxBytes` bytes into memory, never more: the request asks for the first
    /// `maxBytes + 1` bytes only (a `Range` request), so an object that is larger — or grew since it was listed —
    /// costs at most that much memory and transfer, and is answered `nil`.
    ///
    /// A body that is the whole object is checked as ``getObject(bucket:key:range:ifMatch:)`` checks one: its
    /// length, and its MD5 ETag.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - maxBytes: The largest object to read (at least 0).
    /// - Returns: The bytes and the object's head, or nil when the object holds more than `maxBytes` bytes. A
    ///   missing key throws ``S3Error/noSuchKey``.
    package func getObject(bucket: String, key: String, maxBytes: Int) async throws(S3Error) -> (Data, S3ObjectHead)? {
        let limit = Int64(max(0, maxBytes))
        let read: (Data, S3ObjectHead)
        do {
            read = try await getObject(bucket: bucket, key: key, range: 0..<(limit + 1))
        } catch .invalidRange {
            // An empty object has no first byte to ask for: read its head, and the (empty) object only then.
            let head = try await headObject(bucket: bucket, key: key)
            guard head.size <= limit else { return nil }
            let whole = try await getObject(bucket: bucket, key: key)
            return Int64(whole.0.count) <= limit ? whole : nil
        }
        let (body, head) = read
        guard head.size <= limit, Int64(body.count) == head.size else { return nil }
        let verifier = IntegrityHasher(etag: head.etag, checksums: S3Checksums())
        body.withUnsafeBytes { verifier.update($0) }
        if let mismatch = verifier.firstMismatch() { throw mismatch }
        return (body, head)
    }

    /// Writes an object in one request, signed over the body's SHA-256.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - body: The bytes.
    ///   - contentType: The `Content-Type` to store.
    ///   - metadata: User metadata, stored as `x-amz-meta-*`.
    ///   - checksum: A full-object checksum to send (`x-amz-checksum-<name>`): the service verifies it and keeps
    ///     it, and later downloads can verify with it (CRC-32C costs far less than the ETag's MD5).
    /// - Returns: The new ETag.
    @discardableResult
    package func putObject(
        bucket: String, key: String, body: Data, contentType: String? = nil, metadata: [String: String] = [:],
        checksum: S3ChecksumAlgorithm? = nil
    ) async throws(S3Error) -> String {
        var headers: [(name: String, value: String)] = [("content-length", String(body.count))]
        if let contentType { headers.append(("content-type", contentType)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            headers.append(("x-amz-meta-\(name.lowercased())", value))
        }
        headers.append(("content-md5", Data(Insecure.MD5.hash(data: body)).base64EncodedString()))
        if let checksum { headers.append(("x-amz-checksum-\(checksum.rawValue)", checksum.checksum(of: body))) }
        let (head, _) = try await send {
            makeRequest(method: "PUT", bucket: bucket, key: key, headers: headers, body: body, credentials: $0)
        }
        return S3ETag.unquoted(head["etag"] ?? "")
    }

    /// Deletes an object. Deleting a key that does not exist succeeds, as in S3.
    /// - Parameters:
    ///   - bucket: The bucket.
    ///   - key: The key.
    package func deleteObject(bucket: String, key: String) async throws(S3Error) {
        _ = try await send { makeRequest(method: "DELETE", bucket: bucket, key: key, credentials: $0) }
    }
}
