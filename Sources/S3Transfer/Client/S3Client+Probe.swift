import Essentials
package import Foundation

extension S3Client {
    /// What one small request to a bucket showed: whether it answered, how many keys (0 or 1) it listed, and the
    /// service's clock as its `Date` header gave it.
    package struct Probe: Sendable {
        /// Keys listed under the prefix (at most one).
        package var keys: Int
        /// The service's clock, when the response carried a `Date` header.
        package var serverDate: Date?
        /// This computer's clock when the response arrived.
        package var localDate: Date
    }

    /// Lists at most one key under `prefix` (ListObjectsV2, `max-keys=1`): the cheapest request that shows the
    /// endpoint, the credentials, the bucket and the clock at once. Retries as every request does.
    package func probe(bucket: String, prefix: String) async throws(S3Error) -> Probe {
        let query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix), ("max-keys", "1")]
        let (head, body) = try await send {
            makeRequest(method: "GET", bucket: bucket, key: nil, query: query, credentials: $0)
        }
        let page = try Self.parseListing(body, bucket: bucket)
        return Probe(
            keys: page.objects.count, serverDate: head["date"].flatMap(HTTPDate.parse), localDate: localClock())
    }
}
