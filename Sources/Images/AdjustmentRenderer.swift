import CTurboJPEG

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one render produced and cost.
package struct RenderStatistics: Sendable, Hashable {
    /// The rendered image's size.
    package var width: Int
    package var height: Int
    /// The JPEG file's length in bytes.
    package var outputBytes: Int
    /// The most bytes of pixel buffers the render held at once (row bands, the cropped region when it had to be
    /// held, a decoded PNG/HEIF); the codec libraries' own working memory (a few rows) is not counted.
    package var peakPixelBytes: Int
    /// Whether rows went from the decoder to the encoder band by band (a JPEG source with no quarter turn and no
    /// top-bottom mirror overall), so that no image-sized buffer existed.
    package var streamed: Bool
    /// How many times the source was decoded (more than 1 when the held region would exceed `maxHeldBytes`).
    package var passes: Int
}

/// Renders `BasicAdjustments` from an original to a baseline JPEG, in bounded memory.
///
/// Safe to call from any number of threads at once (each call has its own codec state).
package enum AdjustmentRenderer {
    /// Renders `adjustments` applied to the image at `source` (JPEG, PNG or HEIF) into a baseline JPEG (4:2:0)
    /// at `outputPath`, in the order `BasicAdjustments` documents (EXIF orientation first).
    ///
    /// Memory, for a JPEG source: only the stored rows and columns the crop covers are decoded (rows above it
    /// are skipped without their inverse DCT, rows below are never read, columns outside it are not decoded
    /// past libjpeg's iMCU boundary). When the EXIF orientation and the edit together neither transpose nor
    /// mirror top-bottom, rows stream from decoder to encoder in bands of 16: peak pixel memory is
    /// O(width × 16), whatever the image's height. Otherwise the stored pixels under the crop are held, 3 bytes a
    /// pixel, and the output's rows gathered from them; when they exceed `maxHeldBytes`, the output is made in
    /// several passes over the file, each holding only the part of the region its band of output rows needs
    /// (a strip of columns for a quarter turn), so peak pixel memory stays about `maxHeldBytes` + O(width × 16)
    /// for any image, at the price of decoding the region's compressed data once per pass. PNG and HEIF
    /// sources are decoded whole (upright RGBA, O(image)) first.
    ///
    /// Output: upright pixels; no metadata segment but JFIF (no EXIF, so no orientation tag, no GPS, no
    /// capture date, no ICC profile: pixel values are kept as sRGB). Written to a temporary file created
    /// exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, so never through a symlink) in the output's folder, flushed to
    /// disk with fsync when `durable`, then renamed over `outputPath` (a symlink there is replaced, not followed).
    /// On any failure no temporary file is left and `outputPath` is untouched.
    ///
    /// Throws: `.invalidAdjustments` (values out of range, a crop outside the rotated image), `.tooLarge`
    /// (stored width × height above `maxPixels`, before any pixel is allocated), `.unsupportedFormat`,
    /// `.truncated`, `.corrupt`, `.codec` (the source), `.output` (the output file), `.cancelled` (`isCancelled`
    /// is polled between bands of rows).
    package static func render(
        source path: String, adjustments: BasicAdjustments, to outputPath: String, quality: Int = 90,
        maxPixels: Int = 100_000_000, maxHeldBytes: Int = 32 << 20, durable: Bool = true,
        isCancelled: @Sendable () -> Bool = { false }
    ) throws(ImageError) -> RenderStatistics {
        try adjustments.validate()
        let (format, orientation) = try ImageDecoder.probe(fileAt: path)
        let tone = ToneMap(adjustments)
        let output = try OutputFile(path: outputPath)
        var finished = false
        defer { if !finished { output.discard() } }
        let encoder = try output.encoder()
        defer { cj_encoder_destroy(encoder) }
        let plan: RenderPlan
        var peak = 0
        var passes = 1
        switch format {
        case .jpeg:
            var source = try JPEGRows(path: path)
            defer { source.close() }
            try DecodePlan.checkPixels(width: source.width, height: source.height, limit: maxPixels)
            plan = try RenderPlan(
                storedWidth: source.width, storedHeight: source.height, orientation: orientation,
                adjustments: adjustments)
            try start(encoder, plan: plan, quality: quality)
            if plan.streams {
                try source.start(plan)
                peak = try stream(&source, plan: plan, tone: tone, encoder: encoder, isCancelled: isCancelled)
            } else {
                // Output bands of whole 16-row groups, each holding at most about maxHeldBytes.
                let held = plan.regionWidth * plan.regionHeight * 3
                passes = max(1, min((held + max(1, maxHeldBytes) - 1) / max(1, maxHeldBytes), plan.outputHeight))
                let rowsPerPass = (plan.outputHeight + passes - 1) / passes
                let step = min(plan.outputHeight, (rowsPerPass + band - 1) / band * band)
                passes = 0
                for y in stride(from: 0, to: plan.outputHeight, by: step) {
                    let part = try plan.rows(y..<min(plan.outputHeight, y + step), adjustments: adjustments)
                    if passes > 0 {
                        source.close()
                        source = try JPEGRows(path: path)
                    }
                    try source.start(part)
                    peak = max(
                        peak, try gather(&source, plan: part, tone: tone, encoder: encoder, isCancelled: isCancelled))
                    passes += 1
                }
            }
        case .png, .heif:
            var request = DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none)
            request.maxPixels = maxPixels
            let (image, statistics) = try ImageDecoder.decode(fileAt: path, request: request, isCancelled: isCancelled)
            plan = try RenderPlan(
                storedWidth: image.width, storedHeight: image.height, orientation: 1, adjustments: adjustments)
            try start(encoder, plan: plan, quality: quality)
            var rows = ImageRows(image: image, row: plan.regionY, firstColumn: plan.regionX, columns: plan.regionWidth)
            let held =
                plan.streams
                ? try stream(&rows, plan: plan, tone: tone, encoder: encoder, isCancelled: isCancelled)
                : try gather(&rows, plan: plan, tone: tone, encoder: encoder, isCancelled: isCancelled)
            peak = max(statistics.peakPixelBytes, image.pixels.count + held)
        }
        var bytes: UnsafePointer<UInt8>?
        var length = 0
        guard cj_encoder_finish(encoder, &bytes, &length) == CJ_OK else {
            throw .output("\(outputPath): \(String(cString: cj_encoder_message(encoder)))")
        }
        finished = true  // commit removes the temporary file itself when it fails
        try output.commit(durable: durable)
        return RenderStatistics(
            width: plan.outputWidth, height: plan.outputHeight, outputBytes: length, peakPixelBytes: peak,
            streamed: format == .jpeg && plan.streams, passes: passes)
    }

    /// Rows of the band the encoder takes at once (and the decoder gives).
    static let band = 16

    private static func start(_ encoder: OpaquePointer, plan: RenderPlan, quality: Int) throws(ImageError) {
        guard plan.outputWidth <= 65_500, plan.outputHeight <= 65_500 else {
            throw .invalidAdjustments("a JPEG cannot be \(plan.outputWidth)x\(plan.outputHeight)")
        }
        guard
            cj_encoder_start_components(
                encoder, Int32(plan.outputWidth), Int32(plan.outputHeight), Int32(min(100, max(1, quality))), 3, nil,
                0) == CJ_OK
        else { throw .output(String(cString: cj_encoder_message(encoder))) }
    }

    private static func write(
        _ encoder: OpaquePointer, _ pointer: UnsafePointer<UInt8>, stride: Int, count: Int
    ) throws(ImageError) {
        guard cj_encoder_write_rows(encoder, pointer, stride, Int32(count)) == CJ_OK else {
            throw .output(String(cString: cj_encoder_message(encoder)))
        }
    }

    /// Output rows are the region's rows in order (mirrored when the plan says): band by band from decoder to
    /// encoder. Returns the bytes of pixel buffers held.
    private static func stream<Rows: StoredRows>(
        _ rows: inout Rows, plan: RenderPlan, tone: ToneMap, encoder: OpaquePointer, isCancelled: () -> Bool
    ) throws(ImageError) -> Int {
        let stride = rows.columns * 3
        // Byte offset of the region's first column in a decoded row.
        let columnOffset = (plan.regionX - rows.firstColumn) * 3
        let width = plan.regionWidth
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: band * stride)
        defer { buffer.deallocate() }
        var y = 0
        while y < plan.outputHeight {
            if isCancelled() { throw .cancelled }
            let count = min(band, plan.outputHeight - y)
            try rows.read(into: buffer, stride: stride, count: count)
            for j in 0..<count {
                let row = buffer + j * stride + columnOffset
                tone.apply(row, pixels: width)
                if plan.mirrorsRows { reverse(row, pixels: width) }
            }
            try write(encoder, buffer + columnOffset, stride: stride, count: count)
            y += count
        }
        return band * stride
    }

    /// Holds the plan's region (toned), then gathers the output's rows from it. Returns the bytes of pixel
    /// buffers held.
    private static func gather<Rows: StoredRows>(
        _ rows: inout Rows, plan: RenderPlan, tone: ToneMap, encoder: OpaquePointer, isCancelled: () -> Bool
    ) throws(ImageError) -> Int {
        let stride = rows.columns * 3
        let columnOffset = (plan.regionX - rows.firstColumn) * 3
        let regionBytes = plan.regionHeight * stride
        let region = UnsafeMutablePointer<UInt8>.allocate(capacity: regionBytes + 1)
        region[regionBytes] = 0
        defer { region.deallocate() }
        var y = 0
        while y < plan.regionHeight {
            if isCancelled() { throw .cancelled }
            let count = min(band, plan.regionHeight - y)
            try rows.read(into: region + y * stride, stride: stride, count: count)
            for j in 0..<count { tone.apply(region + (y + j) * stride + columnOffset, pixels: plan.regionWidth) }
            y += count
        }
        let outputStride = plan.outputWidth * 3
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: band * outputStride)
        defer { out.deallocate() }
        // Output (x, y) is region byte base + x * dx + y * dy.
        let dx = plan.xStepY * stride + plan.xStepX * 3
        let dy = plan.yStepY * stride + plan.yStepX * 3
        let base = columnOffset + plan.originY * stride + plan.originX * 3
        let source = UnsafePointer(region)
        y = 0
        while y < plan.outputHeight {
            if isCancelled() { throw .cancelled }
            let count = min(band, plan.outputHeight - y)
            if plan.transposes {
                // Each region row gives the band `count` neighbouring pixels: walk it x-major. A pixel is moved as
                // 4 bytes (the 4th is the next pixel's first, rewritten when that pixel is; the region has a byte
                // of slack), except in the last column, whose 4th byte would be the next row's.
                let raw = UnsafeMutableRawPointer(out)
                let from0 = UnsafeRawPointer(source)
                for x in 0..<plan.outputWidth {
                    var from = base + x * dx + y * dy
                    var to = x * 3
                    if x < plan.outputWidth - 1 {
                        for _ in 0..<count {
                            raw.storeBytes(
                                of: from0.loadUnaligned(fromByteOffset: from, as: UInt32.self), toByteOffset: to,
                                as: UInt32.self)
                            from += dy
                            to += outputStride
                        }
                    } else {
                        for _ in 0..<count {
                            out[to] = source[from]
                            out[to + 1] = source[from + 1]
                            out[to + 2] = source[from + 2]
                            from += dy
                            to += outputStride
                        }
                    }
                }
            } else {
                for j in 0..<count {
                    var from = base + (y + j) * dy
                    let row = out + j * outputStride
                    if dx == 3 {
                        row.update(from: source + from, count: outputStride)
                        continue
                    }
                    for x in 0..<plan.outputWidth {
                        row[x * 3] = source[from]
                        row[x * 3 + 1] = source[from + 1]
                        row[x * 3 + 2] = source[from + 2]
                        from += dx
                    }
                }
            }
            try write(encoder, out, stride: outputStride, count: count)
            y += count
        }
        return regionBytes + band * outputStride
    }

    /// Mirrors a row of RGB pixels in place.
    private static func reverse(_ row: UnsafeMutablePointer<UInt8>, pixels: Int) {
        var left = 0
        var right = (pixels - 1) * 3
        while left < right {
            for c in 0..<3 {
                let t = row[left + c]
                row[left + c] = row[right + c]
                row[right + c] = t
            }
            left += 3
            right -= 3
        }
    }
}

