import Foundation
import Images

extension FuzzCatalog {
    /// The source pixel limit of `image-decode`'s requests: 1 Mpx, 4 MiB of RGBA, far under its malloc limit.
    static let decodeMaxPixels = 1 << 20

    /// `ImageDecoder.decode` of JPEG, PNG and HEIF bytes at a small size: no allocation over 64 MiB (libFuzzer's
    /// malloc limit) for a source of at most 1 Mpx, and a result of the size the request promises. The request
    /// is chosen by the input's last byte (which JPEG and PNG decoders ignore): fit in 64x48 (`.exact` or
    /// `.fast`), cover 40x40 (`.exact`), or the full size (`.none`).
    static let imageDecode = FuzzTarget(
        name: "image-decode",
        summary: "ImageDecoder.decode at a bounded size: no allocation over the limit, the size the request promises",
        maxLength: 4096,
        cpuMinutesGoal: 30,
        mallocLimitMB: 64,
        seeds: { ImageSeeds.jpegs + ImageSeeds.pngs + ImageSeeds.heics },
        check: { bytes throws(FuzzFailure) in
            let choice = Int(bytes.last ?? 0) % 4
            let (target, content, resize): ((Int, Int), ContentMode, ResizeMode) =
                switch choice {
                case 0: ((64, 48), .aspectFit, .exact)
                case 1: ((64, 48), .aspectFit, .fast)
                case 2: ((40, 40), .aspectFill, .exact)
                default: ((0, 0), .aspectFit, .none)
                }
            var request = DecodeRequest(
                targetWidth: target.0, targetHeight: target.1, contentMode: content, resizeMode: resize)
            request.maxPixels = decodeMaxPixels
            guard let (image, statistics) = try? ImageDecoder.decode(data: bytes, request: request) else { return }
            let (w, h) = (image.width, image.height)
            try expect(
                w > 0 && h > 0 && image.bytesPerRow == w * 4 && image.pixels.count == w * h * 4,
                "image \(w)x\(h), \(image.bytesPerRow) bytes per row, \(image.pixels.count) bytes")
            try expect(
                statistics.sourceWidth * statistics.sourceHeight <= decodeMaxPixels,
                "decoded a \(statistics.sourceWidth)x\(statistics.sourceHeight) source over the pixel limit")
            let (tw, th) = target
            switch (content, resize) {
            case (.aspectFit, .exact):
                try expect(w <= tw && h <= th && (w == tw || h == th), "\(w)x\(h) does not fit \(tw)x\(th) exactly")
            case (.aspectFit, .fast):
                try expect(w <= 2 * tw && h <= 2 * th, "fast \(w)x\(h) is over twice \(tw)x\(th)")
            case (.aspectFill, _):
                try expect(
                    (w == tw && h >= th) || (h == th && w >= tw), "\(w)x\(h) does not cover \(tw)x\(th) exactly")
            default:
                try expect(w * h <= decodeMaxPixels, "a full-size \(w)x\(h) over the pixel limit")
            }
        })
}
