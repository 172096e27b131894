import AssetStore
import Foundation
import Images
import S3Transfer

/// The one error type of the CloudAssets API: every method of ``AssetLibrary`` that throws, throws this (an error
/// a closure of yours throws into one of them is rethrown unchanged), and request results and progress handlers
/// report it.
///
/// Switch on ``code``, not on the message: codes are stable; new codes may be added in any release, so a `switch`
/// over them needs a `default` (``Code`` is a struct of static values for that reason, as `HTTPClientError` is).
/// ``description`` is one line a user can act on. The lower-level cause (an S3 error answer, a libcurl or SQLite
/// failure, a file system error) is kept in ``underlyingError`` for logs.
public struct CloudAssetsError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable value to switch on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as it reads in Swift (`libraryBusy`).
        public let description: String
        private init(_ name: String) { description = name }

        // The library folder and its catalog.
        /// Another ``AssetLibrary`` (in this or another process) keeps the folder to itself for longer than an
        /// open waits: it is repairing it after a crash. Several libraries may share a folder, in one process or
        /// several.
        public static let libraryBusy = Code("libraryBusy")
        /// The library was closed (``AssetLibrary/close()``).
        public static let libraryClosed = Code("libraryClosed")
        /// The folder exists but is not a CloudAssets library (it holds other files, or one of the library's own
        /// folders is a file or a link). Nothing in it was changed.
        public static let notALibrary = Code("notALibrary")
        /// The library belongs to another endpoint, bucket or prefix; open it with
        /// ``AssetLibrary/Configuration/rebind`` to move it deliberately.
        public static let boundToAnotherBucket = Code("boundToAnotherBucket")
        /// The catalog cannot be used by this version: written by a newer one, or not a CloudAssets catalog.
        /// The file is left untouched.
        public static let catalogUnusable = Code("catalogUnusable")
        /// The catalog is damaged, or SQLite failed; the transaction was rolled back.
        public static let catalogFailed = Code("catalogFailed")
        /// A local file or folder could not be read or written (disk full, read-only, permission denied).
        public static let localFileFailed = Code("localFileFailed")
        /// The change history after the token was trimmed (``AssetLibrary/Configuration/historyLimit``), or the
        /// token belongs to another library: refetch everything.
        public static let historyUnavailable = Code("historyUnavailable")

        // Assets and requests.
        /// The library has no asset with this identifier (it may have been deleted, or belongs to another
        /// library).
        public static let noSuchAsset = Code("noSuchAsset")
        /// The library has no album or folder with this identifier (it may have been deleted).
        public static let noSuchCollection = Code("noSuchCollection")
        /// A collection change was refused (a smart album, an empty title, a folder moved into itself, an index
        /// out of range); nothing of the change was committed.
        public static let cannotChangeCollection = Code("cannotChangeCollection")
        /// The asset was deleted (locally or in the bucket) while it was being read.
        public static let assetDeleted = Code("assetDeleted")
        /// The object changed or disappeared in the bucket during the operation; sync and try again.
        public static let objectChanged = Code("objectChanged")
        /// The byte range starts at or past the end of the original.
        public static let invalidRange = Code("invalidRange")
        /// A pinned asset cannot be evicted; unpin it first.
        public static let assetPinned = Code("assetPinned")
        /// A file given to ``AssetLibrary/performChanges(_:)`` could not be imported; nothing was committed.
        public static let cannotImport = Code("cannotImport")
        /// A content edit was refused (no adjustment data, a rendered file that is not a JPEG, a revision the
        /// library does not have); nothing of the change was committed.
        public static let cannotEdit = Code("cannotEdit")
        /// The adjustment data is in a format or version the editor does not understand: it is refused, never
        /// misapplied.
        public static let unsupportedAdjustments = Code("unsupportedAdjustments")
        /// The operation was cancelled (task cancellation, ``AssetLibrary/cancelRequest(_:)``, a progress
        /// handler's stop flag).
        public static let cancelled = Code("cancelled")

        // The network.
        /// The data is in the cloud and the network may not be used: the library's ``NetworkPolicy`` is
        /// `.offline` or the request does not allow network access.
        public static let networkNotAllowed = Code("networkNotAllowed")
        /// The library has no endpoint configured.
        public static let noEndpoint = Code("noEndpoint")
        /// The endpoint could not be reached: name not resolved, connection refused or reset, timed out.
        public static let endpointUnreachable = Code("endpointUnreachable")
        /// The endpoint's TLS certificate was not trusted (see ``AssetLibrary/Configuration/caBundlePath``).
        public static let tlsNotTrusted = Code("tlsNotTrusted")
        /// No usable credentials: nothing along the credential chain (``Credentials/default``), the environment
        /// lacks `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` (``Credentials/environment``), or the source configured
        /// failed (a malformed `~/.aws` file, a `credential_process` that fails, credentials that expired and could
        /// not be refreshed). The message names what was tried or what failed.
        public static let missingCredentials = Code("missingCredentials")
        /// The configuration cannot work (an empty bucket name, an empty access key or secret, an endpoint that is
        /// not an `http` or `https` URL with a host): thrown by `init`, before any request. Never transient.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The service rejected the credentials (unknown access key, wrong secret, an expired or foreign session
        /// token) or denied access, or STS refused to issue the role's credentials.
        public static let accessDenied = Code("accessDenied")
        /// The bucket does not exist.
        public static let noSuchBucket = Code("noSuchBucket")
        /// The bucket lives in another region than the configured one.
        public static let wrongRegion = Code("wrongRegion")
        /// The local clock differs too much from the service's.
        public static let clockSkewed = Code("clockSkewed")
        /// The service failed (5xx, `SlowDown`) after the configured retries, or answered with something that
        /// could not be read.
        public static let serviceUnavailable = Code("serviceUnavailable")
        /// The downloaded bytes failed their integrity check; nothing was kept.
        public static let corruptData = Code("corruptData")
        /// Any other error answer of the service (its S3 code is in the message).
        public static let serviceError = Code("serviceError")
        // Images.
        /// The file is not an image the library decodes (JPEG, PNG, HEIF) or a video whose frames it decodes
        /// (FFmpeg's containers and codecs), its bytes are corrupt or truncated, or the decoder's library (libheif,
        /// FFmpeg) cannot be loaded.
        public static let imageUnreadable = Code("imageUnreadable")
        /// The image's declared pixel count is above the decoder's limit: refused before any pixel memory is
        /// allocated.
        public static let imageTooLarge = Code("imageTooLarge")

        /// An error the library did not expect (a defect): ``CloudAssetsError/underlyingError`` says more.
        public static let unexpected = Code("unexpected")
    }

    /// What went wrong.
    public let code: Code
    /// One line a user can act on.
    public let description: String
    /// The cause below the API (an S3 error answer, a transport, SQLite or file system error), for logs; its type
    /// is not part of the API.
    public let underlyingError: (any Error & Sendable)?
    /// The asset concerned, when the error is about one.
    public let localIdentifier: String?
    /// The bucket key or local path concerned, when the error is about one.
    public let path: String?

    /// Whether trying again later may succeed (the network, the service, a busy library), as opposed to errors
    /// that need something to change first.
    public var isTransient: Bool {
        [.libraryBusy, .endpointUnreachable, .serviceUnavailable, .objectChanged].contains(code)
    }

    init(
        _ code: Code, _ description: String, underlying: (any Error & Sendable)? = nil,
        localIdentifier: String? = nil, path: String? = nil
    ) {
        self.code = code
        self.description = description
        self.underlyingError = underlying
        self.localIdentifier = localIdentifier
        self.path = path
    }
}