/// Stored rows in order from the top, each holding `columns` RGB8 pixels from stored column `firstColumn`.
private protocol StoredRows {
    var firstColumn: Int { get }
    var columns: Int { get }
    /// Reads the next `count` rows into rows of `stride` bytes.
    mutating func read(into buffer: UnsafeMutablePointer<UInt8>, stride: Int, count: Int) throws(ImageError)
}

/// A libjpeg decode of a file, started for a plan's region: RGB rows of the region's columns (widened by libjpeg
/// to iMCU boundaries), from the region's first row.
private struct JPEGRows: StoredRows {
    private(set) var decoder: OpaquePointer?
    let width: Int
    let height: Int
    private(set) var firstColumn = 0
    private(set) var columns = 0

    /// Opens the file and reads its headers.
    init(path: String) throws(ImageError) {
        guard let decoder = cj_decoder_create_file(path) else { throw .codec("cannot open \(path)") }
        self.decoder = decoder
        var width: Int32 = 0
        var height: Int32 = 0
        var components: Int32 = 0
        let code = cj_decoder_read_header(decoder, &width, &height, &components)
        (self.width, self.height) = (Int(width), Int(height))
        do { try check(code) } catch {
            close()
            throw error
        }
    }

    mutating func close() {
        if let decoder { cj_decoder_destroy(decoder) }
        decoder = nil
    }

