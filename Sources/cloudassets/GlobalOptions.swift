import ArgumentParser
import CloudAssets
import Essentials
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Options every command takes. Values come from the flags, then the environment, then the config file.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The library folder (catalog and cached files). Env: CLOUDASSETS_STORE.")
    var store: String?

    @Option(name: .long, help: "The S3 endpoint URL. Env: AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL.")
    var endpoint: String?

    @Option(name: .long, help: "The bucket. Env: CLOUDASSETS_BUCKET.")
    var bucket: String?

    @Option(name: .long, help: "The region (default us-east-1). Env: AWS_REGION.")
    var region: String?

    @Option(name: .long, help: "A JSON config file (default $HOME/.config/cloudassets/config.json).")
    var config: String?

    @Option(
        name: .long,
        help: """
            The AWS profile (of ~/.aws/credentials and ~/.aws/config) to take the credentials from: its keys, role, \
            web identity or credential_process; the environment's keys are then not used. Env: AWS_PROFILE.
            """)
    var profile: String?

    // Not `--network`: `get --network` is the per-request flag, and one command cannot have both names.
    @Option(
        name: .customLong("network-policy"),
        help: "Network policy: allowed, offline or user (user requests only). Env: CLOUDASSETS_NETWORK.")
    var network: String?

    @Option(
        name: .customLong("addressing-style"),
        help: """
            How requests name the bucket: auto (virtual-hosted for AWS endpoints when the bucket name allows it, \
            else path), path or virtual. Env: CLOUDASSETS_ADDRESSING_STYLE.
            """)
    var addressingStyle: String?

    @Option(
        name: .customLong("ca-bundle"),
        help: "A PEM file of CA certificates to trust for an https endpoint. Env: AWS_CA_BUNDLE.")
    var caBundle: String?

    @Flag(
        name: .customLong("no-verify-ssl"),
        help: "Do not verify the https endpoint's certificate or host name (a test endpoint only; warns).")
    var noVerifySSL = false

    @Flag(name: .shortAndLong, help: "Print only results and errors.")
    var quiet = false

    @Option(
        name: .customLong("log-level"),
        help: """
            Log the library's work to stderr at this level and above: trace, debug, info, notice, warning, error or \
            critical (default: no log). Env: CLOUDASSETS_LOG_LEVEL.
            """)
    var logLevel: String?

    /// The logger `--log-level` (else `CLOUDASSETS_LOG_LEVEL`) asks for: stderr at that level; nil for none.
    func requestedLogger() throws -> Logger? {
        guard let text = logLevel ?? ProcessInfo.processInfo.environment["CLOUDASSETS_LOG_LEVEL"], !text.isEmpty
        else { return nil }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw CLIError(
                "--log-level \(text): not a level (trace, debug, info, notice, warning, error, critical)",
                status: .usage)
        }
        var logger = Logger(label: "cloudassets", factory: { label in StreamLogHandler.standardError(label: label) })
        logger.logLevel = level
        return logger
    }

    /// The file's fields, all optional. Any other key is an error (a misspelt key must not be ignored).
    struct ConfigFile: Decodable {
        var store: String?
        var endpoint: String?
        var bucket: String?
        var region: String?
        var accessKeyID: String?
        var secretAccessKey: String?
        var sessionToken: String?
        var network: String?
        var fullSyncInterval: String?
        var stripLocation: String?
        var addressingStyle: String?
        var caBundle: String?
        var verifyTLS: String?
        var keyFolders: String?

        /// The keys a config file may hold, in docs/configuration.md's order.
        static let knownKeys = [
            "store", "endpoint", "bucket", "region", "accessKeyID", "secretAccessKey", "sessionToken", "network",
            "fullSyncInterval", "stripLocation", "addressingStyle", "caBundle", "verifyTLS", "keyFolders",
        ]
    }

    /// The user's home folder: `$HOME` when set and not empty, else the home of the user in the password database.
    static func homeDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return FileManager.default.homeDirectoryForCurrentUser.path
    }

    /// `~` and `~/…` expanded to ``homeDirectory(environment:)``; other paths unchanged (`~user` is not expanded).
    static func expandingTilde(_ path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if path == "~" { return homeDirectory(environment: environment) }
        if path.hasPrefix("~/") { return homeDirectory(environment: environment) + path.dropFirst() }
        return path
    }

    /// The config file's path: `--config`, else `$HOME/.config/cloudassets/config.json`.
    func configFilePath(environment: [String: String]) -> String {
        config.map { Self.expandingTilde($0, environment: environment) }
            ?? Self.homeDirectory(environment: environment) + "/.config/cloudassets/config.json"
    }

    func loadConfigFile(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ConfigFile {
        if config == "" { throw CLIError("--config is empty: give a file path") }
        let path = configFilePath(environment: environment)
        guard FileManager.default.fileExists(atPath: path) else {
            if config != nil { throw CLIError("config file \(path) does not exist") }
            return ConfigFile()
        }
        let data: Data
        do {
            data = try LocalFile.read(URL(fileURLWithPath: path))
        } catch {
            throw CLIError("config file \(path) cannot be read: \(UserMessage.describe(error))")
        }
        // try?: not JSON is reported by the throw below
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            throw CLIError("config file \(path) is not a JSON object")
        }
        let known = ConfigFile.knownKeys
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw CLIError(
                "config file \(path): unknown key \"\(unknown)\"; the known keys are \(known.joined(separator: ", "))")
        }
        if let wrong = known.first(where: { fields[$0] != nil && !(fields[$0] is String) }) {
            throw CLIError("config file \(path): \"\(wrong)\" must be a string")
        }
        do {
            return try JSONDecoder().decode(ConfigFile.self, from: data)
        } catch {
            throw CLIError("config file \(path) is not valid JSON with the expected fields")
        }
    }

    /// One setting: the first of the flag, the environment variable and the config file's field that is set.
    /// An empty value is a usage error naming where it came from, never "no value" or "the current folder".
    static func pick(
        flag: (name: String, value: String?), env: (name: String, value: String?), file: (name: String, value: String?)
    ) throws -> String? {
        let sources: [(String, String?)] = [flag, env, ("config file key " + file.name, file.value)]
        for case let (name, value?) in sources {
            if value.isEmpty { throw CLIError("\(name) is empty") }
            return value
        }
        return nil
    }

    /// A true/false setting from the environment or the config file (``pick(flag:env:file:)``; `true`, `1`,
    /// `yes` or `false`, `0`, `no`), `false` when neither gives it.
    static func pickSwitch(flag: String?, env: (name: String, value: String?), file: (name: String, value: String?))
        throws -> Bool
    {
        let value = try pick(flag: (flag ?? env.name, nil), env: env, file: file) ?? "false"
        switch value {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw CLIError("\(file.name) must be true or false, not \(value)")
        }
    }

    /// Where fixed keys come from, as `doctor` says it — `from the environment (AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY)`, `from the config file PATH (accessKeyID, secretAccessKey)` or both — and what to
    /// check for a wrong secret; nil when the keys are not fixed (`--profile`, or the AWS credential chain).
    func fixedCredentialSource(environment env: [String: String] = ProcessInfo.processInfo.environment) -> (
        source: String, secret: String, key: String
    )? {
        // A config file that cannot be read fails the command that opens the library, with its own message;
        // here it only decides how keys are described.
        guard profile == nil, let file = try? loadConfigFile(environment: env) else { return nil }
        func fromEnvironment(_ name: String) -> Bool { !(env[name] ?? "").isEmpty }
        let fields: [(variable: String, field: String, inFile: String?)] = [
            ("AWS_ACCESS_KEY_ID", "accessKeyID", file.accessKeyID),
            ("AWS_SECRET_ACCESS_KEY", "secretAccessKey", file.secretAccessKey),
            ("AWS_SESSION_TOKEN", "sessionToken", file.sessionToken),
        ]
        guard fields.prefix(2).allSatisfy({ fromEnvironment($0.variable) || $0.inFile != nil }) else { return nil }
        let path = configFilePath(environment: env)
        func origin(_ entry: (variable: String, field: String, inFile: String?)) -> String {
            fromEnvironment(entry.variable) ? entry.variable : "\(entry.field) in the config file \(path)"
        }
        let used = fields.filter { fromEnvironment($0.variable) || $0.inFile != nil }
        let variables = used.filter { fromEnvironment($0.variable) }.map(\.variable)
        let keys = used.filter { !fromEnvironment($0.variable) }.map(\.field)
        let parts =
            (variables.isEmpty ? [] : ["the environment (\(variables.joined(separator: ", ")))"])
            + (keys.isEmpty ? [] : ["the config file \(path) (\(keys.joined(separator: ", ")))"])
        return ("from " + parts.joined(separator: " and "), origin(fields[1]), origin(fields[0]))
    }

    /// The library configuration these options describe.
    func libraryConfiguration(requireRemote: Bool = true) throws -> AssetLibrary.Configuration {
        let env = ProcessInfo.processInfo.environment
        let file = try loadConfigFile(environment: env)
        guard
            let storeText = try Self.pick(
                flag: ("--store", store), env: ("CLOUDASSETS_STORE", env["CLOUDASSETS_STORE"]),
                file: ("store", file.store))
        else {
            throw CLIError("no library folder: pass --store DIR (or set CLOUDASSETS_STORE)")
        }
        let storePath = Self.expandingTilde(storeText, environment: env)
        let givenEndpoint = try Self.pick(
            flag: ("--endpoint", endpoint), env: Self.endpointVariable(env), file: ("endpoint", file.endpoint))
        let bucketName = try Self.pick(
            flag: ("--bucket", bucket), env: ("CLOUDASSETS_BUCKET", env["CLOUDASSETS_BUCKET"]),
            file: ("bucket", file.bucket))
        let regionName = try Self.pick(
            flag: ("--region", region), env: ("AWS_REGION", env["AWS_REGION"]), file: ("region", file.region))
        // The region requests are signed for, and whose AWS endpoint is the default: as the aws CLI reads it.
        let signingRegion = regionName ?? env["AWS_DEFAULT_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        if requireRemote {
            guard bucketName != nil else { throw CLIError("no bucket: pass --bucket NAME (or set CLOUDASSETS_BUCKET)") }
        }
        var endpointURL: URL?
        // No endpoint given: AWS's regional endpoint, as the aws CLI does (only where a command needs the bucket).
        let endpointText =
            givenEndpoint
            ?? (requireRemote ? Self.awsEndpoint(region: signingRegion) : nil)
        if let endpointText {
            guard let url = URL(string: endpointText), url.scheme == "http" || url.scheme == "https", url.host != nil
            else { throw CLIError("endpoint \(endpointText) is not an http(s) URL") }
            endpointURL = url
        }
        // Each value on its own: the environment first, then the config file.
        let accessKeyID = env["AWS_ACCESS_KEY_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? file.accessKeyID
        let secret = env["AWS_SECRET_ACCESS_KEY"].flatMap { $0.isEmpty ? nil : $0 } ?? file.secretAccessKey
        let sessionToken = env["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 } ?? file.sessionToken
        let credentials: Credentials
        switch (accessKeyID, secret) {
        case _ where profile != nil:
            // Like the aws CLI's --profile: the profile wins over keys in the environment or the config file.
            guard let profile, !profile.isEmpty else { throw CLIError("--profile is empty") }
            credentials = .profile(profile)
        case (let key?, let secret?):
            credentials = .static(accessKeyID: key, secretAccessKey: secret, sessionToken: sessionToken)
        case (_?, nil) where endpointURL != nil:
            throw CLIError(
                "incomplete credentials: an access key id but no secret; set AWS_SECRET_ACCESS_KEY "
                    + "(or secretAccessKey in the config file)", status: .credentials)
        case (nil, _?) where endpointURL != nil:
            throw CLIError(
                "incomplete credentials: a secret but no access key id; set AWS_ACCESS_KEY_ID "
                    + "(or accessKeyID in the config file)", status: .credentials)
        default:
            // No keys here: the AWS credential chain (AWS_PROFILE, ~/.aws, roles, containers, instance metadata),
            // resolved by the first request that needs it.
            credentials = .default
        }
        let policyText =
            try Self.pick(
                flag: ("--network-policy", network), env: ("CLOUDASSETS_NETWORK", env["CLOUDASSETS_NETWORK"]),
                file: ("network", file.network)) ?? "allowed"
        let policy: NetworkPolicy
        switch policyText {
        case "allowed": policy = .allowed
        case "offline": policy = .offline
        case "user", "userRequestsOnly": policy = .userRequestsOnly
        default: throw CLIError("network policy must be allowed, offline or user, not \(policyText)")
        }
        var configuration = AssetLibrary.Configuration(storeURL: URL(fileURLWithPath: storePath, isDirectory: true))
        configuration.endpoint = endpointURL
        configuration.bucket = bucketName ?? ""
        configuration.region = signingRegion
        configuration.credentials = credentials
        configuration.networkPolicy = policy
        if let interval = try Self.pick(
            flag: ("--full-sync-interval", nil),
            env: ("CLOUDASSETS_FULL_SYNC_INTERVAL", env["CLOUDASSETS_FULL_SYNC_INTERVAL"]),
            file: ("fullSyncInterval", file.fullSyncInterval))
        {
            guard let seconds = TimeInterval(interval), seconds >= 0, seconds.isFinite else {
                throw CLIError("the full sync interval must be a number of seconds (0 or more), not \(interval)")
            }
            configuration.fullSyncInterval = seconds
        }
        try applyConnectionSettings(to: &configuration, file: file, environment: env)
        // The command line is the owner's own tool: locations are shown and kept unless asked otherwise.
        let strip = try Self.pickSwitch(
            flag: "--strip-location", env: ("CLOUDASSETS_STRIP_LOCATION", env["CLOUDASSETS_STRIP_LOCATION"]),
            file: ("stripLocation", file.stripLocation))
        configuration.locationAccess = strip ? .denied : .granted
        configuration.keyFoldersAsAlbums = try Self.pickSwitch(
            flag: nil, env: ("CLOUDASSETS_KEY_FOLDERS", env["CLOUDASSETS_KEY_FOLDERS"]),
            file: ("keyFolders", file.keyFolders))
        return configuration
    }

    /// Opens the library, creating its folder. A `--store` that names a file, or sits below one, is a usage
    /// error in one line.
    /// AWS's S3 endpoint for a region (`s3.<region>.amazonaws.com`; `.amazonaws.com.cn` in the China regions).
    static func awsEndpoint(region: String) -> String {
        "https://s3.\(region).amazonaws.com" + (region.hasPrefix("cn-") ? ".cn" : "")
    }

    /// - Parameters:
    ///   - requireRemote: Whether an endpoint and a bucket must be configured.
    ///   - runsDownloads: Whether the library may start background downloads (pinned originals): only commands
    ///     that wait for their work do; the others would cancel them as they exit.
    ///   - rebind: Whether the library may move to the configured bucket (see `Configuration.rebind`).
    ///   - stripLocation: Whether data handed out loses its GPS tags whatever the settings say (`get --strip-location`).
    ///   - minimumConnections: At least this many connections for downloads
    ///     (``AssetLibrary/Configuration/maxConnections``), for commands that fetch many originals.
    func openLibrary(
        requireRemote: Bool = true, runsDownloads: Bool = true, rebind: Bool = false, stripLocation: Bool = false,
        minimumConnections: Int = 1
    ) async throws -> AssetLibrary {
        var configuration = try libraryConfiguration(requireRemote: requireRemote)
        if stripLocation { configuration.locationAccess = .denied }
        configuration.maxConnections = max(configuration.maxConnections, minimumConnections)
        configuration.startsBackgroundTransfers = runsDownloads
        configuration.rebind = rebind
        let logger = try requestedLogger()
        if let logger { configuration.logger = logger }
        warnIfTLSUnverified(configuration, logger: logger)
        let path = configuration.storeURL.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
            throw CLIError("--store \(path) is a file, not a folder")
        }
        do {
            try FileManager.default.createDirectory(at: configuration.storeURL, withIntermediateDirectories: true)
        } catch {
            var ancestor = configuration.storeURL.deletingLastPathComponent()
            while ancestor.path != "/" && !FileManager.default.fileExists(atPath: ancestor.path) {
                ancestor.deleteLastPathComponent()
            }
            if FileManager.default.fileExists(atPath: ancestor.path, isDirectory: &isFolder), !isFolder.boolValue {
                throw CLIError("--store \(path): \(ancestor.path) is a file, not a folder")
            }
            throw CLIError(
                "--store \(path): cannot create the folder: \(UserMessage.describe(error))",
                status: ExitStatus.of(error) == .diskFull ? .diskFull : .usage)
        }
        return try await AssetLibrary(configuration: configuration)
    }
}
