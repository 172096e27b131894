import Foundation

@testable import Images

/// Test images made in code.
enum Fixtures {
    /// Four flat quadrants: red top-left, green top-right, blue bottom-left, white bottom-right.
    static func quadrants(width: Int, height: Int) -> RGBAImage {
        var image = RGBAImage(width: width, height: height, fill: (0, 0, 0, 255))
        for y in 0..<height {
            for x in 0..<width {
                let colour = quadrantColour(x: x, y: y, width: width, height: height)
                let i = (y * width + x) * 4
                image.pixels[i] = colour.0
                image.pixels[i + 1] = colour.1
                image.pixels[i + 2] = colour.2
            }
        }
        return image
    }

    static func quadrantColour(x: Int, y: Int, width: Int, height: Int) -> (UInt8, UInt8, UInt8) {
        switch (x < width / 2, y < height / 2) {
        case (true, true): return (255, 0, 0)
        case (false, true): return (0, 255, 0)
        case (true, false): return (0, 0, 255)
        case (false, false): return (255, 255, 255)
        }
    }

    /// Smooth gradients with a little seeded noise (compresses like a photo, not like flat colour).
    static func photo(width: Int, height: Int, seed: UInt64 = 1) -> RGBAImage {
        var image = RGBAImage(width: width, height: height, fill: (0, 0, 0, 255))
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let noise = Int(state % 9) - 4
                let i = (y * width + x) * 4
                image.pixels[i] = clamp(x * 255 / max(1, width - 1) + noise)
                image.pixels[i + 1] = clamp(y * 255 / max(1, height - 1) + noise)
                image.pixels[i + 2] = clamp((x + y) * 127 / max(1, width + height - 2) + 64 + noise)
            }
        }
        return image
    }

    static func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }

    /// The stored pixels that, shown with EXIF `orientation`, look like `display`. Written from the EXIF
    /// definition of where the stored 0th row and 0th column appear, independently of `Orientation`.
    static func stored(for display: RGBAImage, orientation: Int) -> RGBAImage {
        let (dw, dh) = (display.width, display.height)
        let (sw, sh) = orientation >= 5 ? (dh, dw) : (dw, dh)
        var out = RGBAImage(width: sw, height: sh, fill: (0, 0, 0, 255))
        for sy in 0..<sh {
            for sx in 0..<sw {
                // Where stored (sx, sy) appears on screen.
                let (x, y): (Int, Int)
                switch orientation {
                case 2: (x, y) = (dw - 1 - sx, sy)  // row 0 top, column 0 right
                case 3: (x, y) = (dw - 1 - sx, dh - 1 - sy)  // row 0 bottom, column 0 right
                case 4: (x, y) = (sx, dh - 1 - sy)  // row 0 bottom, column 0 left
                case 5: (x, y) = (sy, sx)  // row 0 left, column 0 top
                case 6: (x, y) = (dw - 1 - sy, sx)  // row 0 right, column 0 top
                case 7: (x, y) = (dw - 1 - sy, dh - 1 - sx)  // row 0 right, column 0 bottom
                case 8: (x, y) = (sy, dh - 1 - sx)  // row 0 left, column 0 bottom
                default: (x, y) = (sx, sy)
                }
                let from = (y * dw + x) * 4
                let to = (sy * sw + sx) * 4
                for c in 0..<4 { out.pixels[to + c] = display.pixels[from + c] }
            }
        }
        return out
    }

    /// Mean absolute difference per channel (RGB) of two images of the same size.
    static func meanAbsoluteError(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for c in 0..<3 {
                    total += abs(
                        Int(a.pixels[y * a.bytesPerRow + x * 4 + c]) - Int(b.pixels[y * b.bytesPerRow + x * 4 + c]))
                }
            }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }

    static func pixel(_ image: RGBAImage, _ x: Int, _ y: Int) -> (Int, Int, Int) {
        let i = y * image.bytesPerRow + x * 4
        return (Int(image.pixels[i]), Int(image.pixels[i + 1]), Int(image.pixels[i + 2]))
    }

    static let sampleDate = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14 22:13:20 UTC
}
