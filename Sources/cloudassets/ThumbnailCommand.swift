import ArgumentParser
import CloudAssets

/// `cloudassets thumbnail`: gives assets a local thumbnail without downloading their originals where possible.
struct Thumbnail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make local thumbnails: bucket object, embedded EXIF thumbnail (ranged read), or downscaled original."
    )
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments
    @Flag(name: .long, help: "Allow reading the bucket (ranged reads; the original only when there is no other way).")
    var network = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: network, runsDownloads: false)
            defer { library.close() }
            let targets = try selection.resolve(in: library)
            try await withInterrupt {
                for asset in targets {
                    let source = try await library.makeThumbnail(for: asset, isNetworkAccessAllowed: network)
                    guard !global.quiet else { continue }
                    let how =
                        switch source {
                        case .alreadyLocal: "already local"
                        case .bucketObject: "from the bucket's thumbnail object"
                        case .embeddedThumbnail(let bytes): "from the embedded EXIF thumbnail (\(bytes) bytes read)"
                        case .downscaledOriginal: "downscaled from the original"
                        }
                    Terminal.shared.out("\(asset.localIdentifier)\t\(asset.key)\t\(how)")
                }
            }
        }
    }
}
