import ArgumentParser
import AssetStore
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
            Terminal.shared.err("error: interrupted: partial downloads are kept and resume on the next get")
            throw ExitStatus.interrupted.exitCode
        }
        throw error
    }
}

/// One-line messages a user can act on. The exit status of each error is ``ExitStatus/of(_:)``.
enum UserMessage {
    /// One line, never Foundation's `Error Domain=…` text: file errors become `path: reason`.
    static func describe(_ error: any Error) -> String {
        let text: String
        switch error {
        case let s3 as S3Error: text = describe(s3)
        case let request as AssetRequestError: text = request.description
        case let library as AssetLibraryError: text = describe(library)
        case let store as AssetStoreError: text = store.description
        case let cli as CLIError: text = cli.description
        default: text = FileSystemErrorText.describe(error) ?? String(describing: error)
        }
        return oneLine(text)
    }

    /// Control characters (a newline inside a server's message) become spaces: an error is one line.
    static func oneLine(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    static func describe(_ error: AssetLibraryError) -> String {
        switch error {
        case .missingCredentials:
            return "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                + "(or accessKeyID and secretAccessKey in the config file)"
        case .locked(let path):
            return "the library \(path) is busy: another cloudassets process has it open (a watch?); try again later"
        default: return error.description
        }
    }

    static func describe(_ error: S3Error) -> String {
        switch error {
        case .retriesExhausted(let last, let attempts):
            return "\(describe(last)) (gave up after \(attempts) attempts)"
        case .transport(let code, let message):
            switch code {
            case 6, 7:
                return "cannot reach the endpoint (\(message)); check --endpoint and that the server is running"
            case 28, HTTPTransportError.noAnswerCode: return "the endpoint did not answer in time (\(message))"
            default: return "network error: \(message)"
            }
        case .invalidAccessKeyId:
            return "wrong credentials: the access key id is not known to the server (check AWS_ACCESS_KEY_ID)"
        case .signatureDoesNotMatch:
            return "wrong credentials: the secret key does not match (check AWS_SECRET_ACCESS_KEY)"
        case .noSuchBucket: return "no such bucket; check --bucket and --endpoint"
        case .networkAccessNotAllowed:
            return "the data is in the cloud and the network is not allowed (pass --network, or change the policy)"
        case .service(let code, let message, _, _) where ExitStatus.of(error) == .regionMismatch:
            return "region mismatch: \(message) (\(code)); pass --region or set AWS_REGION"
        case .service(_, _, let status, _) where status >= 500:
            return "server error: \(error.description)"
        default: return error.description
        }
    }
}

/// Foundation's file errors (`NSCocoaErrorDomain`, `NSPOSIXErrorDomain`) as `path: reason`.
enum FileSystemErrorText {
    /// `path: reason` for a Foundation or POSIX file error; nil for any other error.
    static func describe(_ error: any Error) -> String? {
        let ns = error as NSError
        guard ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain else { return nil }
        let path =
            (ns.userInfo[NSFilePathErrorKey] as? String) ?? (ns.userInfo[NSURLErrorKey] as? URL)?.path
        let reason: String
        if let code = posixCode(of: error) {
            reason = String(cString: strerror(code))
        } else {
            switch ns.code {
            case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue:
                reason = "no such file or folder"
            case CocoaError.fileWriteFileExists.rawValue: reason = "already exists"
            case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue:
                reason = "permission denied"
            case CocoaError.fileWriteOutOfSpace.rawValue: reason = "no space left on the device"
            case CocoaError.fileWriteVolumeReadOnly.rawValue: reason = "read-only file system"
            default: reason = "file operation failed (code \(ns.code))"
            }
        }
        return path.map { "\($0): \(reason)" } ?? reason
    }

    /// The POSIX error code behind a Foundation file error, if it has one.
    static func posixCode(of error: any Error) -> Int32? {
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        guard ns.domain == NSCocoaErrorDomain else { return nil }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        switch ns.code {
        case CocoaError.fileWriteOutOfSpace.rawValue: return ENOSPC
        case CocoaError.fileWriteVolumeReadOnly.rawValue: return EROFS
        case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue: return EACCES
        case CocoaError.fileWriteFileExists.rawValue: return EEXIST
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue: return ENOENT
        default: return nil
        }
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
