import ArgumentParser
import CloudAssets

/// `cloudassets thumbnail`: gives assets a local thumbnail without downloading their originals where possible.
struct Thumbnail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Make local thumbnails: bucket object, EXIF thumbnail or video frame (ranged reads), or the original.",
        discussion: """
            Prints "<id>\\t<key>\\t<where from>" per thumbnail. An asset whose thumbnail cannot be made (not an image or \
            a video, an unreadable one, in the cloud without --network) is reported on stderr and the others go on; the \
            command then ends with a count of the failures and the exit status of the first one. Errors that would \
            fail every asset (interrupted, credentials, an unreachable endpoint, a full disk) stop it at once.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments
    @Flag(name: .long, help: "Allow reading the bucket (ranged reads; the original only when there is no other way).")
    var network = false

    /// Failures that every further asset would meet too: the run stops at the first.
    static let stopsTheRun: Set<ExitStatus> = [
        .interrupted, .credentials, .unreachable, .noSuchBucket, .regionMismatch, .diskFull, .busy,
    ]

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: network, runsDownloads: false)
            defer { library.close() }
            let targets = try selection.resolve(in: library)
            let failures = try await withInterrupt {
                var failures: [ExitStatus] = []
                for asset in targets {
                    try Task.checkCancellation()
                    let source: ThumbnailSource
                    do {
                        guard asset.mediaType == .image || asset.mediaType == .video else {
                            throw CLIError(
                                "\(TextEscape.cStyle(asset.key)) is not an image or a video: it gets no thumbnail",
                                status: .unsupportedInput)
                        }
                        source = try await library.makeThumbnail(for: asset, isNetworkAccessAllowed: network)
                    } catch {
                        let status = ExitStatus.of(error)
                        // One asset: its error is the command's (one line).
                        if targets.count == 1 || Self.stopsTheRun.contains(status) { throw error }
                        Terminal.shared.err(
                            "error: \(asset.localIdentifier)\t\(TextEscape.cStyle(asset.key)): "
                                + UserMessage.describe(error))
                        failures.append(status)
                        continue
                    }
                    guard !global.quiet else { continue }
                    let how =
                        switch source {
                        case .alreadyLocal: "already local"
                        case .bucketObject: "from the bucket's thumbnail object"
                        case .embeddedThumbnail(let bytes): "from the embedded EXIF thumbnail (\(bytes) bytes read)"
                        case .downscaledOriginal: "downscaled from the original"
                        case .posterFrame(0): "the video's first frame, from the local original"
                        case .posterFrame(let bytes): "the video's first frame (\(bytes) bytes read)"
                        }
                    Terminal.shared.out("\(asset.localIdentifier)\t\(TextEscape.cStyle(asset.key))\t\(how)")
                }
                return failures
            }
            if let first = failures.first {
                throw CLIError(
                    "\(failures.count) of \(targets.count) thumbnails could not be made (each reported above)",
                    status: first)
            }
        }
    }
}
