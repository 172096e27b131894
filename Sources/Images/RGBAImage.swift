/// Pixels as rows of 8-bit red, green, blue, alpha (not premultiplied). Decoded JPEGs are opaque (alpha 255).
package struct RGBAImage: Sendable {
    package var width: Int
    package var height: Int
    /// Bytes from the start of one row to the next; at least `width * 4`.
    package var bytesPerRow: Int
    /// `height` rows of `bytesPerRow` bytes.
    package var pixels: [UInt8]

    package init(width: Int, height: Int, bytesPerRow: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.pixels = pixels
    }

    /// A tightly packed image (bytesPerRow = width * 4) filled with one colour.
    package init(width: Int, height: Int, fill: (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8)) {
        self.width = width
        self.height = height
        self.bytesPerRow = width * 4
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            pixels[i] = fill.red
            pixels[i + 1] = fill.green
            pixels[i + 2] = fill.blue
            pixels[i + 3] = fill.alpha
        }
        self.pixels = pixels
    }

    /// Throws `.corrupt` unless the sizes are positive and `pixels` holds every row.
    func validate() throws(ImageError) {
        guard width > 0, height > 0, bytesPerRow >= width * 4,
            pixels.count >= bytesPerRow * (height - 1) + width * 4
        else {
            throw .corrupt("image of \(width)x\(height), \(bytesPerRow) bytes per row, \(pixels.count) bytes")
        }
    }
}

/// How a decoded image fits a target size.
package enum ContentMode: Sendable {
    /// The whole image, inside the target (one side equal to it).
    case aspectFit
    /// The whole image, covering the target (one side equal to it, the other at least as long; not cropped).
    case aspectFill
}

/// How exactly the decoded size follows the target.
package enum ResizeMode: Sendable {
    /// The full stored size, made upright; the target is ignored.
    case none
    /// The cheapest size at least as large as the exact one: the JPEG DCT-scaled size (1/2, 1/4, 1/8), or an
    /// integer fraction of the source for other formats — but never more than twice the exact size on either
    /// side: a cheap size larger than that (a JPEG whose smallest DCT scale is still far above the target) is
    /// resampled to the exact size as its rows stream in. Smaller than the exact size only when the source is
    /// (`.fast` does not upscale).
    case fast
    /// Exactly the aspect-fit (or aspect-fill) size, rounded, at least 1 pixel a side.
    case exact
}

/// What `ImageDecoder` produces.
package struct DecodeRequest: Sendable {
    /// The target size in display orientation (after the EXIF rotation). A side of 0 or less means full size.
    package var targetWidth: Int
    package var targetHeight: Int
    package var contentMode: ContentMode = .aspectFit
    package var resizeMode: ResizeMode = .exact
    /// A declared `width * height` above this throws `.tooLarge` before any pixel is allocated, and so does an
    /// output `width * height` above it (the bound holds for every buffer the decode sizes from the request).
    package var maxPixels: Int = 100_000_000
    /// `false`: the output is never larger than the display size (a larger target gives the display size).
    package var allowsUpscaling = true

    package init(
        targetWidth: Int, targetHeight: Int, contentMode: ContentMode = .aspectFit, resizeMode: ResizeMode = .exact
    ) {
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.contentMode = contentMode
        self.resizeMode = resizeMode
    }
}

/// What one decode cost.
package struct DecodeStatistics: Sendable {
    /// The most bytes of pixel buffers this decode held at once (row buffers, resampler accumulators, output);
    /// the codec library's own working memory is not counted.
    package var peakPixelBytes: Int
    /// The stored size of the source.
    package var sourceWidth: Int
    package var sourceHeight: Int
    /// The JPEG DCT scale denominator used (1, 2, 4 or 8); 1 for other formats.
    package var dctScale: Int
}
