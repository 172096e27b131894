import Essentials
package import Foundation

/// What a credential chain may be told besides the environment: an explicit profile, the region to fall back on,
/// and the endpoints and limits tests shorten or point at loopback.
package struct CredentialSettings: Sendable, Hashable {
    /// The profile asked for in code or on the command line (`--profile`). Like botocore's explicit profile it
    /// also turns the environment's keys off: the profile's credentials are used even when `AWS_ACCESS_KEY_ID` is
    /// set. nil: `AWS_DEFAULT_PROFILE`, else `AWS_PROFILE`, else `default`.
    package var profile: String?
    /// The STS region when neither `AWS_REGION`, `AWS_DEFAULT_REGION` nor the profile's `region` names one (the
    /// S3 client's region, as botocore passes it).
    package var region = "us-east-1"
    /// Where `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is resolved: ECS's `http://169.254.170.2`.
    package var containerRelativeBase = "http://169.254.170.2"
    /// The instance metadata service when neither `AWS_EC2_METADATA_SERVICE_ENDPOINT` nor the profile's
    /// `ec2_metadata_service_endpoint` names one.
    package var metadataEndpoint = "http://169.254.169.254"
    /// Seconds each instance metadata request may take (botocore's default: 1).
    package var metadataTimeout: TimeInterval = 1
    /// Seconds each container endpoint request may take (botocore's: 2).
    package var containerTimeout: TimeInterval = 2
    /// Attempts at the container endpoint before giving up (botocore's: 3).
    package var containerAttempts = 3
    /// Seconds between two attempts at the container endpoint (botocore's: 1).
    package var containerRetryDelay: TimeInterval = 1
    /// Seconds an STS request may take.
    package var stsTimeout: TimeInterval = 10
    /// Seconds a `credential_process` may run before it is killed.
    package var processTimeout: TimeInterval = 60
    /// The most bytes read from a `credential_process`'s standard output (its JSON is a few hundred).
    package var processOutputLimit = 64 * 1024

    /// Defaults; see each property.
    package init(profile: String? = nil, region: String = "us-east-1") {
        self.profile = profile
        self.region = region
    }
}

/// Everything the providers of one chain read: the environment (a copy, taken when the context is made), the
/// settings, the home folder, the shared files (parsed once per version of each file) and an HTTP client of its
/// own for STS, container and instance metadata requests (its own TLS settings: `AWS_CA_BUNDLE`, not the S3
/// endpoint's).
///
/// Thread-safe: immutable but for the file cache, which is behind a lock.
package final class CredentialContext: Sendable {
    /// The environment the providers read.
    package let environment: [String: String]
    /// Explicit profile, fallback region, endpoints and limits.
    package let settings: CredentialSettings
    /// `$HOME`, else the user's home in the password database (`~` in file paths).
    package let homeDirectory: String
    /// The profile in use: ``CredentialSettings/profile``, else `AWS_DEFAULT_PROFILE`, `AWS_PROFILE`, `default`.
    package let profile: String
    /// Whether the profile was asked for explicitly (in code or by flag), which turns the environment's keys off.
    package let isProfileExplicit: Bool
    /// The clock expirations are compared with.
    package let now: @Sendable () -> Date
    let http: CredentialHTTPClient
    private let files = LockedBox<[String: ProfileFileCache]>([:])

    /// - Parameters:
    ///   - environment: The variables to read (the process's by default; tests pass their own).
    ///   - settings: Explicit profile, region, endpoints and limits.
    ///   - now: The clock (replaceable in tests).
    package init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        settings: CredentialSettings = CredentialSettings(), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.environment = environment
        self.settings = settings
        self.now = now
        homeDirectory = Self.home(environment)
        if let explicit = settings.profile {
            profile = explicit
            isProfileExplicit = true
        } else {
            profile =
                [environment["AWS_DEFAULT_PROFILE"], environment["AWS_PROFILE"]]
                .compactMap { $0 }.first { !$0.isEmpty } ?? "default"
            isProfileExplicit = false
        }
        http = CredentialHTTPClient(caBundlePath: environment["AWS_CA_BUNDLE"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// A non-empty environment variable, nil otherwise.
    package func variable(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`.
    package var credentialsFilePath: String {
        expandingTilde(variable("AWS_SHARED_CREDENTIALS_FILE") ?? "~/.aws/credentials")
    }

    /// `AWS_CONFIG_FILE`, else `~/.aws/config`.
    package var configFilePath: String { expandingTilde(variable("AWS_CONFIG_FILE") ?? "~/.aws/config") }

    /// `~` and `~/…` with the home folder.
    func expandingTilde(_ path: String) -> String {
        if path == "~" { return homeDirectory }
        if path.hasPrefix("~/") { return homeDirectory + path.dropFirst() }
        return path
    }

    /// The two shared files as profiles, read again only when a file changed (size, time, inode).
    /// - Throws: ``CredentialError/malformedFile(path:line:reason:)``, ``CredentialError/unreadableFile(path:reason:)``.
    package func profiles() throws(CredentialError) -> SharedProfiles {
        let credentials = try parsed(credentialsFilePath)
        let config = try parsed(configFilePath)
        return SharedProfiles(
            credentialsPath: credentialsFilePath, configPath: configFilePath, credentialsSections: credentials,
            configSections: config)
    }

    /// The STS region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else the settings'.
    func region(profile: [String: String]?) -> String {
        variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION") ?? profile?["region"].flatMap { $0.isEmpty ? nil : $0 }
            ?? settings.region
    }

    private func parsed(_ path: String) throws(CredentialError) -> [ProfileFile.Section]? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        let key = ProfileFileCache.Key(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: info.st_mtim.tv_sec, modifiedNanoseconds: info.st_mtim.tv_nsec)
        if let cached = files.withLock({ $0[path] }), cached.key == key { return cached.sections }
        let sections = try ProfileFile.read(path)
        files.withLock { $0[path] = ProfileFileCache(key: key, sections: sections) }
        return sections
    }

    private static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }
}

/// One parsed shared file and the version of the file it was parsed from.
private struct ProfileFileCache: Sendable {
    struct Key: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int
    }
    var key: Key
    var sections: [ProfileFile.Section]
}
