import ArgumentParser
import FakeS3
import FakeS3TLS
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `fake-s3 serve`: serves a storage root until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve a storage root over HTTP (or HTTPS) until interrupted.")

    @Option(help: "The storage root (created when missing). Ignored with --memory.")
    var root: String = ".fake-s3"

    @Option(help: "The port to listen on, 0…65535; 0 picks a free one (printed once listening).")
    var port: Int = 9000

    @Option(help: "The address to bind.")
    var host: String = "127.0.0.1"

    @Option(help: "The access key id clients sign with.")
    var accessKey: String = "demo"

    @Option(help: "The secret access key.")
    var secretKey: String = "demo-secret"

    @Option(help: "The region requests must be signed for.")
    var region: String = "us-east-1"

    @Flag(help: "Answer the admin endpoint /_fake-s3/ (fault rules, request log).")
    var faults = false

    @Option(name: .customLong("public"), help: "A bucket anyone may read without signing (repeatable).")
    var publicBuckets: [String] = []

    @Flag(help: "Keep everything in memory instead of under --root.")
    var memory = false

    @Option(help: "Serve HTTPS with this PEM certificate (chain); needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(
        name: .customLong("idle-timeout"),
        help: "Close a connection that sends nothing for this many seconds when it is its turn (0: never).")
    var idleTimeout: Double = 60

    @Option(
        name: .customLong("virtual-host"),
        help: """
            A host name whose subdomains name buckets (repeatable; default localhost, and --host is always one): \
            Host: photos.localhost addresses the bucket photos.
            """)
    var virtualHosts: [String] = []

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port \(port) is outside 0…65535 (0 picks any free port)")
        }
        guard idleTimeout >= 0, idleTimeout.isFinite else {
            throw ValidationError("--idle-timeout \(idleTimeout) must be a number of seconds ≥ 0 (0: never)")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: give both, or neither for plain HTTP")
        }
        if let empty = [("--tls-cert", tlsCert), ("--tls-key", tlsKey)].first(where: { $0.1 == "" }) {
            throw ValidationError("\(empty.0) is empty: give a PEM file")
        }
    }

    func run() async throws {
        let storage: FakeS3Storage =
            memory ? .memory : .disk(root: URL(fileURLWithPath: root, isDirectory: true))
        var configuration = FakeS3Configuration(
            accessKeyID: accessKey, secretAccessKey: secretKey, storage: storage, port: port)
        configuration.host = host
        configuration.region = region
        configuration.faultsEnabled = faults
        configuration.publicBuckets = Set(publicBuckets)
        configuration.idleTimeout = idleTimeout > 0 ? idleTimeout : nil
        if !virtualHosts.isEmpty { configuration.virtualHostSuffixes = virtualHosts }
        if let tlsCert, let tlsKey {
            configuration.tls = FakeS3TLS(certificateChainPath: tlsCert, privateKeyPath: tlsKey)
        }
        let server = try FakeS3Server(configuration: configuration, tlsProvider: .nioSSL)
        // Caught from before the port is printed: whoever reads it may interrupt at once.
        let termination = TerminationSignal.install()
        try await server.start()
        print("fake-s3 listening on \(server.endpoint.absoluteString)")
        print("  port: \(server.port)\(port == 0 ? " (chosen by the system: --port 0)" : "")")
        print("  storage: \(memory ? "memory" : URL(fileURLWithPath: root).standardizedFileURL.path)")
        print("  credentials: AWS_ACCESS_KEY_ID=\(accessKey) AWS_SECRET_ACCESS_KEY=\(secretKey) region \(region)")
        let suffixes = (configuration.virtualHostSuffixes + [host]).joined(separator: ", ")
        print("  virtual-hosted buckets: Host: <bucket>.<name> for a name in \(suffixes)")
        if let tlsCert { print("  tls: \(tlsCert)") }
        print("  try: aws --endpoint-url \(server.endpoint.absoluteString) s3 ls")
        fflush(nil)
        let signal = await termination.wait()
        print("fake-s3: \(signal), stopping")
        try await server.stop()
    }
}
