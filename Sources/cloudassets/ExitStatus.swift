import ArgumentParser
import CloudAssets
import Foundation
import Gallery

/// Every exit status of `cloudassets`, with its one-line meaning: the single table the code, the documentation
/// (`docs/cli.md`, section "Exit codes", whose table is ``markdownTable`` verbatim and checked by a test) and the
/// tests share. ``of(_:)`` is the one place that maps an error to its status; a new error case is one line there.
enum ExitStatus: Int32, CaseIterable, Sendable {
    case ok = 0
    case unexpected = 1
    case usage = 2
    case credentials = 3
    case unreachable = 4
    case noSuchBucket = 5
    case inCloud = 6
    case busy = 7
    case changedRemotely = 8
    case diskFull = 9
    case serverError = 10
    case rangeNotSatisfiable = 11
    case refused = 12
    case regionMismatch = 13
    case uploadFailed = 14
    case pickCancelled = 15
    case unsupportedInput = 16
    case addressInUse = 17
    case interrupted = 130

    /// What the status means, in one line.
    var meaning: String {
        switch self {
        case .ok: "success"
        case .unexpected: "unexpected or internal error (a damaged catalog, a bug)"
        case .usage:
            "usage: bad flags or values, unknown asset, unreadable file to add, bad or missing configuration, a --store that is not a library"
        case .credentials:
            "credentials missing, wrong, expired or denied access, or a clock too far off for the service to accept "
                + "the requests"
        case .unreachable: "endpoint unreachable or not answering (connection refused, timeout, TLS refused)"
        case .noSuchBucket: "no such bucket"
        case .inCloud: "the data is in the cloud and the network is not allowed (offline)"
        case .busy: "the library is busy: another process holds its lock"
        case .changedRemotely: "the object changed or was deleted on the server during the operation"
        case .diskFull: "local disk full or not writable"
        case .serverError: "server error: 5xx or SlowDown after retries, or an unreadable or corrupt answer"
        case .rangeNotSatisfiable: "the byte range lies outside the object"
        case .refused:
            "refused to protect data (evicting a pinned asset, another bucket than the library's, -o inside the "
                + "library, an edit that cannot be applied as asked)"
        case .regionMismatch: "the bucket is in another region than --region"
        case .uploadFailed: "imported, but an upload failed (the original is kept; the next sync tries again)"
        case .pickCancelled: "the picker (serve --pick) was cancelled: nothing was picked"
        case .unsupportedInput:
            "the data is not what the command can read: not an image, a truncated or corrupt image, or one too large "
                + "to decode (edit, image, thumbnail)"
        case .addressInUse: "serve: another program listens on the address and port (choose another --port, or 0)"
        case .interrupted: "interrupted (Ctrl-C or SIGTERM); partial downloads are kept and resume"
        }
    }

    /// The table as it appears in docs/cli.md: a Markdown table, one row per status, in numeric order.
    static var markdownTable: String {
        (["| code | meaning |", "|------|---------|"] + allCases.map { "| \($0.rawValue) | \($0.meaning) |" })
            .joined(separator: "\n")
    }

    /// The `ExitCode` ArgumentParser ends the process with.
    var exitCode: ExitCode { ExitCode(rawValue) }

    /// The status for an error a command failed with: the library's errors by their code (``of(_:)-code``),
    /// the CLI's own by theirs.
    static func of(_ error: any Error) -> ExitStatus {
        switch error {
        case let cli as CLIError: return cli.status
        case let library as CloudAssetsError: return of(library.code)
        case GalleryServerError.cannotListen(_, _, EADDRINUSE): return .addressInUse
        case is GalleryServerError: return .usage  // an address that is not this machine's, a port below 1024
        case is CancellationError: return .interrupted
        case is ValidationError: return .usage
        default: return ofFileSystemError(error) ?? .unexpected
        }
    }

    /// The status of each of the library's error codes; codes added later exit with ``unexpected`` until they are
    /// given theirs here.
    static func of(_ code: CloudAssetsError.Code) -> ExitStatus {
        switch code {
        case .libraryBusy: .busy
        case .notALibrary, .noSuchAsset, .cannotImport, .noEndpoint: .usage
        case .boundToAnotherBucket, .catalogUnusable, .assetPinned, .cannotEdit, .unsupportedAdjustments: .refused
        case .localFileFailed: .diskFull
        case .networkNotAllowed: .inCloud
        case .objectChanged, .assetDeleted: .changedRemotely
        case .invalidRange: .rangeNotSatisfiable
        case .cancelled: .interrupted
        case .endpointUnreachable, .tlsNotTrusted: .unreachable
        case .missingCredentials, .accessDenied, .clockSkewed: .credentials
        case .noSuchBucket: .noSuchBucket
        case .wrongRegion: .regionMismatch
        case .serviceUnavailable, .corruptData: .serverError
        case .imageUnreadable, .imageTooLarge: .unsupportedInput
        default: .unexpected  // libraryClosed, catalogFailed, historyUnavailable, serviceError, unexpected
        }
    }

    /// A Foundation or POSIX file error: disk full, read-only or permission denied → ``diskFull``; nil when the
    /// error is not a file error.
    static func ofFileSystemError(_ error: any Error) -> ExitStatus? {
        guard let code = CloudAssetsError.posixCode(of: error) else { return nil }
        return [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].contains(code) ? .diskFull : .unexpected
    }
}
