public import Foundation
import S3Transfer

extension AssetLibrary {
    /// How requests name the bucket: in the path (`https://s3.example.com/photos/key`) or in the host name
    /// (`https://photos.s3.example.com/key`). See ``Configuration/addressingStyle``.
    public enum AddressingStyle: Sendable, Hashable {
        /// Virtual-hosted for AWS endpoints (a host ending in `.amazonaws.com`) when the bucket name can be a host
        /// name label (``isVirtualHostCompatible(bucket:overHTTPS:)``); path-style for every other endpoint, as
        /// most S3-compatible servers (MinIO, Ceph, the fake server) expect it without extra DNS set-up.
        case automatic
        /// The bucket is the path's first segment: `https://endpoint/bucket/key`.
        case path
        /// The bucket is the host name's first label: `https://bucket.endpoint/key` (AWS's default). The endpoint
        /// must be a host name, not an IP address, and `bucket.<host>` must resolve to the service.
        case virtualHosted

        /// The style requests to `endpoint` for `bucket` use: ``path`` or ``virtualHosted``, never ``automatic``.
        /// - Parameters:
        ///   - endpoint: The S3 endpoint.
        ///   - bucket: The bucket name.
        public func resolved(endpoint: URL, bucket: String) -> AddressingStyle {
            switch self {
            case .path, .virtualHosted: return self
            case .automatic:
                let host = (endpoint.host ?? "").lowercased()
                let isAWS = host.hasSuffix(".amazonaws.com") || host.hasSuffix(".amazonaws.com.cn")
                let https = endpoint.scheme?.lowercased() != "http"
                return isAWS && Self.isVirtualHostCompatible(bucket: bucket, overHTTPS: https) ? .virtualHosted : .path
            }
        }

        /// Whether `bucket` can stand as the first label(s) of a host name: 3 to 63 lowercase letters, digits,
        /// hyphens and dots, starting and ending with a letter or digit, no empty label, not shaped like an IPv4
        /// address. Over HTTPS a name with a dot is refused too: AWS's wildcard certificate
        /// (`*.s3.amazonaws.com`) covers one label only.
        /// - Parameters:
        ///   - bucket: The bucket name.
        ///   - overHTTPS: Whether requests go over HTTPS.
        public static func isVirtualHostCompatible(bucket: String, overHTTPS: Bool) -> Bool {
            let bytes = Array(bucket.utf8)
            guard (3...63).contains(bytes.count) else { return false }
            func isAlphanumeric(_ byte: UInt8) -> Bool {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
            guard isAlphanumeric(bytes[0]), isAlphanumeric(bytes[bytes.count - 1]) else { return false }
            guard bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
            else { return false }
            if bytes.contains(UInt8(ascii: ".")) {
                if overHTTPS { return false }
                let labels = bucket.split(separator: ".", omittingEmptySubsequences: false)
                // No empty label, no label starting or ending with a hyphen.
                guard labels.allSatisfy({ !$0.isEmpty && $0.first != "-" && $0.last != "-" }) else { return false }
            }
            return !isIPAddress(bucket)
        }

        /// Whether `host` is an IPv4 or IPv6 literal (which no bucket label can be put in front of).
        static func isIPAddress(_ host: String) -> Bool {
            if host.contains(":") { return true }
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }
        }

        /// The transfer layer's style (after ``resolved(endpoint:bucket:)``).
        var transferStyle: S3AddressingStyle { self == .virtualHosted ? .virtualHosted : .path }
    }
}

extension LibraryRemote {
    /// Refuses virtual-hosted addressing that cannot work: an endpoint that is an IP address, or a bucket name that
    /// is no host name label.
    static func validateAddressing(_ configuration: AssetLibrary.Configuration, endpoint: URL) throws {
        guard configuration.addressingStyle == .virtualHosted else { return }
        let host = endpoint.host ?? ""
        if AssetLibrary.AddressingStyle.isIPAddress(host) {
            throw AssetLibraryError.invalidConfiguration(
                reason: "virtual-hosted addressing needs an endpoint with a host name, not the address \(host); "
                    + "use addressingStyle .path")
        }
        // Dots are allowed here: an endpoint with a certificate for them is the owner's choice.
        guard AssetLibrary.AddressingStyle.isVirtualHostCompatible(bucket: configuration.bucket, overHTTPS: false)
        else {
            throw AssetLibraryError.invalidConfiguration(
                reason: "the bucket name \"\(configuration.bucket)\" cannot be part of a host name "
                    + "(virtual-hosted addressing); use addressingStyle .path")
        }
    }
}
