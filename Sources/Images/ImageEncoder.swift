import CHeif
import CPNG
import CTurboJPEG

/// Encodes RGBA8 images. Safe to call from any number of threads at once.
package enum ImageEncoder {
    /// A baseline JPEG (4:2:0, alpha ignored) at `quality` 1...100 (clamped). `exif` is a TIFF payload written
    /// as an APP1 segment ("Exif\0\0" + payload) right after SOI; it may be at most 65527 bytes (else `.codec`).
    package static func jpeg(_ image: RGBAImage, quality: Int = 85, exif: [UInt8]? = nil) throws(ImageError) -> [UInt8]
    {
        try image.validate()
        return try image.pixels.withUnsafeBufferPointer { (pixels) throws(ImageError) -> [UInt8] in
            try jpeg(width: image.width, height: image.height, quality: quality, exif: exif) { y, row in
                row.baseAddress!.initialize(
                    from: pixels.baseAddress! + y * image.bytesPerRow, count: image.width * 4)
            }
        }
    }

    /// A baseline JPEG written row by row: `fillRow(y, row)` writes row y's `width` RGBA8 pixels into `row`
    /// (reused between calls), so an image larger than memory can be encoded. Rows are asked for in order.
    package static func jpeg(
        width: Int, height: Int, quality: Int = 85, exif: [UInt8]? = nil,
        fillRow: (_ y: Int, _ row: UnsafeMutableBufferPointer<UInt8>) -> Void
    ) throws(ImageError) -> [UInt8] {
        guard width > 0, height > 0, width <= 65_500, height <= 65_500 else {
            throw .corrupt("JPEG: cannot encode \(width)x\(height)")
        }
        guard let encoder = cj_encoder_create() else { throw .codec("out of memory") }
        defer { cj_encoder_destroy(encoder) }
        func check(_ code: Int32) throws(ImageError) {
            guard code == CJ_OK else { throw .codec("JPEG: \(String(cString: cj_encoder_message(encoder)))") }
        }
        var app1: [UInt8] = []
        if let exif { app1 = JPEGHeader.exifIdentifier + exif }
        guard app1.count <= 65_533 else { throw .codec("JPEG: EXIF payload of \(exif?.count ?? 0) bytes is too large") }
        try check(
            app1.withUnsafeBufferPointer {
                cj_encoder_start(
                    encoder, Int32(width), Int32(height), Int32(min(100, max(1, quality))), $0.baseAddress, $0.count)
            })
        let band = 16
        var rows = [UInt8](repeating: 0, count: width * 4 * band)
        var y = 0
        while y < height {
            let count = min(band, height - y)
            rows.withUnsafeMutableBufferPointer { buffer in
                for i in 0..<count {
                    fillRow(
                        y + i, UnsafeMutableBufferPointer(rebasing: buffer[(i * width * 4)..<((i + 1) * width * 4)]))
                }
            }
            try check(
                rows.withUnsafeBufferPointer { cj_encoder_write_rows(encoder, $0.baseAddress, width * 4, Int32(count)) }
            )
            y += count
        }
        var bytes: UnsafePointer<UInt8>?
        var length = 0
        try check(cj_encoder_finish(encoder, &bytes, &length))
        guard let bytes else { throw .codec("JPEG: no output") }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// An 8-bit RGBA PNG.
    package static func png(_ image: RGBAImage) throws(ImageError) -> [UInt8] {
        try png(image, exif: nil)
    }

    /// An 8-bit RGBA PNG with an eXIf chunk holding `exif` (a TIFF payload) after IHDR, when given.
    package static func png(_ image: RGBAImage, exif: [UInt8]?) throws(ImageError) -> [UInt8] {
        try png(image, exif: exif, interlaced: false)
    }

    /// An 8-bit RGBA PNG, Adam7-interlaced when asked, with an eXIf chunk after IHDR when `exif` is given.
    package static func png(_ image: RGBAImage, exif: [UInt8]?, interlaced: Bool) throws(ImageError) -> [UInt8] {
        try image.validate()
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 200)
        let code = image.pixels.withUnsafeBufferPointer {
            cpng_encode_rgba(
                $0.baseAddress, UInt32(image.width), UInt32(image.height), image.bytesPerRow, interlaced ? 1 : 0,
                &bytes, &length, &message, message.count)
        }
        guard code == CPNG_OK, let bytes else { throw .codec("PNG: \(cText(message))") }
        defer { cpng_free(bytes) }
        var result = Array(UnsafeBufferPointer(start: bytes, count: length))
        if let exif {
            // Signature (8) + IHDR chunk (25).
            result.insert(contentsOf: PNGHeader.chunk(type: "eXIf", data: exif), at: 33)
        }
        return result
    }

    /// Whether this build's libheif has an HEVC encoder (`heif(_:quality:)` throws `.codec` when not).
    package static var canEncodeHEIF: Bool { cheif_can_encode() != 0 }

    /// An HEIC file (HEVC, alpha ignored) at `quality` 0...100 (clamped).
    package static func heif(_ image: RGBAImage, quality: Int = 80) throws(ImageError) -> [UInt8] {
        try heif(image, quality: quality, exif: nil)
    }

    /// An HEIC file with an Exif item holding `exif` (a TIFF payload), when given. Readers ignore its
    /// orientation tag: HEIF orients with irot/imir, which this encoder does not write.
    package static func heif(_ image: RGBAImage, quality: Int = 80, exif: [UInt8]?) throws(ImageError) -> [UInt8] {
        try image.validate()
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let payload = exif ?? []
        let code = image.pixels.withUnsafeBufferPointer { pixels in
            payload.withUnsafeBufferPointer { exifBytes in
                cheif_encode_rgba(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), image.bytesPerRow,
                    Int32(min(100, max(0, quality))), exif == nil ? nil : exifBytes.baseAddress, exifBytes.count,
                    &bytes, &length, &message, message.count)
            }
        }
        guard code == CHEIF_OK, let bytes else { throw .codec("HEIF: \(cText(message))") }
        defer { cheif_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }
}
