import Foundation
import Images

extension FuzzCatalog {
    /// A small JPEG the renderer edits, written once per process (48 × 32, a gradient, EXIF orientation 6 so the
    /// renderer turns it upright first).
    static let editSource: String = {
        let width = 48
        let height = 32
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                pixels[(y * width + x) * 4] = UInt8(x * 5)
                pixels[(y * width + x) * 4 + 1] = UInt8(y * 7)
            }
        }
        let image = RGBAImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ca-fuzz-edit-\(getpid()).jpg").path
        var exif = ExifBuilder()
        exif.orientation = 6
        let bytes = (try? ImageEncoder.jpeg(image, quality: 80, exif: exif.tiffPayload())) ?? []
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }()

    /// Adjustment data another app wrote (`com.cloudassets.basic`): the decoder refuses what it does not
    /// understand with a typed error; what it accepts encodes back to the same value and renders, in bounded
    /// memory, to exactly the size it promises.
    static let adjustmentData = FuzzTarget(
        name: "adjustment-data",
        summary: "BasicAdjustments.decode; accepted values re-encode to the same and render at their promised size",
        maxLength: 2048,
        seeds: {
            var edit = BasicAdjustments()
            edit.rotateQuarterTurns = 1
            edit.crop = .init(x: 2, y: 3, width: 20, height: 30)
            edit.exposure = 0.5
            return [
                BasicAdjustments().encoded(), edit.encoded(),
                Array(#"{"rotateQuarterTurns":3,"flipHorizontal":true}"#.utf8),
            ]
        },
        check: { bytes throws(FuzzFailure) in
            guard
                let value = try? BasicAdjustments.decode(
                    data: bytes, formatIdentifier: BasicAdjustments.formatIdentifier,
                    formatVersion: BasicAdjustments.formatVersion)
            else { return }
            let again = try? BasicAdjustments.decode(
                data: value.encoded(), formatIdentifier: BasicAdjustments.formatIdentifier,
                formatVersion: BasicAdjustments.formatVersion)
            try expect(again == value, "adjustments → data → adjustments changes them")
            // The source is 48 × 32 stored, 32 × 48 upright (orientation 6).
            guard (try? value.validate(uprightWidth: 32, uprightHeight: 48)) != nil else { return }
            let output = editSource + ".out-\(bytes.count).jpg"
            defer { unlink(output) }
            let promised = value.outputSize(uprightWidth: 32, uprightHeight: 48)
            do {
                let rendered = try AdjustmentRenderer.render(
                    source: editSource, adjustments: value, to: output, maxPixels: 10_000, durable: false)
                try expect(
                    rendered.width == promised.width && rendered.height == promised.height,
                    "rendered \(rendered.width)×\(rendered.height), promised \(promised.width)×\(promised.height)")
            } catch {
                throw FuzzFailure("valid adjustments failed to render: \(error)")
            }
        })
}
