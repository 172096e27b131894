import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets image`: one asset's picture at the size it will be drawn, upright, as a JPEG or PNG file.
struct Image: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an asset's image at a size (upright, bounded memory) as JPEG or PNG.",
        discussion: """
            The size is in displayed pixels (EXIF orientation applied): N for an N × N box, or WxH, each side \
            1–\(maximumSide). The image fits inside the box (--fill: covers it), but is never made larger than the \
            original: a box larger than the original gives the original's own size. Encoded pixels carry no \
            metadata, so no location.

            \(outputPathHelp)
            """)

    /// The largest side `--size` takes: a 16,384 × 16,384 RGBA image is 1 GiB of pixels already.
    static let maximumSide = 16_384
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The asset's id or key.") var asset: String
    @Option(name: .long, help: "The box: N or WxH, in pixels (default 256; never above the original's size).")
    var size = "256"
    @Flag(name: .long, help: "Cover the box instead of fitting inside it.") var fill = false
    @Flag(
        name: .long,
        help: "The cheapest decode not smaller than the fitted size, at most twice it; not resampled exactly.")
    var fast = false
    @Option(name: .long, help: "jpeg or png (default: from the output's extension, else jpeg).") var format: String?
    @Option(name: .long, help: "JPEG quality, 1–100.") var quality = 85
    @Flag(name: .long, help: "Allow downloading the original when it is not local.") var network = false
    @Option(name: .shortAndLong, help: "Write the image to this file (- for standard output).") var output: String

    func validate() throws {
        _ = try box()
        _ = try encoding()
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1–100, not \(quality)") }
    }

    /// The box's width and height.
    func box() throws -> (Int, Int) {
        let parts = size.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == parts.count, (1...2).contains(numbers.count),
            numbers.allSatisfy({ (1...Self.maximumSide) ~= $0 })
        else {
            throw ValidationError("--size must be N or WxH with sides 1–\(Self.maximumSide), not \(size)")
        }
        return (numbers[0], numbers.last!)
    }

    /// Whether to write PNG.
    func encoding() throws -> Bool {
        let name = format?.lowercased() ?? (output.lowercased().hasSuffix(".png") ? "png" : "jpeg")
        switch name {
        case "png": return true
        case "jpeg", "jpg": return false
        default: throw ValidationError("--format must be jpeg or png, not \(name)")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            if output != "-" { _ = try validateOutputPath(output) }
            let library = try await global.openLibrary(requireRemote: network, runsDownloads: false)
            defer { library.close() }
            let target = try resolveAssets([asset], in: library, includingTrash: false)[0]
            // Checked again before rendering; created only after it, so a failed render leaves no temporary file.
            if output != "-" {
                let path = try validateOutputPath(output).path
                try OutputSink.refuseInside(library.configuration.storeURL, URL(fileURLWithPath: path))
            }
            let (width, height) = try box()
            var options = ImageRequestOptions()
            options.isNetworkAccessAllowed = network
            options.resizeMode = fast ? .fast : .exact
            // The output is bounded by the original: a larger box gives the original's own size.
            options.allowsUpscaling = false
            let request = options
            let image = try await withInterrupt {
                try await library.image(
                    for: target, targetSize: CGSize(width: width, height: height),
                    contentMode: fill ? .aspectFill : .aspectFit, options: request)
            }
            let encoded = try encoding() ? image.pngData() : image.jpegData(quality: quality)
            let sink = try OutputSink(output: output, libraryFolder: library.configuration.storeURL)
            try sink.write(encoded)
            try sink.commit()
            reportPeakMemoryIfAsked()
            if !global.quiet && output != "-" {
                Terminal.shared.err("\(target.localIdentifier)\t\(image.width)x\(image.height)\t\(output)")
            }
        }
    }
}
