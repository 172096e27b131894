import AssetStore
import Essentials
import Foundation

/// The endpoint, bucket and originals prefix a library belongs to: recorded by the first sync that fills its
/// catalog from the bucket — a listing, a checkpoint or the journal — and checked before every later use of the
/// network, so that a library is never reconciled with (and emptied by) another bucket.
struct LibraryBinding: Equatable {
    static let settingName = "binding"
    /// `s3://<bucket>/<prefix> at <endpoint>`: readable in an error message and compared as text.
    let text: String

    init(_ configuration: AssetLibrary.Configuration) {
        let endpoint = configuration.endpoint.map(Self.normalized) ?? "AWS (\(configuration.region))"
        text = "s3://\(configuration.bucket)/\(configuration.layout.originalsPrefix) at \(endpoint)"
    }

    /// Scheme and host in lower case, the port spelled out, no trailing slash: two spellings of one endpoint
    /// compare equal.
    static func normalized(_ url: URL) -> String {
        let scheme = (url.scheme ?? "http").lowercased()
        let host = (url.host ?? "").lowercased()
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        return "\(scheme)://\(host):\(port)\(path)"
    }
}
