import ArgumentParser
import CloudAssets
import Foundation

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
        case let library as CloudAssetsError: text = describe(library)
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

    /// The library's message, with what to do about it in this tool's terms (its flags and config file).
    static func describe(_ error: CloudAssetsError) -> String {
        switch error.code {
        case .missingCredentials:
            "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                + "(or accessKeyID and secretAccessKey in the config file)"
        case .libraryBusy:
            "the library \(error.path ?? "") is busy: another cloudassets process has it open (a watch?); "
                + "try again later"
        case .endpointUnreachable: "\(error.description) (check --endpoint)"
        case .noSuchBucket: "no such bucket; check --bucket and --endpoint"
        case .networkNotAllowed: "\(error.description) (pass --network, or change the policy)"
        case .wrongRegion: "region mismatch: \(error.description) Pass --region or set AWS_REGION."
        case .serviceUnavailable: "server error: \(error.description)"
        default: error.description
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
