import FakeS3
import NIOCore
import NIOSSL

/// HTTPS for the bundled fake server with swift-nio-ssl: the one module that links a TLS library, so that
/// `cloudassets` (which serves the demo over plain HTTP) does not build one. `fake-s3 serve --tls-cert` and the
/// HTTPS tests use it.
public struct NIOSSLProvider: FakeS3TLSProvider {
    public init() {}

    public func handlerFactory(for tls: FakeS3TLS) throws -> @Sendable () -> any ChannelHandler {
        let context = try Self.context(tls)
        return { NIOSSLServerHandler(context: context) }
    }

    /// The TLS context of the configured certificate and key, checked before anything is bound.
    private static func context(_ tls: FakeS3TLS) throws -> NIOSSLContext {
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificateChainPath)
            guard !chain.isEmpty else {
                throw FakeS3ConfigurationError.unusableTLS(reason: "\(tls.certificateChainPath) holds no certificate")
            }
            let key = try NIOSSLPrivateKey(file: tls.privateKeyPath, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            configuration.applicationProtocols = ["http/1.1"]  // the pipeline speaks HTTP/1.1 only
            // A closing connection waits this long for the client's close_notify (NIOSSL's default is 5 s, which
            // an idle pooled client connection never sends): ``FakeS3Server/stop()`` would wait that long.
            configuration.shutdownTimeout = .milliseconds(100)
            return try NIOSSLContext(configuration: configuration)
        } catch let error as FakeS3ConfigurationError {
            throw error
        } catch {
            throw FakeS3ConfigurationError.unusableTLS(
                reason: "\(tls.certificateChainPath), \(tls.privateKeyPath): \(error)")
        }
    }
}

extension FakeS3TLSProvider where Self == NIOSSLProvider {
    /// swift-nio-ssl (BoringSSL).
    public static var nioSSL: NIOSSLProvider { NIOSSLProvider() }
}
