import Foundation

/// A throwaway certificate authority and server certificates for HTTPS tests, made at test time with the `openssl`
/// command (P-256 keys: fast to make). Everything lives in one temporary folder, removed by ``remove()``.
public struct TestCertificates: Sendable {
    /// The folder holding every file.
    public let folder: URL
    /// The CA's certificate (PEM): the bundle a client trusts.
    public let caPath: String

    /// A server certificate and its key, issued by the CA.
    public struct Server: Sendable {
        /// The certificate (PEM).
        public let certificatePath: String
        /// Its private key (PEM).
        public let keyPath: String
    }

    /// The `openssl` command failed; its output says why.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Makes a new CA (named `name`) in a new temporary folder.
    /// - Parameter name: The CA's common name.
    public static func makeAuthority(name: String = "CloudAssets throwaway test CA") throws -> TestCertificates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloudassets-tls-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificates = TestCertificates(folder: folder, caPath: folder.appendingPathComponent("ca.pem").path)
        try openssl(
            "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder.appendingPathComponent("ca.key").path, "-out", certificates.caPath, "-days", "2",
            "-subj", "/CN=\(name)", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        return certificates
    }

    /// Issues a server certificate for these names and addresses.
    /// - Parameters:
    ///   - file: The file names' stem (`<file>.pem`, `<file>.key`).
    ///   - dnsNames: Host names the certificate is for (`localhost`, `photos.localhost`).
    ///   - ipAddresses: Addresses the certificate is for (`127.0.0.1`).
    public func issueServer(file: String = "server", dnsNames: [String], ipAddresses: [String] = []) throws -> Server {
        let key = folder.appendingPathComponent(file + ".key").path
        let request = folder.appendingPathComponent(file + ".csr").path
        let certificate = folder.appendingPathComponent(file + ".pem").path
        let extensions = folder.appendingPathComponent(file + ".ext")
        let names = dnsNames.map { "DNS:" + $0 } + ipAddresses.map { "IP:" + $0 }
        try Data(
            ("subjectAltName=" + names.joined(separator: ",") + "\nextendedKeyUsage=serverAuth\n"
                + "basicConstraints=critical,CA:FALSE\n").utf8
        ).write(to: extensions)
        try Self.openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
            "-out", request, "-subj", "/CN=\(dnsNames.first ?? ipAddresses.first ?? "server")")
        try Self.openssl(
            "x509", "-req", "-in", request, "-CA", caPath, "-CAkey", folder.appendingPathComponent("ca.key").path,
            "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile", extensions.path)
        return Server(certificatePath: certificate, keyPath: key)
    }

    /// Removes the folder and everything in it.
    public func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Runs `openssl` with these arguments; throws ``Failure`` with its output when it fails.
    private static func openssl(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.first ?? "") failed: \(text)")
        }
    }
}