    private func check(_ code: Int32) throws(ImageError) {
        switch Int(code) {
        case Int(CJ_OK): return
        case Int(CJ_TRUNCATED): throw .truncated
        default: throw .corrupt("JPEG: \(String(cString: cj_decoder_message(decoder)))")
        }
    }

    /// Starts the decode of the plan's region's columns and skips to its first row.
    mutating func start(_ plan: RenderPlan) throws(ImageError) {
        var first = Int32(plan.regionX)
        var count = Int32(plan.regionWidth)
        var decodedHeight: Int32 = 0
        try check(cj_decoder_start_columns(decoder, 3, &first, &count, &decodedHeight))
        guard first <= plan.regionX, Int(first + count) >= plan.regionX + plan.regionWidth, Int(decodedHeight) == height
        else { throw .codec("JPEG: libjpeg decoded columns \(first)+\(count) for the crop") }
        (firstColumn, columns) = (Int(first), Int(count))
        var left = plan.regionY
        while left > 0 {
            var skipped: Int32 = 0
            try check(cj_decoder_skip_rows(decoder, Int32(left), &skipped))
            guard skipped > 0 else { throw .truncated }
            left -= Int(skipped)
        }
    }

    mutating func read(into buffer: UnsafeMutablePointer<UInt8>, stride: Int, count: Int) throws(ImageError) {
        var done = 0
        while done < count {
            var read: Int32 = 0
            try check(cj_decoder_read_rows(decoder, buffer + done * stride, stride, Int32(count - done), &read))
            guard read > 0 else { throw .truncated }
            done += Int(read)
        }
    }
}

