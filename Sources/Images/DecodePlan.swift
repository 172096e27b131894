/// Output sizes for a decode request, and the pipeline that turns stored rows into the output image.
enum DecodePlan {
    /// The exact output size in display orientation: the aspect-fit or aspect-fill size of the display size in
    /// the target, rounded, at least 1 a side; the display size itself for `.none` or a non-positive target, and
    /// when the fitted size would be larger than the display size and the request does not allow upscaling.
    static func exactSize(displayWidth: Int, displayHeight: Int, request: DecodeRequest) -> (width: Int, height: Int) {
        guard request.resizeMode != .none, request.targetWidth > 0, request.targetHeight > 0 else {
            return (displayWidth, displayHeight)
        }
        let fitted = fittedSize(
            width: displayWidth, height: displayHeight, targetWidth: request.targetWidth,
            targetHeight: request.targetHeight, contentMode: request.contentMode)
        if !request.allowsUpscaling && (fitted.width > displayWidth || fitted.height > displayHeight) {
            return (displayWidth, displayHeight)
        }
        return fitted
    }

    /// The size of `width` x `height` scaled to fit in (or to cover) the target, keeping its aspect ratio.
    static func fittedSize(
        width: Int, height: Int, targetWidth: Int, targetHeight: Int, contentMode: ContentMode
    ) -> (width: Int, height: Int) {
        let scaleX = Double(targetWidth) / Double(width)
        let scaleY = Double(targetHeight) / Double(height)
        let scale = contentMode == .aspectFit ? min(scaleX, scaleY) : max(scaleX, scaleY)
        var w = max(1, Int((Double(width) * scale).rounded()))
        var h = max(1, Int((Double(height) * scale).rounded()))
        // The side that set the scale matches the target exactly.
        if scale == scaleX { w = targetWidth } else { h = targetHeight }
        return (w, h)
    }

    /// The cheap ".fast" size for formats without DCT scaling: the source divided by the largest whole number
    /// that keeps it at least the exact size.
    static func integerFraction(width: Int, height: Int, exact: (width: Int, height: Int)) -> (width: Int, height: Int)
    {
        let factor = max(1, min(width / max(1, exact.width), height / max(1, exact.height)))
        return ((width + factor - 1) / factor, (height + factor - 1) / factor)
    }

    /// The `.fast` output size for a cheap decode of `cheap` pixels (a DCT-scaled JPEG, an integer fraction):
    /// `cheap` itself while it is at most twice `exact` on each side, else `exact` (the area resampler takes it
    /// there row by row). Both sizes are in the same (stored) orientation.
    static func fastSize(
        cheap: (width: Int, height: Int), exact: (width: Int, height: Int)
    ) -> (width: Int, height: Int) {
        cheap.width > 2 * exact.width || cheap.height > 2 * exact.height ? exact : cheap
    }

    static func checkPixels(width: Int, height: Int, limit: Int) throws(ImageError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > limit { throw .tooLarge(width: width, height: height, limit: limit) }
    }
}

/// Collects stored-orientation rows, resampling them when the output is smaller or larger, then makes the
/// result upright. Tracks the pixel bytes it holds.
struct RowPipeline {
    let sourceWidth: Int
    let sourceHeight: Int
    let width: Int
    let height: Int
    private var resampler: AreaResampler?
    private var output: [UInt8]
    private var rowsIn = 0
    private(set) var liveBytes = 0
    private(set) var peakBytes = 0

    /// Throws `.tooLarge` before allocating when the output is over `maxPixels`: a source under the limit can
    /// still ask for a huge output (an aspect-fill of a very thin image, a large upscale).
    init(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int, maxPixels: Int) throws(ImageError) {
        try DecodePlan.checkPixels(width: width, height: height, limit: maxPixels)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        output = [UInt8](repeating: 0, count: width * height * 4)
        if width != sourceWidth || height != sourceHeight {
            resampler = AreaResampler(
                sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: width, height: height)
        }
        allocate(output.count + (resampler?.bufferBytes ?? 0))
    }

    mutating func allocate(_ bytes: Int) {
        liveBytes += bytes
        peakBytes = max(peakBytes, liveBytes)
    }

    mutating func release(_ bytes: Int) { liveBytes -= bytes }

    var isComplete: Bool { rowsIn == sourceHeight }

    /// Adds the next stored row of `sourceWidth` RGBA8 pixels.
    mutating func push(_ row: UnsafeRawBufferPointer) throws(ImageError) {
        guard rowsIn < sourceHeight else { return }
        let width = self.width
        if resampler == nil {
            let start = rowsIn * width * 4
            output.withUnsafeMutableBytes { out in
                out.baseAddress!.advanced(by: start).copyMemory(from: row.baseAddress!, byteCount: width * 4)
            }
        } else {
            var output = self.output
            self.output = []
            try resampler!.push(row) { (y: Int, resampled: UnsafeBufferPointer<UInt8>) throws(ImageError) in
                output.withUnsafeMutableBufferPointer { out in
                    _ = UnsafeMutableBufferPointer(rebasing: out[(y * width * 4)..<((y + 1) * width * 4)])
                        .initialize(from: resampled)
                }
            }
            self.output = output
        }
        rowsIn += 1
    }

    /// The output, upright; throws `.truncated` when rows are missing.
    mutating func finish(orientation: Int) throws(ImageError) -> RGBAImage {
        guard isComplete else { throw .truncated }
        let image = RGBAImage(width: width, height: height, bytesPerRow: width * 4, pixels: output)
        if (2...8).contains(orientation) { allocate(output.count) }
        return Orientation.upright(image, orientation: orientation)
    }
}
