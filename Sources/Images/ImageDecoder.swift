import CHeif
import CPNG
import CTurboJPEG

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decodes JPEG, PNG and HEIF files to upright RGBA8 images of a requested size.
///
/// Safe to call from any number of threads at once (each call has its own codec state). Never traps on bad
/// input: every failure is an `ImageError`.
package enum ImageDecoder {
    /// Decodes a file in bounded memory: never holds the full-size pixels when a smaller target is asked
    /// (JPEG: libjpeg scale_denom 1/2/4/8 chosen as the smallest decode >= target, then a streaming area-average
    /// downscale row by row — for `.fast` only when the scaled decode is more than twice the exact size; PNG: rows streamed through the downscaler, except interlaced PNGs, which are
    /// decoded whole; HEIF: libheif decode of the primary image (libheif applies its transforms), then
    /// downscale). EXIF orientation 1-8 applied (JPEG and PNG eXIf; broken EXIF decodes as orientation 1).
    /// `isCancelled` is polled between scanlines/rows -> throws .cancelled. A declared size above
    /// `request.maxPixels` throws `.tooLarge` before any pixel is allocated, and so does an output size above it
    /// (an aspect-fill of a very thin image, a large upscale); data ending early throws
    /// `.truncated`.
    package static func decode(
        fileAt path: String, request: DecodeRequest, isCancelled: @Sendable () -> Bool = { false }
    ) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) {
        let (format, orientation) = try probe(fileAt: path)
        switch format {
        case .jpeg:
            guard let decoder = cj_decoder_create_file(path) else { throw .codec("cannot open \(path)") }
            return try decodeJPEG(decoder, orientation: orientation, request: request, isCancelled: isCancelled)
        case .png:
            guard let decoder = cpng_decoder_create_file(path) else { throw .codec("cannot open \(path)") }
            return try decodePNG(decoder, orientation: orientation, request: request, isCancelled: isCancelled)
        case .heif:
            var message = [CChar](repeating: 0, count: 256)
            guard let file = cheif_open_path(path, &message, message.count) else {
                throw .corrupt("HEIF: \(cText(message))")
            }
            return try decodeHEIF(file, request: request, isCancelled: isCancelled)
        }
    }

    /// Decodes bytes in memory; the same guarantees as `decode(fileAt:request:isCancelled:)`.
    package static func decode(
        data: [UInt8], request: DecodeRequest, isCancelled: @Sendable () -> Bool = { false }
    ) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) {
        guard let format = ImageFormat.sniff(data) else {
            throw data.count < 16 ? .truncated : .unsupportedFormat
        }
        let orientation =
            format == .heif ? 1 : ImageMetadata.orientation(head: data, fileLength: data.count)
        return try data.withUnsafeBufferPointer {
            (bytes) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) in
            switch format {
            case .jpeg:
                guard let decoder = cj_decoder_create_memory(bytes.baseAddress, bytes.count) else {
                    throw .codec("out of memory")
                }
                return try decodeJPEG(decoder, orientation: orientation, request: request, isCancelled: isCancelled)
            case .png:
                guard let decoder = cpng_decoder_create_memory(bytes.baseAddress, bytes.count) else {
                    throw .codec("out of memory")
                }
                return try decodePNG(decoder, orientation: orientation, request: request, isCancelled: isCancelled)
            case .heif:
                var message = [CChar](repeating: 0, count: 256)
                guard let file = cheif_open_memory(bytes.baseAddress, bytes.count, &message, message.count) else {
                    throw .corrupt("HEIF: \(cText(message))")
                }
                return try decodeHEIF(file, request: request, isCancelled: isCancelled)
            }
        }
    }

    /// A file's format (sniffed) and EXIF orientation (1 for HEIF, whose decode applies its transforms, and for
    /// broken EXIF), from its first bytes: 64 KiB, more when the EXIF extends further (at most 1 MiB).
    static func probe(fileAt path: String) throws(ImageError) -> (format: ImageFormat, orientation: Int) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .codec("cannot open \(path): errno \(errno)") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .codec("cannot stat \(path): errno \(errno)") }
        let fileLength = Int(status.st_size)
        var head = try readHead(descriptor, count: min(fileLength, 65_536))
        guard let format = ImageFormat.sniff(head) else { throw .unsupportedFormat }
        guard format != .heif else { return (format, 1) }
        // Read as much of the head as the EXIF needs (at most 1 MiB).
        // try?: unparsable headers: decoded without EXIF
        while case .needMore(let count)? = try? ImageMetadata.parse(head: head, fileLength: fileLength),
            count > head.count, count <= fileLength
        {
            head = try readHead(descriptor, count: count)
        }
        return (format, ImageMetadata.orientation(head: head, fileLength: fileLength))
    }

    private static func readHead(_ descriptor: Int32, count: Int) throws(ImageError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, count - done, off_t(done))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return Array(buffer[0..<done])
    }

    /// Stored-orientation output size for a stored source and the request.
    private static func storedExactSize(
        width: Int, height: Int, orientation: Int, request: DecodeRequest
    ) -> (width: Int, height: Int) {
        let swaps = Orientation.swapsAxes(orientation)
        let exact = DecodePlan.exactSize(
            displayWidth: swaps ? height : width, displayHeight: swaps ? width : height, request: request)
        return swaps ? (exact.height, exact.width) : exact
    }

    private static func decodeJPEG(
        _ decoder: OpaquePointer, orientation: Int, request: DecodeRequest, isCancelled: () -> Bool
    ) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) {
        defer { cj_decoder_destroy(decoder) }
        func check(_ code: Int32) throws(ImageError) {
            switch Int(code) {
            case Int(CJ_OK): return
            case Int(CJ_TRUNCATED): throw .truncated
            default: throw .corrupt("JPEG: \(String(cString: cj_decoder_message(decoder)))")
            }
        }
        var width: Int32 = 0
        var height: Int32 = 0
        var components: Int32 = 0
        try check(cj_decoder_read_header(decoder, &width, &height, &components))
        let (w, h) = (Int(width), Int(height))
        try DecodePlan.checkPixels(width: w, height: h, limit: request.maxPixels)
        let exact = storedExactSize(width: w, height: h, orientation: orientation, request: request)
        var denominator = 1
        if request.resizeMode != .none {
            for candidate in [8, 4, 2]
            where (w + candidate - 1) / candidate >= exact.width && (h + candidate - 1) / candidate >= exact.height {
                denominator = candidate
                break
            }
        }
        var outWidth: Int32 = 0
        var outHeight: Int32 = 0
        try check(cj_decoder_start(decoder, Int32(denominator), &outWidth, &outHeight))
        let (ow, oh) = (Int(outWidth), Int(outHeight))
        let size: (width: Int, height: Int) =
            switch request.resizeMode {
            case .none: (ow, oh)
            case .exact: exact
            case .fast: DecodePlan.fastSize(cheap: (ow, oh), exact: exact)
            }
        var pipeline = try RowPipeline(
            sourceWidth: ow, sourceHeight: oh, width: size.width, height: size.height,
            maxPixels: request.maxPixels)
        let batch = 4
        let stride = ow * 4
        var rows = [UInt8](repeating: 0, count: stride * batch)
        pipeline.allocate(rows.count)
        while !pipeline.isComplete {
            if isCancelled() { throw .cancelled }
            var read: Int32 = 0
            let code = rows.withUnsafeMutableBufferPointer {
                cj_decoder_read_rows(decoder, $0.baseAddress, stride, Int32(batch), &read)
            }
            try check(code)
            guard read > 0 else { throw .truncated }
            try rows.withUnsafeBufferPointer { (typed) throws(ImageError) in
                let buffer = UnsafeRawBufferPointer(typed)
                for r in 0..<Int(read) {
                    if r > 0, isCancelled() { throw .cancelled }
                    try pipeline.push(UnsafeRawBufferPointer(rebasing: buffer[(r * stride)..<((r + 1) * stride)]))
                }
            }
        }
        let image = try pipeline.finish(orientation: orientation)
        let statistics = DecodeStatistics(
            peakPixelBytes: pipeline.peakBytes, sourceWidth: w, sourceHeight: h, dctScale: denominator)
        return (image, statistics)
    }

    private static func decodePNG(
        _ decoder: OpaquePointer, orientation: Int, request: DecodeRequest, isCancelled: () -> Bool
    ) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) {
        defer { cpng_decoder_destroy(decoder) }
        func check(_ code: Int32) throws(ImageError) {
            switch Int(code) {
            case Int(CPNG_OK): return
            case Int(CPNG_TRUNCATED): throw .truncated
            default: throw .corrupt("PNG: \(String(cString: cpng_decoder_message(decoder)))")
            }
        }
        var width: UInt32 = 0
        var height: UInt32 = 0
        var passes: Int32 = 0
        try check(cpng_decoder_read_info(decoder, &width, &height, &passes))
        let (w, h) = (Int(width), Int(height))
        try DecodePlan.checkPixels(width: w, height: h, limit: request.maxPixels)
        let size = outputSize(width: w, height: h, orientation: orientation, request: request)
        var pipeline = try RowPipeline(
            sourceWidth: w, sourceHeight: h, width: size.width, height: size.height,
            maxPixels: request.maxPixels)
        let stride = w * 4
        if passes > 1 {
            // Interlaced: every pass touches every row, so the whole image is decoded first.
            if isCancelled() { throw .cancelled }
            var image = [UInt8](repeating: 0, count: stride * h)
            pipeline.allocate(image.count)
            try check(image.withUnsafeMutableBufferPointer { cpng_decoder_read_image(decoder, $0.baseAddress, stride) })
            try image.withUnsafeBufferPointer { (typed) throws(ImageError) in
                let buffer = UnsafeRawBufferPointer(typed)
                for y in 0..<h {
                    if isCancelled() { throw .cancelled }
                    try pipeline.push(UnsafeRawBufferPointer(rebasing: buffer[(y * stride)..<((y + 1) * stride)]))
                }
            }
        } else {
            var row = [UInt8](repeating: 0, count: stride)
            pipeline.allocate(row.count)
            for _ in 0..<h {
                if isCancelled() { throw .cancelled }
                try check(
                    row.withUnsafeMutableBufferPointer { cpng_decoder_read_rows(decoder, $0.baseAddress, stride, 1) })
                try row.withUnsafeBufferPointer { (typed) throws(ImageError) in
                    try pipeline.push(UnsafeRawBufferPointer(typed))
                }
            }
        }
        let image = try pipeline.finish(orientation: orientation)
        return (
            image, DecodeStatistics(peakPixelBytes: pipeline.peakBytes, sourceWidth: w, sourceHeight: h, dctScale: 1)
        )
    }

    private static func decodeHEIF(
        _ file: OpaquePointer, request: DecodeRequest, isCancelled: () -> Bool
    ) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) {
        defer { cheif_close(file) }
        var width: Int32 = 0
        var height: Int32 = 0
        cheif_primary_size(file, &width, &height)
        let (w, h) = (Int(width), Int(height))
        guard w > 0, h > 0 else { throw .corrupt("HEIF: primary image of \(w)x\(h)") }
        try DecodePlan.checkPixels(width: w, height: h, limit: request.maxPixels)
        // The size before the transforms (a clean aperture may crop a large image to a small one).
        var storedWidth: Int32 = 0
        var storedHeight: Int32 = 0
        cheif_primary_stored_size(file, &storedWidth, &storedHeight)
        try DecodePlan.checkPixels(width: Int(storedWidth), height: Int(storedHeight), limit: request.maxPixels)
        if isCancelled() { throw .cancelled }
        var message = [CChar](repeating: 0, count: 256)
        guard let decoded = cheif_decode_primary(file, &message, message.count) else {
            throw .corrupt("HEIF: \(cText(message))")
        }
        defer { cheif_image_free(decoded) }
        var dw: Int32 = 0
        var dh: Int32 = 0
        var stride: Int32 = 0
        guard let pixels = cheif_image_pixels(decoded, &dw, &dh, &stride), dw > 0, dh > 0 else {
            throw .corrupt("HEIF: no decoded pixels")
        }
        let (sw, sh, rowBytes) = (Int(dw), Int(dh), Int(stride))
        // The coded size (a grid's descriptor, an HEVC stream's parameters) must be the declared one, which the
        // pixel limit was checked against.
        guard sw == w, sh == h else { throw .corrupt("HEIF: decoded \(sw)x\(sh), declared \(w)x\(h)") }
        return try fit(
            UnsafeRawBufferPointer(start: pixels, count: rowBytes * sh), width: sw, height: sh, bytesPerRow: rowBytes,
            orientation: 1, request: request, isCancelled: isCancelled)
    }

    /// Sizes `request` asks for and turns upright (by EXIF `orientation`) RGBA8 rows decoded elsewhere — a HEIF's
    /// primary image, a video's frame — in the same row pipeline as a file's decode, so both answer one request
    /// alike. The pixels (`height` rows of `bytesPerRow` bytes, `width * 4` of them used) are read, not kept.
    package static func fit(
        _ pixels: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerRow: Int, orientation: Int,
        request: DecodeRequest, isCancelled: () -> Bool = { false }
    ) throws(ImageError) -> (image: RGBAImage, statistics: DecodeStatistics) {
        guard width > 0, height > 0, bytesPerRow >= width * 4, pixels.count >= bytesPerRow * (height - 1) + width * 4,
            let base = pixels.baseAddress
        else { throw .corrupt("pixels of \(width)x\(height), \(bytesPerRow) bytes per row, \(pixels.count) bytes") }
        try DecodePlan.checkPixels(width: width, height: height, limit: request.maxPixels)
        let size = outputSize(width: width, height: height, orientation: orientation, request: request)
        var pipeline = try RowPipeline(
            sourceWidth: width, sourceHeight: height, width: size.width, height: size.height,
            maxPixels: request.maxPixels)
        pipeline.allocate(bytesPerRow * height)
        for y in 0..<height {
            if isCancelled() { throw .cancelled }
            try pipeline.push(UnsafeRawBufferPointer(start: base + y * bytesPerRow, count: width * 4))
        }
        let image = try pipeline.finish(orientation: orientation)
        return (
            image,
            DecodeStatistics(peakPixelBytes: pipeline.peakBytes, sourceWidth: width, sourceHeight: height, dctScale: 1)
        )
    }

    /// The stored-orientation output size for formats without DCT scaling.
    private static func outputSize(
        width: Int, height: Int, orientation: Int, request: DecodeRequest
    ) -> (width: Int, height: Int) {
        let exact = storedExactSize(width: width, height: height, orientation: orientation, request: request)
        switch request.resizeMode {
        case .none: return (width, height)
        case .exact: return exact
        case .fast:
            return DecodePlan.fastSize(
                cheap: DecodePlan.integerFraction(width: width, height: height, exact: exact), exact: exact)
        }
    }
}
