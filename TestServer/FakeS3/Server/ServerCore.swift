import Essentials
import Foundation
import NIOCore

/// Everything the connections of one server share. Thread-safe.
final class ServerCore: Sendable {
    let configuration: FakeS3Configuration
    let store: ObjectStore
    let authenticator: RequestAuthenticator
    let service: S3Service
    let faults = FaultInjector()
    let log = RequestLog()
    let publicBuckets: LockedBox<Set<String>>
    /// The host suffixes of virtual-hosted requests, the bound host among them (read once, used on every request).
    let virtualHostSuffixes: [String]

    init(configuration: FakeS3Configuration) throws(S3Error) {
        self.configuration = configuration
        store = try ObjectStore(storage: configuration.storage)
        authenticator = RequestAuthenticator(credentials: configuration.credentials, region: configuration.region)
        service = S3Service(
            store: store, region: configuration.region, comparesBareIfMatch: configuration.comparesBareIfMatch)
        publicBuckets = LockedBox(configuration.publicBuckets)
        virtualHostSuffixes = configuration.effectiveVirtualHostSuffixes
    }

    /// Whether requests must be signed at all (a server configured without credentials accepts everything).
    var requiresAuthentication: Bool { !configuration.credentials.isEmpty || authenticator.temporary.isUsed }

    func isPublic(_ bucket: String) -> Bool { publicBuckets.withLock { $0.contains(bucket) } }

    static func requestID() -> String {
        var g = SystemRandomNumberGenerator()
        let value: UInt64 = g.next()
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { out[i] = digits[Int((value >> (60 - 4 * UInt64(i))) & 0xF)] }
        return String(decoding: out, as: UTF8.self)
    }
}
