import ArgumentParser
import CloudAssets
import Foundation
import S3Transfer

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body`, cancelling it on Ctrl-C (SIGINT) or SIGTERM: downloads stop, their `.part` files stay for
/// resume, and the command exits with status 130.
func withInterrupt<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let task = Task { try await body() }
    let sources = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler { task.cancel() }
        source.resume()
        return source
    }
    defer {
        for s in sources { s.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
    do {
        return try await task.value
    } catch {
        if task.isCancelled {
            Terminal.shared.endLive()
            Terminal.shared.err("interrupted: partial downloads are kept and resume on the next get")
            throw ExitCode(130)
        }
        throw error
    }
}

/// One-line messages a user can act on, and exit codes per kind of failure.
enum UserMessage {
    static func describe(_ error: any Error) -> String {
        if let s3 = error as? S3Error { return describe(s3) }
        if let request = error as? AssetRequestError { return request.description }
        if let library = error as? AssetLibraryError { return library.description }
        if let cli = error as? CLIError { return cli.description }
        return String(describing: error)
    }

    static func describe(_ error: S3Error) -> String {
        switch error {
        case .retriesExhausted(let last, let attempts):
            return "\(describe(last)) (gave up after \(attempts) attempts)"
        case .transport(let code, let message):
            switch code {
            case 6, 7:
                return "cannot reach the endpoint (\(message)); check --endpoint and that the server is running"
            case 28: return "the endpoint did not answer in time (\(message))"
            default: return "network error: \(message)"
            }
        case .invalidAccessKeyId:
            return "wrong credentials: the access key id is not known to the server (check AWS_ACCESS_KEY_ID)"
        case .signatureDoesNotMatch:
            return "wrong credentials: the secret key does not match (check AWS_SECRET_ACCESS_KEY)"
        case .noSuchBucket: return "no such bucket; check --bucket and --endpoint"
        case .networkAccessNotAllowed:
            return "the data is in the cloud and the network is not allowed (pass --network, or change the policy)"
        default: return error.description
        }
    }

    static func exitCode(for error: any Error) -> Int32 {
        let s3: S3Error? = {
            if let e = error as? S3Error, case .retriesExhausted(let last, _) = e { return last }
            return error as? S3Error
        }()
        if let s3 {
            switch s3 {
            case .invalidAccessKeyId, .signatureDoesNotMatch, .accessDenied: return 3
            case .transport: return 4
            case .noSuchBucket: return 5
            case .networkAccessNotAllowed: return 6
            default: return 1
            }
        }
        if let request = error as? AssetRequestError, case .inCloud = request { return 6 }
        if let request = error as? AssetRequestError, case .invalidRange = request { return 11 }
        if let library = error as? AssetLibraryError {
            switch library {
            case .missingCredentials: return 3
            case .offline: return 6
            case .locked, .closed: return 1
            case .notALibrary, .boundToAnotherBucket: return 2
            }
        }
        if error is CLIError { return 2 }
        return 1
    }
}

/// `watch` output: one JSON object per change.
enum ChangeJSON {
    static func line(for change: LibraryChange) -> String {
        struct Line: Encodable {
            var token: Int64
            var inserted: [String]
            var changed: [String]
            var contentChanged: [String]
            var removed: [String]
        }
        let line = Line(
            token: change.token.rawValue, inserted: change.insertedIdentifiers.sorted().map(String.init),
            changed: change.updatedIdentifiers.sorted().map(String.init),
            contentChanged: change.contentChangedIdentifiers.sorted().map(String.init),
            removed: change.deletedIdentifiers.sorted().map(String.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? String(decoding: encoder.encode(line), as: UTF8.self)) ?? "{}"
    }
}