extension CloudAssetsError: Equatable {
    /// Two errors are equal when their code, message, asset and path are (the underlying error is not compared).
    public static func == (lhs: CloudAssetsError, rhs: CloudAssetsError) -> Bool {
        lhs.code == rhs.code && lhs.description == rhs.description && lhs.localIdentifier == rhs.localIdentifier
            && lhs.path == rhs.path
    }
}

// MARK: - The boundary

extension CloudAssetsError {
    /// `error` as the API reports it: the library's own errors and those of the modules below it become a
    /// ``CloudAssetsError``; any other error (one a caller's closure threw) is returned unchanged.
    static func mapping(_ error: any Error) -> any Error {
        converted(error) ?? error
    }

    /// The ``CloudAssetsError`` for one of the library's errors, nil for an error of somebody else's.
    static func converted(_ error: any Error) -> CloudAssetsError? {
        switch error {
        case let mapped as CloudAssetsError: return mapped
        case let library as AssetLibraryError: return CloudAssetsError(library)
        case let request as AssetRequestError: return CloudAssetsError(request)
        case let store as AssetStoreError: return CloudAssetsError(store)
        case let s3 as S3Error: return CloudAssetsError(s3)
        case let image as ImageError: return CloudAssetsError(image)
        case let configuration as S3ConfigurationError:
            return CloudAssetsError(.noEndpoint, configuration.description, underlying: configuration)
        case let cancellation as CancellationError:
            return CloudAssetsError(.cancelled, "The operation was cancelled.", underlying: cancellation)
        default:
            // A SQLite error that left the store untranslated is still the store's (a full disk: localFileFailed).
            return AssetStore.translated(error).map { CloudAssetsError($0) } ?? fileSystemError(error)
        }
    }

