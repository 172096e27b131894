import ArgumentParser
import CloudAssets
import Foundation

/// Options every command takes. Values come from the flags, then the environment, then the config file.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The library folder (catalog and cached files). Env: CLOUDASSETS_STORE.")
    var store: String?

    @Option(name: .long, help: "The S3 endpoint URL. Env: AWS_ENDPOINT_URL.")
    var endpoint: String?

    @Option(name: .long, help: "The bucket. Env: CLOUDASSETS_BUCKET.")
    var bucket: String?

    @Option(name: .long, help: "The region (default us-east-1). Env: AWS_REGION.")
    var region: String?

    @Option(name: .long, help: "A JSON config file (default ~/.config/cloudassets/config.json).")
    var config: String?

    // Not `--network`: `get --network` is the per-request flag, and one command cannot have both names.
    @Option(
        name: .customLong("network-policy"),
        help: "Network policy: allowed, offline or user (user requests only). Env: CLOUDASSETS_NETWORK.")
    var network: String?

    @Flag(name: .shortAndLong, help: "Print only results and errors.")
    var quiet = false

    /// The file's fields, all optional.
    struct ConfigFile: Decodable {
        var store: String?
        var endpoint: String?
        var bucket: String?
        var region: String?
        var accessKeyID: String?
        var secretAccessKey: String?
        var sessionToken: String?
        var network: String?
    }

    func loadConfigFile() throws -> ConfigFile {
        let explicit = config
        let path =
            explicit
            ?? FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".config/cloudassets/config.json").path
        guard FileManager.default.fileExists(atPath: path) else {
            if explicit != nil { throw CLIError("config file \(path) does not exist") }
            return ConfigFile()
        }
        do {
            return try JSONDecoder().decode(ConfigFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CLIError("config file \(path) is not valid JSON with the expected fields: \(error)")
        }
    }

    /// The library configuration these options describe.
    func libraryConfiguration(requireRemote: Bool = true) throws -> AssetLibrary.Configuration {
        let env = ProcessInfo.processInfo.environment
        let file = try loadConfigFile()
        guard let storePath = store ?? env["CLOUDASSETS_STORE"] ?? file.store else {
            throw CLIError("no library folder: pass --store DIR (or set CLOUDASSETS_STORE)")
        }
        let endpointText = endpoint ?? env["AWS_ENDPOINT_URL"] ?? file.endpoint
        let bucketName = bucket ?? env["CLOUDASSETS_BUCKET"] ?? file.bucket
        if requireRemote {
            guard endpointText != nil else {
                throw CLIError("no endpoint: pass --endpoint URL (or set AWS_ENDPOINT_URL)")
            }
            guard bucketName != nil else { throw CLIError("no bucket: pass --bucket NAME (or set CLOUDASSETS_BUCKET)") }
        }
        var endpointURL: URL?
        if let endpointText {
            guard let url = URL(string: endpointText), url.scheme == "http" || url.scheme == "https", url.host != nil
            else { throw CLIError("endpoint \(endpointText) is not an http(s) URL") }
            endpointURL = url
        }
        let credentials: Credentials
        if env["AWS_ACCESS_KEY_ID"] != nil {
            credentials = .environment
        } else if let key = file.accessKeyID, let secret = file.secretAccessKey {
            credentials = .static(accessKeyID: key, secretAccessKey: secret, sessionToken: file.sessionToken)
        } else {
            credentials = .environment
        }
        let policyText = network ?? env["CLOUDASSETS_NETWORK"] ?? file.network ?? "allowed"
        let policy: NetworkPolicy
        switch policyText {
        case "allowed": policy = .allowed
        case "offline": policy = .offline
        case "user", "userRequestsOnly": policy = .userRequestsOnly
        default: throw CLIError("network policy must be allowed, offline or user, not \(policyText)")
        }
        return AssetLibrary.Configuration(
            storeURL: URL(fileURLWithPath: storePath, isDirectory: true), endpoint: endpointURL,
            bucket: bucketName ?? "", region: region ?? env["AWS_REGION"] ?? file.region ?? "us-east-1",
            credentials: credentials, networkPolicy: policy)
    }

    /// Opens the library, creating its folder.
    /// - Parameters:
    ///   - requireRemote: Whether an endpoint and a bucket must be configured.
    ///   - runsDownloads: Whether the library may start background downloads (pinned originals): only commands
    ///     that wait for their work do; the others would cancel them as they exit.
    func openLibrary(requireRemote: Bool = true, runsDownloads: Bool = true) async throws -> AssetLibrary {
        var configuration = try libraryConfiguration(requireRemote: requireRemote)
        configuration.startsBackgroundDownloads = runsDownloads
        try FileManager.default.createDirectory(at: configuration.storeURL, withIntermediateDirectories: true)
        return try await AssetLibrary(configuration: configuration)
    }
}

/// A user-facing error: one line, no stack trace.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