/// Rows of a decoded (upright) image.
private struct ImageRows: StoredRows {
    let image: RGBAImage
    var row: Int
    let firstColumn: Int
    let columns: Int

    mutating func read(into buffer: UnsafeMutablePointer<UInt8>, stride: Int, count: Int) throws(ImageError) {
        guard row + count <= image.height else { throw .truncated }
        image.pixels.withUnsafeBufferPointer { pixels in
            for j in 0..<count {
                let from = pixels.baseAddress! + (row + j) * image.bytesPerRow + firstColumn * 4
                let to = buffer + j * stride
                for x in 0..<columns {
                    to[x * 3] = from[x * 4]
                    to[x * 3 + 1] = from[x * 4 + 1]
                    to[x * 3 + 2] = from[x * 4 + 2]
                }
            }
        }
        row += count
    }
}

/// Where each rendered pixel comes from: the stored rectangle the crop covers, and the steps (in stored
/// pixels) of one output pixel right and one output row down. The composition of the EXIF orientation and the
/// edit's rotation and flips is one of the eight symmetries of the rectangle, so these steps are (±1, 0) and
/// (0, ±1) in some order.
struct RenderPlan: Sendable, Hashable {
    var outputWidth: Int
    var outputHeight: Int
    /// The stored rectangle the output covers.
    var regionX: Int
    var regionY: Int
    var regionWidth: Int
    var regionHeight: Int
    /// The output's top-left pixel, in region coordinates.
    var originX: Int
    var originY: Int
    /// Stored (x, y) step for output x + 1, and for output y + 1.
    var xStepX: Int
    var xStepY: Int
    var yStepX: Int
    var yStepY: Int

