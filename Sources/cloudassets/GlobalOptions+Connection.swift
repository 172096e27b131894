import CloudAssets
import Foundation
import Logging

/// How the command line reaches the endpoint: which variable names it, how requests name the bucket, which CAs
/// its certificate may come from.
extension GlobalOptions {
    /// The variable the endpoint comes from when no flag gives it: `AWS_ENDPOINT_URL_S3` (the service's own, as
    /// the aws CLI and the SDKs read it) when set, else `AWS_ENDPOINT_URL`.
    static func endpointVariable(_ env: [String: String]) -> (name: String, value: String?) {
        if let s3 = env["AWS_ENDPOINT_URL_S3"] { return ("AWS_ENDPOINT_URL_S3", s3) }
        return ("AWS_ENDPOINT_URL", env["AWS_ENDPOINT_URL"])
    }

    /// Sets the addressing style (`--addressing-style`, `CLOUDASSETS_ADDRESSING_STYLE`, `addressingStyle`), the CA
    /// bundle (`--ca-bundle`, `AWS_CA_BUNDLE`, `caBundle`) and TLS verification (`--no-verify-ssl`, `verifyTLS`).
    func applyConnectionSettings(
        to configuration: inout AssetLibrary.Configuration, file: ConfigFile, environment env: [String: String]
    ) throws {
        if let style = try Self.pick(
            flag: ("--addressing-style", addressingStyle),
            env: ("CLOUDASSETS_ADDRESSING_STYLE", env["CLOUDASSETS_ADDRESSING_STYLE"]),
            file: ("addressingStyle", file.addressingStyle))
        {
            switch style.lowercased() {
            case "auto", "automatic": configuration.addressingStyle = .automatic
            case "path": configuration.addressingStyle = .path
            case "virtual", "virtual-hosted", "virtualhosted": configuration.addressingStyle = .virtualHosted
            default: throw CLIError("the addressing style must be auto, path or virtual, not \(style)", status: .usage)
            }
        }
        if let bundle = try Self.pick(
            flag: ("--ca-bundle", caBundle), env: ("AWS_CA_BUNDLE", env["AWS_CA_BUNDLE"]),
            file: ("caBundle", file.caBundle))
        {
            let path = Self.expandingTilde(bundle, environment: env)
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CLIError("the CA bundle \(path) does not exist or cannot be read", status: .usage)
            }
            configuration.caBundlePath = path
        }
        if noVerifySSL {
            configuration.verifyTLS = false
        } else if let verify = file.verifyTLS {
            switch verify {
            case "true", "1", "yes": configuration.verifyTLS = true
            case "false", "0", "no": configuration.verifyTLS = false
            default: throw CLIError("verifyTLS must be true or false, not \(verify)", status: .usage)
            }
        }
    }

    /// One line on stderr when TLS verification is off for an https endpoint, unless the library's own warning
    /// goes to stderr already (`--log-level warning` or lower).
    func warnIfTLSUnverified(_ configuration: AssetLibrary.Configuration, logger: Logger?) {
        guard !configuration.verifyTLS, configuration.endpoint?.scheme?.lowercased() == "https" else { return }
        if let logger, logger.logLevel <= .warning { return }
        Terminal.shared.err(
            "warning: TLS verification is off (--no-verify-ssl): any server can pose as "
                + (configuration.endpoint?.host ?? "the endpoint"))
    }
}
