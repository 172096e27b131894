import Dispatch
import Essentials
import Foundation
import Images

/// The `Images` module seen from the library: decodes run on a queue of their own (never on the cooperative
/// thread pool), at most ``concurrentDecodes`` at once so that the pixel memory of requests stays bounded, and
/// stop between rows when their task is cancelled.
enum ImageBridge {
    /// Decodes running at once, in all libraries of the process.
    static let concurrentDecodes = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
    private static let queue = DispatchQueue(label: "CloudAssets.decode", attributes: .concurrent)
    /// A decode waits for its slot suspended, holding no thread (of the pool or the queue).
    private static let slots = AsyncSlots(width: concurrentDecodes)

    /// What to decode: a file, or bytes in memory.
    enum Source: Sendable {
        case file(URL)
        case bytes([UInt8])
    }

    /// The decode request for a target size in display pixels (`nil`: the full-size image).
    static func request(
        targetSize: CGSize?, contentMode: ImageContentMode, resizeMode: ImageResizeMode, maximumPixelCount: Int,
        allowsUpscaling: Bool = true
    ) -> DecodeRequest {
        let width = targetSize.map { max(1, Int($0.width.rounded())) } ?? 0
        let height = targetSize.map { max(1, Int($0.height.rounded())) } ?? 0
        var request = DecodeRequest(
            targetWidth: width, targetHeight: height, contentMode: contentMode == .aspectFit ? .aspectFit : .aspectFill,
            resizeMode: targetSize == nil ? .none : resizeMode.decoderMode)
        request.maxPixels = maximumPixelCount
        request.allowsUpscaling = allowsUpscaling
        return request
    }

    /// Decodes `source` off the cooperative pool; cancelling the calling task stops the decode at the next row.
    static func decode(_ source: Source, request: DecodeRequest) async throws -> (AssetImage, DecodeStatistics) {
        try await offPool { isCancelled in
            let (image, statistics) =
                switch source {
                case .file(let url):
                    try ImageDecoder.decode(fileAt: url.path, request: request, isCancelled: isCancelled)
                case .bytes(let bytes):
                    try ImageDecoder.decode(data: bytes, request: request, isCancelled: isCancelled)
                }
            return (AssetImage(image), statistics)
        }
    }

    /// Runs `body`, a decode that blocks its thread, on the decode queue in one of the ``slots``; cancelling the
    /// calling task makes `isCancelled` answer true (and a decode not yet started throws `.cancelled`).
    static func offPool<T: Sendable>(
        _ body: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> T
    ) async throws -> T {
        let cancelled = LockedBox(false)
        let isCancelled: @Sendable () -> Bool = { cancelled.withLock { $0 } }
        return try await withTaskCancellationHandler {
            try await slots.withSlot {
                try await withCheckedThrowingContinuation { continuation in
                    queue.async {
                        guard !isCancelled() else { return continuation.resume(throwing: ImageError.cancelled) }
                        continuation.resume(with: Result { try body(isCancelled) })
                    }
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    static func encodeJPEG(_ image: AssetImage, quality: Int) throws(ImageError) -> [UInt8] {
        try ImageEncoder.jpeg(image.rgba, quality: min(100, max(1, quality)))
    }

    static func encodePNG(_ image: AssetImage) throws(ImageError) -> [UInt8] {
        try ImageEncoder.png(image.rgba)
    }
}

extension ImageResizeMode {
    var decoderMode: ResizeMode {
        switch self {
        case .none: .none
        case .fast: .fast
        case .exact: .exact
        }
    }
}

extension AssetImage {
    init(_ image: RGBAImage) {
        self.init(width: image.width, height: image.height, bytesPerRow: image.bytesPerRow, pixels: image.pixels)
    }

    var rgba: RGBAImage {
        RGBAImage(width: width, height: height, bytesPerRow: bytesPerRow, pixels: pixels)
    }

    /// Bytes of pixel memory.
    var byteCount: Int { pixels.count }
}