    /// Whether output rows are stored columns (a quarter turn overall).
    var transposes: Bool { xStepX == 0 }
    /// Whether output rows are stored rows, in order from the top: they can stream.
    var streams: Bool { !transposes && yStepY == 1 }
    /// Whether each output row is its stored row mirrored.
    var mirrorsRows: Bool { xStepX == -1 }

    let storedWidth: Int
    let storedHeight: Int
    let orientation: Int
    /// The crop in the rotated image (the whole of it when the adjustments have none).
    let crop: BasicAdjustments.CropRect

    /// The plan for output rows `rows` only: the same mapping, restricted to the part of the region they need.
    func rows(_ rows: Range<Int>, adjustments: BasicAdjustments) throws(ImageError) -> RenderPlan {
        var part = adjustments
        part.crop = .init(x: crop.x, y: crop.y + rows.lowerBound, width: crop.width, height: rows.count)
        return try RenderPlan(
            storedWidth: storedWidth, storedHeight: storedHeight, orientation: orientation, adjustments: part)
    }

    /// Throws `.invalidAdjustments` when the adjustments are out of range or the crop does not fit.
    init(storedWidth sw: Int, storedHeight sh: Int, orientation: Int, adjustments a: BasicAdjustments)
        throws(ImageError)
    {
        (storedWidth, storedHeight, self.orientation) = (sw, sh, orientation)
        let (uw, uh) = Orientation.swapsAxes(orientation) ? (sh, sw) : (sw, sh)
        try a.validate(uprightWidth: uw, uprightHeight: uh)
        let (fw, fh) = a.rotatedSize(uprightWidth: uw, uprightHeight: uh)
        let crop = a.crop ?? BasicAdjustments.CropRect(x: 0, y: 0, width: fw, height: fh)
        self.crop = crop
        // The stored pixel at (X, Y) of the rotated and flipped image (affine, so three points define it).
        func stored(_ X: Int, _ Y: Int) -> (x: Int, y: Int) {
            let X = a.flipHorizontal ? fw - 1 - X : X
            let Y = a.flipVertical ? fh - 1 - Y : Y
            let upright: (Int, Int)
            switch a.rotateQuarterTurns {
            case 1: upright = (Y, uh - 1 - X)
            case 2: upright = (uw - 1 - X, uh - 1 - Y)
            case 3: upright = (uw - 1 - Y, X)
            default: upright = (X, Y)
            }
            return Orientation.storedPosition(
                displayX: upright.0, displayY: upright.1, orientation: orientation, width: sw, height: sh)
        }
        let first = stored(crop.x, crop.y)
        let right = stored(crop.x + 1, crop.y)
        let down = stored(crop.x, crop.y + 1)
        let last = stored(crop.x + crop.width - 1, crop.y + crop.height - 1)
        outputWidth = crop.width
        outputHeight = crop.height
        regionX = min(first.x, last.x)
        regionY = min(first.y, last.y)
        regionWidth = abs(last.x - first.x) + 1
        regionHeight = abs(last.y - first.y) + 1
        originX = first.x - regionX
        originY = first.y - regionY
        xStepX = right.x - first.x
        xStepY = right.y - first.y
        yStepX = down.x - first.x
        yStepY = down.y - first.y
    }
}

/// The tone and key steps as per-pixel integer work: one 256-entry table for exposure then contrast (the same
/// for the three channels), an 8.8 fixed-point saturation factor, a squared-distance key test.
struct ToneMap: Sendable {
    /// sRGB byte -> sRGB byte: exposure in linear light, then contrast in gamma space.
    var table: [UInt8]
    /// (1 + saturation) × 256.
    var saturation: Int
    var key: (red: Int, green: Int, blue: Int, squaredThreshold: Int)?
    var background: (UInt8, UInt8, UInt8) = (0, 0, 0)
    let tableIsIdentity: Bool

    init(_ adjustments: BasicAdjustments) {
        let table = Self.table(exposure: adjustments.exposure, contrast: adjustments.contrast)
        self.table = table
        tableIsIdentity = table.indices.allSatisfy { table[$0] == UInt8($0) }
        saturation = Int(((1 + adjustments.saturation) * 256).rounded())
        if let chroma = adjustments.chromaKey {
            let distance = chroma.threshold * 255 * 3.0.squareRoot()
            key = (
                Int(chroma.key.red), Int(chroma.key.green), Int(chroma.key.blue),
                Int((distance * distance).rounded(.down))
            )
            background = (chroma.background.red, chroma.background.green, chroma.background.blue)
        }
    }