    /// `error` as a result or handler reports it: ``converted(_:)``, or ``Code/unexpected`` around it.
    static func reported(_ error: any Error) -> CloudAssetsError {
        converted(error) ?? CloudAssetsError(.unexpected, String(describing: error), underlying: UnexpectedError(error))
    }

    /// Runs `body`, reporting a thrown error as ``mapping(_:)`` does. The one way a public method throws.
    @discardableResult
    static func boundary<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw mapping(error) }
    }

    /// Runs `body`, reporting a thrown error as ``mapping(_:)`` does. The one way a public async method throws.
    @discardableResult
    static func boundary<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw mapping(error) }
    }

    /// The library's own errors: their description is the whole story, so no underlying error repeats it.
    init(_ error: AssetLibraryError) {
        let text = error.description
        switch error {
        case .locked(let path): self.init(.libraryBusy, text, path: path)
        case .closed: self.init(.libraryClosed, text)
        case .offline: self.init(.networkNotAllowed, text)
        case .missingCredentials: self.init(.missingCredentials, text)
        case .invalidConfiguration: self.init(.invalidConfiguration, text)
        case .notALibrary(let path, _): self.init(.notALibrary, text, path: path)
        case .boundToAnotherBucket(let library, _, _): self.init(.boundToAnotherBucket, text, path: library)
        case .cannotImport(let path, _): self.init(.cannotImport, text, path: path)
        case .cannotEdit(let id, _): self.init(.cannotEdit, text, localIdentifier: id)
        case .noSuchAsset(let id): self.init(.noSuchAsset, text, localIdentifier: id)
        case .noSuchCollection(let id): self.init(.noSuchCollection, text, localIdentifier: id)
        case .cannotChangeCollection(let id, _):
            self.init(.cannotChangeCollection, text, localIdentifier: id.isEmpty ? nil : id)
        }
    }

    init(_ error: AssetRequestError) {
        let text = error.description
        switch error {
        case .inCloud(let key, let id, _):
            self.init(.networkNotAllowed, text, localIdentifier: id.map(String.init), path: key)
        case .cancelled: self.init(.cancelled, text)
        case .assetDeleted(let id): self.init(.assetDeleted, text, localIdentifier: String(id))
        case .objectChanged(let key): self.init(.objectChanged, text, path: key)
        case .invalidRange: self.init(.invalidRange, text)
        case .pinned(let id): self.init(.assetPinned, text, localIdentifier: String(id))
        case .noRemote: self.init(.noEndpoint, text)
        case .localFile(let path, _): self.init(.localFileFailed, text, path: path)
        }
    }

    init(_ error: ImageError) {
        switch error {
        case .cancelled: self.init(.cancelled, "The image request was cancelled.", underlying: error)
        case .tooLarge(let width, let height, let limit):
            self.init(
                .imageTooLarge,
                "The image is \(width) × \(height) pixels, above the decoder's limit of \(limit) pixels.",
                underlying: error)
        case .unsupportedFormat:
            self.init(.imageUnreadable, "The file is not a JPEG, PNG or HEIF image.", underlying: error)
        case .truncated: self.init(.imageUnreadable, "The image file is truncated.", underlying: error)
        case .corrupt(let reason): self.init(.imageUnreadable, "The image is corrupt: \(reason).", underlying: error)
        case .codec(let reason):
            self.init(.imageUnreadable, "The image could not be decoded: \(reason).", underlying: error)
        case .unsupportedAdjustments(let format, let version):
            self.init(
                .unsupportedAdjustments,
                "The edit's adjustment data is \(format) version \(version), which this editor cannot apply; "
                    + "edit without resuming to work on the rendered version.",
                underlying: error)
        case .invalidAdjustments(let reason):
            self.init(.cannotEdit, "The edit's adjustments are invalid: \(reason).", underlying: error)
        case .output(let reason):
            self.init(.localFileFailed, "The rendered image could not be written: \(reason).", underlying: error)
        }
    }

    init(_ error: AssetStoreError) {
        switch error {
        case .readOnly(let path): self.init(.localFileFailed, error.description, underlying: error, path: path)
        case .notAnAssetStore(let path): self.init(.catalogUnusable, error.description, underlying: error, path: path)
        case .schemaTooNew: self.init(.catalogUnusable, error.description, underlying: error)
        case .corrupt(let path, _): self.init(.catalogFailed, error.description, underlying: error, path: path)
        case .invalidToken, .historyExpired: self.init(.historyUnavailable, error.description, underlying: error)
        case .notFound(let id):
            self.init(.noSuchAsset, error.description, underlying: error, localIdentifier: String(id))
        case .invariantViolation, .duplicateKey, .database:
            self.init(.catalogFailed, error.description, underlying: error)
        case .diskFull(let path), .diskFailed(let path, _):
            self.init(.localFileFailed, error.description, underlying: error, path: path)
        }
    }

    init(_ error: S3Error) {
        let text = Self.message(for: error)
        switch error {
        case .retriesExhausted(let last, let attempts):
            let cause = CloudAssetsError(last)
            self.init(
                cause.code, "\(cause.description) (gave up after \(attempts) attempts)", underlying: error,
                path: cause.path)
        case .invalidAccessKeyId, .signatureDoesNotMatch, .accessDenied:
            self.init(.accessDenied, text, underlying: error)
        case .transport(let code, _) where S3Error.tlsTrustCodes.contains(code):
            self.init(.tlsNotTrusted, text, underlying: error)
        case .transport: self.init(.endpointUnreachable, text, underlying: error)
        case .noSuchBucket: self.init(.noSuchBucket, text, underlying: error)
        case .networkAccessNotAllowed: self.init(.networkNotAllowed, text, underlying: error)
        case .noSuchKey, .objectChanged, .preconditionFailed: self.init(.objectChanged, text, underlying: error)
        case .fileSystem(let path, _): self.init(.localFileFailed, text, underlying: error, path: path)
        case .slowDown, .malformedResponse: self.init(.serviceUnavailable, text, underlying: error)
        case .checksumMismatch: self.init(.corruptData, text, underlying: error)
        case .permanentRedirect: self.init(.wrongRegion, text, underlying: error)
        case .invalidRange: self.init(.invalidRange, text, underlying: error)
        case .cancelled: self.init(.cancelled, text, underlying: error)
        case .requestTimeTooSkewed: self.init(.clockSkewed, text, underlying: error)
        case .credentials(let cause):
            let code: Code =
                cause.isDenied ? .accessDenied : cause.isUnreachable ? .endpointUnreachable : .missingCredentials
            self.init(code, text, underlying: error)
        case .service(let code, _, let status, _):
            if code == "AuthorizationHeaderMalformed" || code == "IllegalLocationConstraintException" {
                self.init(.wrongRegion, text, underlying: error)
            } else if Self.refusedTokenCodes.contains(code) {
                self.init(.accessDenied, text, underlying: error)
            } else {
                self.init(status >= 500 ? .serviceUnavailable : .serviceError, text, underlying: error)
            }
        }
    }

    /// The service's codes for temporary credentials it refuses (expired, or a session token that is not theirs):
    /// the credentials are refused, as a wrong key is (``Code/accessDenied``).
    static let refusedTokenCodes: Set<String> = [
        "ExpiredToken", "InvalidToken", "TokenRefreshRequired", "InvalidClientTokenId",
    ]

    /// The one-line message of an S3 error, in the words of someone configuring an endpoint.
    private static func message(for error: S3Error) -> String {
        switch error {
        case .transport(let code, let message):
            switch code {
            case 6, 7:
                return "Cannot reach the endpoint (\(message)); check the endpoint and that the server is running."
            case 28, HTTPTransportError.noAnswerCode: return "The endpoint did not answer in time (\(message))."
            case _ where S3Error.tlsTrustCodes.contains(code): return tlsMessage(code: code, detail: message)
            default: return error.description
            }
        case .invalidAccessKeyId:
            return "Wrong credentials: the access key id is not known to the server (check AWS_ACCESS_KEY_ID)."
        case .signatureDoesNotMatch:
            return "Wrong credentials: the secret key does not match (check AWS_SECRET_ACCESS_KEY)."
        case .service(let code, let message, let status, _)
        where code == "AuthorizationHeaderMalformed" || code == "IllegalLocationConstraintException":
            return "The bucket is in another region: \(message) (\(code), HTTP \(status)). Configure its region."
        default: return error.description
        }
    }

    /// The one line of a refused TLS certificate: a certificate for another host name, a CA bundle that cannot be
    /// read, or an issuer that is not trusted, each with what to set.
    private static func tlsMessage(code: Int, detail: String) -> String {
        let lowered = detail.lowercased()
        if lowered.contains("host name") || lowered.contains("hostname") || lowered.contains("subject name") {
            return "The endpoint's TLS certificate is for another host name (\(detail)); "
                + "use the host name the certificate names in the endpoint."
        }
        if code == 77 {
            return "The CA bundle cannot be read (\(detail)); check Configuration.caBundlePath "
                + "(AWS_CA_BUNDLE or --ca-bundle for the command line)."
        }
        return "The endpoint's TLS certificate is not trusted (\(detail)); if a private CA issued it, set "
            + "Configuration.caBundlePath (AWS_CA_BUNDLE or --ca-bundle for the command line) to that CA's PEM file."
    }

    /// A Foundation or POSIX file error as ``Code/localFileFailed`` (`path: reason`); nil for any other error.
    package static func fileSystemError(_ error: any Error) -> CloudAssetsError? {
        let ns = error as NSError
        guard ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain else { return nil }
        let path = (ns.userInfo[NSFilePathErrorKey] as? String) ?? (ns.userInfo[NSURLErrorKey] as? URL)?.path
        let posix = posixCode(of: error)
        let reason: String
        if let posix {
            reason = String(cString: strerror(posix))
        } else {
            switch ns.code {
            case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue:
                reason = "no such file or folder"
            case CocoaError.fileWriteFileExists.rawValue: reason = "already exists"
            default: reason = "file operation failed (code \(ns.code))"
            }
        }
        return CloudAssetsError(
            .localFileFailed, path.map { "\($0): \(reason)" } ?? reason,
            underlying: FileError(domain: ns.domain, code: ns.code, posixCode: posix), path: path)
    }

    /// The POSIX error code behind a Foundation file error, if it has one.
    package static func posixCode(of error: any Error) -> Int32? {
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        guard ns.domain == NSCocoaErrorDomain else { return nil }
        // `as? any Error` first: `as? NSError` does not bridge a Swift error kept in `userInfo` on Linux.
        if let underlying = (ns.userInfo[NSUnderlyingErrorKey] as? any Error).map({ $0 as NSError }),
            underlying.domain == NSPOSIXErrorDomain
        {
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

    /// The text of an error of another type (which need not be `Sendable`).
    struct UnexpectedError: Error, Sendable, CustomStringConvertible {
        let description: String
        init(_ error: any Error) { description = String(reflecting: error) }
    }

    /// A Foundation file error's domain and codes (`NSError` is not `Sendable`).
    struct FileError: Error, Sendable, Hashable {
        let domain: String
        let code: Int
        let posixCode: Int32?
    }
}
