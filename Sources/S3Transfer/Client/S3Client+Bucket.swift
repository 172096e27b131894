import AWSSigV4
package import Foundation

extension S3Client {
    /// Creates a bucket (in the configured region's default location).
    /// - Parameter bucket: The bucket name.
    package func createBucket(_ bucket: String) async throws(S3Error) {
        _ = try await send { makeRequest(method: "PUT", bucket: bucket, key: nil, body: Data(), credentials: $0) }
    }

    /// A presigned URL that lets anyone (e.g. `curl`) make this request until it expires, signed with the
    /// configuration's credentials or the credential cache's current ones (nil before the cache first resolved
    /// them: await ``signingCredentials()`` first).
    /// - Parameters:
    ///   - method: HTTP method (`GET` to download).
    ///   - bucket: The bucket.
    ///   - key: The key.
    ///   - expires: Validity in seconds (1…604800); temporary credentials end it sooner, when they expire.
    /// - Returns: The URL, or nil without credentials.
    package func presignedURL(method: String = "GET", bucket: String, key: String, expires: Int = 3600) -> URL? {
        guard let credentials = configuration.credentialCache?.cachedCredentials ?? configuration.credentials else {
            return nil
        }
        return presignedURL(method: method, bucket: bucket, key: key, expires: expires, credentials: credentials)
    }

    private func presignedURL(method: String, bucket: String, key: String, expires: Int, credentials: AWSCredentials)
        -> URL?
    {
        let unsigned = makeRequest(method: method, bucket: bucket, key: key, credentials: nil)
        guard let components = URLComponents(string: unsigned.url), let host = components.host else { return nil }
        let hostHeader = components.port.map { "\(host):\($0)" } ?? host
        var path = "/"
        switch configuration.addressingStyle {
        case .path: path += bucket + "/" + key
        case .virtualHosted: path += key
        }
        let query = SigV4Signer(credentials: credentials, region: configuration.region).presignedQuery(
            method: method, path: path, host: hostHeader, expires: expires, date: correctedNow)
        let base = unsigned.url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? unsigned.url
        return URL(string: base + "?" + query)
    }
}
