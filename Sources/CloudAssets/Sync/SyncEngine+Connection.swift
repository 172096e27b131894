import AWSSigV4
import AssetStore
import Foundation
import S3Transfer

extension SyncEngine {
    /// ``AssetLibrary/checkConnection()``: the configuration as the library will use it, then one listing of at
    /// most one key (endpoint, TLS, credentials and bucket together), the catalog's binding, and the service's
    /// clock against this computer's.
    func checkConnection() async -> ConnectionReport {
        typealias Check = ConnectionReport.Check
        var checks: [Check] = [await credentialsCheck()]
        guard let endpoint = configuration.endpoint, let remote else {
            checks.append(
                Check(
                    aspect: .endpoint, summary: "no endpoint: a local catalog only",
                    problem: CloudAssetsError(AssetRequestError.noRemote)))
            return ConnectionReport(checks: checks)
        }
        let style = remote.client.configuration.addressingStyle == .path ? "path-style" : "virtual-hosted"
        checks.append(
            Check(
                aspect: .endpoint,
                summary: "\(endpoint.absoluteString), bucket \(configuration.bucket), region \(configuration.region), "
                    + "\(style) addressing",
                problem: nil))
        checks.append(Check(aspect: .tls, summary: tlsSummary(endpoint), problem: nil))
        let prefix = configuration.layout.originalsPrefix
        var probe: S3Client.Probe?
        do {
            probe = try await remote.client.probe(bucket: configuration.bucket, prefix: prefix)
            let listed = probe?.keys == 0 ? "no object under \(prefix) yet" : "objects under \(prefix)"
            checks.append(Check(aspect: .bucket, summary: "reachable: listed \(listed)", problem: nil))
        } catch {
            let problem = CloudAssetsError.reported(error)
            let tlsProblem = problem.code == .tlsNotTrusted
            checks.append(
                Check(aspect: tlsProblem ? .tls : .bucket, summary: problem.description, problem: problem))
        }
        checks.append(bindingCheck())
        if let probe, let server = probe.serverDate {
            let skew = server.timeIntervalSince(probe.localDate)
            // A Date header counts whole seconds: within 2 s the clocks agree as far as it can show.
            let text =
                abs(skew) < 2
                ? "agrees with this computer's (to the second a Date header shows)"
                : String(format: "the service's clock is %+.0f s from this computer's", skew)
            // Requests are signed with the time; S3 refuses a signature more than 15 minutes off (the library then
            // measures the offset and signs again, but every tool without that correction fails).
            let problem =
                abs(skew) > 15 * 60
                ? CloudAssetsError(.clockSkewed, text + ": more than the 15 minutes S3 accepts") : nil
            checks.append(Check(aspect: .clock, summary: text, problem: problem))
        } else {
            checks.append(Check(aspect: .clock, summary: "not measured (no answer with a Date header)", problem: nil))
        }
        return ConnectionReport(checks: checks)
    }

    /// Where the credentials come from, never the secret. The AWS credential chain is resolved now: the line says
    /// which provider answered (profile, expiry), or is the one-line error naming what was tried.
    private func credentialsCheck() async -> ConnectionReport.Check {
        guard let cache = remote?.client.configuration.credentialCache else {
            return ConnectionReport.Check(aspect: .credentials, summary: credentialsSummary(), problem: nil)
        }
        do {
            let origin = try await cache.resolve()
            let key = cache.cachedCredentials.map { ": key " + Self.shortened($0.accessKeyID) } ?? ""
            return ConnectionReport.Check(
                aspect: .credentials, summary: "AWS credential chain: \(origin)\(key)", problem: nil)
        } catch {
            let problem = CloudAssetsError(S3Error.credentials(error))
            return ConnectionReport.Check(aspect: .credentials, summary: problem.description, problem: problem)
        }
    }

    /// Where fixed credentials come from, never the secret.
    private func credentialsSummary() -> String {
        switch configuration.credentials {
        case .default, .profile: return "the AWS credential chain (no endpoint: not resolved)"
        case .anonymous: return "anonymous: requests are not signed"
        case .static(let key, _, let token):
            return "given in the configuration: key \(Self.shortened(key))"
                + (token == nil ? "" : ", with a session token")
        case .environment:
            let key = ProcessInfo.processInfo.environment["AWS_ACCESS_KEY_ID"] ?? ""
            return "environment (AWS_ACCESS_KEY_ID): key \(Self.shortened(key))"
        }
    }

    /// An access key id's first four characters and its length: enough to tell keys apart, not to use one.
    static func shortened(_ key: String) -> String { "\(key.prefix(4))… (\(key.count) characters)" }

    private func tlsSummary(_ endpoint: URL) -> String {
        guard endpoint.scheme?.lowercased() == "https" else { return "none: plain http" }
        guard configuration.verifyTLS else { return "https, certificate NOT verified (verifyTLS is false)" }
        return "https, verified against "
            + (configuration.caBundlePath.map { "the CA bundle \($0)" } ?? "the system's CAs")
    }

    private func bindingCheck() -> ConnectionReport.Check {
        let requested = LibraryBinding(configuration).text
        let bound: String?
        do {
            bound = try catalog.store.setting(LibraryBinding.settingName)
        } catch {
            return ConnectionReport.Check(
                aspect: .binding, summary: "the catalog cannot be read", problem: CloudAssetsError.reported(error))
        }
        guard let bound else {
            return ConnectionReport.Check(
                aspect: .binding, summary: "not bound yet: the first sync binds this library to \(requested)",
                problem: nil)
        }
        if bound == requested || configuration.rebind {
            let summary =
                bound == requested ? "bound to \(bound)" : "bound to \(bound); rebind moves it to \(requested)"
            return ConnectionReport.Check(aspect: .binding, summary: summary, problem: nil)
        }
        let problem = CloudAssetsError(
            AssetLibraryError.boundToAnotherBucket(
                library: configuration.storeURL.path, bound: bound, requested: requested))
        return ConnectionReport.Check(aspect: .binding, summary: problem.description, problem: problem)
    }
}