    /// sRGB (0...1) to linear light, the IEC 61966-2-1 curve.
    static func linear(_ c: Double) -> Double { c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
    /// Linear light (0...1) to sRGB.
    static func encoded(_ l: Double) -> Double { l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055 }

    static func table(exposure: Double, contrast: Double) -> [UInt8] {
        let gain = pow(2, exposure)
        return (0..<256).map { v in
            var c = Double(v) / 255
            if exposure != 0 { c = encoded(min(1, linear(c) * gain)) }
            if contrast != 0 { c = 0.5 + (c - 0.5) * (1 + contrast) }
            return UInt8(max(0, min(255, (c * 255).rounded())))
        }
    }

    var isIdentity: Bool { tableIsIdentity && saturation == 256 && key == nil }

    /// Applies the tone and key steps to `pixels` RGB8 pixels in place.
    func apply(_ row: UnsafeMutablePointer<UInt8>, pixels: Int) {
        if isIdentity { return }
        table.withUnsafeBufferPointer { table in
            let lut = table.baseAddress!
            if saturation == 256, key == nil {
                for i in 0..<pixels * 3 { row[i] = lut[Int(row[i])] }
                return
            }
            let factor = saturation
            let key = self.key ?? (0, 0, 0, -1)
            let (br, bg, bb) = background
            var p = row
            for _ in 0..<pixels {
                var r = Int(lut[Int(p[0])])
                var g = Int(lut[Int(p[1])])
                var b = Int(lut[Int(p[2])])
                if factor != 256 {
                    let y = (77 * r + 150 * g + 29 * b + 128) >> 8
                    r = min(255, max(0, y + (((r - y) * factor + 128) >> 8)))
                    g = min(255, max(0, y + (((g - y) * factor + 128) >> 8)))
                    b = min(255, max(0, y + (((b - y) * factor + 128) >> 8)))
                }
                let d0 = r - key.0
                let d1 = g - key.1
                let d2 = b - key.2
                if d0 * d0 + d1 * d1 + d2 * d2 <= key.3 {
                    p[0] = br
                    p[1] = bg
                    p[2] = bb
                } else {
                    p[0] = UInt8(truncatingIfNeeded: r)
                    p[1] = UInt8(truncatingIfNeeded: g)
                    p[2] = UInt8(truncatingIfNeeded: b)
                }
                p += 3
            }
        }
    }
}

/// The render's destination: a temporary file beside `path`, created exclusively, renamed over it at the end.
private struct OutputFile {
    let path: String
    let temporaryPath: String
    let descriptor: Int32

    init(path: String) throws(ImageError) {
        guard !path.isEmpty, !path.hasSuffix("/") else { throw .output("\(path): not a file path") }
        let folder: Substring
        let name: Substring
        if let slash = path.lastIndex(of: "/") {
            folder = path[...slash]
            name = path[path.index(after: slash)...]
        } else {
            folder = ""
            name = Substring(path)
        }
        var descriptor: Int32 = -1
        var candidate = ""
        for _ in 0..<16 {
            let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            candidate = "\(folder).\(name).\(suffix).rendering"
            descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 || errno != EEXIST { break }
        }
        guard descriptor >= 0 else { throw .output("cannot create \(candidate): errno \(errno)") }
        self.path = path
        self.temporaryPath = candidate
        self.descriptor = descriptor
    }

    func encoder() throws(ImageError) -> OpaquePointer {
        guard let encoder = cj_encoder_create_fd(descriptor) else { throw .codec("out of memory") }
        return encoder
    }

    /// Closes the file (after fsync when `durable`) and renames it over `path`; on failure removes it.
    func commit(durable: Bool) throws(ImageError) {
        if durable, fsync(descriptor) != 0 {
            let code = errno
            discard()
            throw .output("cannot fsync \(temporaryPath): errno \(code)")
        }
        guard close(descriptor) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw .output("cannot close \(temporaryPath): errno \(code)")
        }
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw .output("cannot rename to \(path): errno \(code)")
        }
    }

    func discard() {
        close(descriptor)
        unlink(temporaryPath)
    }
}
