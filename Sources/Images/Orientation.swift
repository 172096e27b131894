/// EXIF orientations (1...8) and the transform that makes stored pixels upright.
package enum Orientation {
    /// Whether the orientation swaps width and height (5...8).
    package static func swapsAxes(_ orientation: Int) -> Bool { (5...8).contains(orientation) }

    /// The stored pixel shown at display position (x, y), for a stored image of `width` x `height`.
    package static func storedPosition(
        displayX x: Int, displayY y: Int, orientation: Int, width: Int, height: Int
    ) -> (x: Int, y: Int) {
        switch orientation {
        case 2: return (width - 1 - x, y)
        case 3: return (width - 1 - x, height - 1 - y)
        case 4: return (x, height - 1 - y)
        case 5: return (y, x)
        case 6: return (y, height - 1 - x)
        case 7: return (width - 1 - y, height - 1 - x)
        case 8: return (width - 1 - y, x)
        default: return (x, y)
        }
    }

    /// The image as displayed: `image` (stored pixels) with the EXIF orientation applied; tightly packed.
    package static func upright(_ image: RGBAImage, orientation: Int) -> RGBAImage {
        guard (2...8).contains(orientation) else { return image }
        let (w, h) = (image.width, image.height)
        let (dw, dh) = swapsAxes(orientation) ? (h, w) : (w, h)
        var out = [UInt8](repeating: 0, count: dw * dh * 4)
        let stride = image.bytesPerRow
        image.pixels.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { destination in
                for y in 0..<dh {
                    for x in 0..<dw {
                        let s = storedPosition(displayX: x, displayY: y, orientation: orientation, width: w, height: h)
                        let value = source.loadUnaligned(fromByteOffset: s.y * stride + s.x * 4, as: UInt32.self)
                        destination.storeBytes(of: value, toByteOffset: (y * dw + x) * 4, as: UInt32.self)
                    }
                }
            }
        }
        return RGBAImage(width: dw, height: dh, bytesPerRow: dw * 4, pixels: out)
    }
}
