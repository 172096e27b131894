import Foundation
import Testing

@testable import Images

/// `BasicAdjustments` (the `com.cloudassets.basic` adjustment data) and `AdjustmentRenderer`. Every rendered
/// image is compared with a reference made here by plain per-pixel code (rotation, flips and crop written from
/// their definitions, the sRGB curve from IEC 61966-2-1), from the source as the decoder sees it.
@Suite struct AdjustmentTests {
    // MARK: Adjustment data

    @Test func decodingRefusesAnUnknownFormatIdentifier() {
        let data = BasicAdjustments(exposure: 1).encoded()
        #expect(throws: ImageError.unsupportedAdjustments(formatIdentifier: "com.example.filters", formatVersion: "1"))
        {
            _ = try BasicAdjustments.decode(data: data, formatIdentifier: "com.example.filters", formatVersion: "1")
        }
    }

    @Test func decodingRefusesAnUnknownFormatVersion() {
        let data = BasicAdjustments(exposure: 1).encoded()
        for version in ["2", "1.1", "", "0"] {
            #expect(
                throws: ImageError.unsupportedAdjustments(
                    formatIdentifier: BasicAdjustments.formatIdentifier, formatVersion: version)
            ) {
                _ = try BasicAdjustments.decode(
                    data: data, formatIdentifier: BasicAdjustments.formatIdentifier, formatVersion: version)
            }
        }
    }

    @Test func decodingRefusesUnknownFieldsBadTypesAndValuesOutOfRange() {
        let bad = [
            #"{"exposure": 1, "vignette": 0.5}"#,  // a field version 1 does not have
            #"{"crop": {"x": 0, "y": 0, "width": 4, "height": 4, "angle": 3}}"#,
            #"{"chromaKey": {"key": {"red": 0, "green": 255, "blue": 0, "alpha": 1}, "threshold": 0.1, "#
                + #""background": {"red": 0, "green": 0, "blue": 0}}}"#,
            #"{"exposure": 5}"#, #"{"contrast": -1.5}"#, #"{"saturation": 2}"#, #"{"rotateQuarterTurns": 4}"#,
            #"{"exposure": "bright"}"#, #"{"crop": {"x": -1, "y": 0, "width": 4, "height": 4}}"#,
            #"{"crop": {"x": 0, "y": 0, "width": 0, "height": 4}}"#,
            #"{"chromaKey": {"key": {"red": 0, "green": 300, "blue": 0}, "threshold": 0.1, "#
                + #""background": {"red": 0, "green": 0, "blue": 0}}}"#,
            #"[1, 2]"#, "not json",
        ]
        for text in bad {
            do {
                let value = try BasicAdjustments.decode(
                    data: Array(text.utf8), formatIdentifier: BasicAdjustments.formatIdentifier,
                    formatVersion: BasicAdjustments.formatVersion)
                Issue.record("decoded \(text) as \(value)")
            } catch {
                guard case .invalidAdjustments = error else {
                    Issue.record("\(text): \(error)")
                    continue
                }
            }
        }
    }

    @Test func adjustmentDataRoundTripsThroughSortedKeyJSON() throws {
        let value = BasicAdjustments(
            rotateQuarterTurns: 3, flipHorizontal: true, flipVertical: false,
            crop: .init(x: 10, y: 20, width: 300, height: 200), exposure: 0.5, contrast: -0.25, saturation: 0.75,
            chromaKey: .init(
                key: .init(red: 0, green: 255, blue: 0), threshold: 0.3, background: .init(red: 1, green: 2, blue: 3)))
        let data = value.encoded()
        let decoded = try BasicAdjustments.decode(
            data: data, formatIdentifier: BasicAdjustments.formatIdentifier, formatVersion: "1")
        #expect(decoded == value)
        #expect(decoded.encoded() == data)
        let text = String(decoding: data, as: UTF8.self)
        let keys =
            ["chromaKey", "contrast", "crop", "exposure", "flipHorizontal", "flipVertical"]
            + ["rotateQuarterTurns", "saturation"]
        let positions = keys.map { text.range(of: "\"\($0)\"")!.lowerBound }
        #expect(positions == positions.sorted())
        // Missing fields are identity.
        let empty = try BasicAdjustments.decode(
            data: Array("{}".utf8), formatIdentifier: BasicAdjustments.formatIdentifier, formatVersion: "1")
        #expect(empty == BasicAdjustments() && empty.isIdentity)
    }

    @Test func rotationDegreesBecomeClockwiseQuarterTurns() throws {
        #expect(try BasicAdjustments.quarterTurns(degrees: 90) == 1)
        #expect(try BasicAdjustments.quarterTurns(degrees: 180) == 2)
        #expect(try BasicAdjustments.quarterTurns(degrees: 270) == 3)
        #expect(try BasicAdjustments.quarterTurns(degrees: -90) == 3)
        #expect(try BasicAdjustments.quarterTurns(degrees: 0) == 0)
        #expect(throws: ImageError.self) { _ = try BasicAdjustments.quarterTurns(degrees: 45) }
    }

    @Test func cropArgumentsParseAsXYWidthHeight() throws {
        #expect(
            try BasicAdjustments.CropRect(argument: "10,20,300,200") == .init(x: 10, y: 20, width: 300, height: 200))
        #expect(try BasicAdjustments.CropRect(argument: " 0, 0 ,1,1") == .init(x: 0, y: 0, width: 1, height: 1))
        for bad in ["", "1,2,3", "1,2,3,4,5", "-1,0,5,5", "0,0,0,5", "a,b,c,d", "1.5,2,3,4"] {
            #expect(throws: ImageError.self) { _ = try BasicAdjustments.CropRect(argument: bad) }
        }
    }

    // MARK: Geometry

    @Test func rotateNinetyOfANonSquareImageSwapsDimensionsAndMovesTheCorner() throws {
        let source = Fixtures.quadrants(width: 96, height: 64)
        let (image, statistics) = try render(jpeg(source), BasicAdjustments(rotateQuarterTurns: 1))
        #expect(image.width == 64 && image.height == 96)
        #expect(statistics.width == 64 && statistics.height == 96 && !statistics.streamed)
        // Clockwise: the red top-left quadrant is now top-right, blue bottom-left is top-left.
        #expect(near(Fixtures.pixel(image, 60, 3), (255, 0, 0)))
        #expect(near(Fixtures.pixel(image, 3, 3), (0, 0, 255)))
        #expect(near(Fixtures.pixel(image, 60, 92), (0, 255, 0)))
        #expect(near(Fixtures.pixel(image, 3, 92), (255, 255, 255)))
    }

    @Test(arguments: [0, 1, 2, 3], [(false, false), (true, false), (false, true), (true, true)])
    func everyRotationAndFlipMatchesTheReference(turns: Int, flips: (Bool, Bool)) throws {
        let file = try jpeg(Self.smooth(width: 80, height: 56))
        let adjustments = BasicAdjustments(
            rotateQuarterTurns: turns, flipHorizontal: flips.0, flipVertical: flips.1)
        let (image, statistics) = try render(file, adjustments)
        let reference = Self.reference(try decoded(file), adjustments)
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(Fixtures.meanAbsoluteError(image, reference) < 3)
        #expect(statistics.passes == 1)
        // With a tiny budget for held pixels, several passes each hold a part of the region: the same picture.
        let (parts, partStatistics) = try render(file, adjustments, maxHeldBytes: 4000)
        #expect(statistics.streamed ? partStatistics.passes == 1 : partStatistics.passes > 1)
        #expect(Fixtures.meanAbsoluteError(parts, image) < 0.5)
    }

    @Test func flipHorizontalMirrorsEachRowAndStreams() throws {
        let file = try jpeg(Fixtures.quadrants(width: 64, height: 48))
        let (image, statistics) = try render(file, BasicAdjustments(flipHorizontal: true))
        #expect(statistics.streamed)
        #expect(near(Fixtures.pixel(image, 3, 3), (0, 255, 0)))
        #expect(near(Fixtures.pixel(image, 60, 3), (255, 0, 0)))
        #expect(near(Fixtures.pixel(image, 3, 44), (255, 255, 255)))
        let (vertical, verticalStatistics) = try render(file, BasicAdjustments(flipVertical: true))
        #expect(!verticalStatistics.streamed)
        #expect(near(Fixtures.pixel(vertical, 3, 3), (0, 0, 255)))
    }

    @Test func cropTakesTheExactRectangleAfterRotation() throws {
        let source = Self.smooth(width: 120, height: 80)
        let file = try jpeg(source)
        let crop = BasicAdjustments.CropRect(x: 17, y: 33, width: 41, height: 59)
        for turns in 0...3 {
            var adjustments = BasicAdjustments(rotateQuarterTurns: turns)
            if turns % 2 == 0 {
                adjustments.crop = .init(x: 33, y: 17, width: 59, height: 41)
            } else {
                adjustments.crop = crop
            }
            let (image, statistics) = try render(file, adjustments)
            let reference = Self.reference(try decoded(file), adjustments)
            #expect(image.width == adjustments.crop!.width && image.height == adjustments.crop!.height)
            #expect(statistics.width == image.width && statistics.height == image.height)
            #expect(Fixtures.meanAbsoluteError(image, reference) < 3, "turns \(turns)")
        }
        // A crop touching the far edges is inside; one pixel more is not.
        let edge = BasicAdjustments(crop: .init(x: 20, y: 30, width: 100, height: 50))
        #expect(try render(file, edge).0.width == 100)
        let outside = BasicAdjustments(crop: .init(x: 20, y: 30, width: 101, height: 50))
        #expect(throws: ImageError.self) { _ = try render(file, outside) }
        // Rotated, the image is 80 wide: a crop 100 wide no longer fits.
        let rotated = BasicAdjustments(rotateQuarterTurns: 1, crop: .init(x: 0, y: 0, width: 100, height: 50))
        do {
            _ = try render(file, rotated)
            Issue.record("a crop outside the rotated image rendered")
        } catch {
            guard case .invalidAdjustments = error as? ImageError else {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func exifOrientationSixSourceRendersUpright() throws {
        let upright = Self.smooth(width: 96, height: 64)
        var exif = ExifBuilder()
        exif.orientation = 6
        let file = try ImageEncoder.jpeg(
            Fixtures.stored(for: upright, orientation: 6), quality: 95, exif: exif.tiffPayload())
        let (image, _) = try render(file, BasicAdjustments())
        #expect(image.width == 96 && image.height == 64)
        #expect(Fixtures.meanAbsoluteError(image, upright) < 3)
        let metadata = try parsed(try renderedBytes(file, BasicAdjustments()))
        #expect(metadata.orientation == 1)
    }

    @Test(arguments: 1...8)
    func everyExifOrientationWithAnEditMatchesTheReference(orientation: Int) throws {
        let upright = Self.smooth(width: 72, height: 48)
        var exif = ExifBuilder()
        exif.orientation = orientation
        let file = try ImageEncoder.jpeg(
            Fixtures.stored(for: upright, orientation: orientation), quality: 95, exif: exif.tiffPayload())
        let adjustments = BasicAdjustments(
            rotateQuarterTurns: 1, flipHorizontal: true, crop: .init(x: 5, y: 9, width: 30, height: 50))
        let (image, _) = try render(file, adjustments)
        let reference = Self.reference(upright, adjustments)
        #expect(image.width == 30 && image.height == 50)
        #expect(Fixtures.meanAbsoluteError(image, reference) < 3)
    }

    // MARK: Tone and key

    @Test func exposurePlusOneDoublesMidGreyInLinearLight() throws {
        let file = try jpeg(RGBAImage(width: 64, height: 64, fill: (100, 100, 100, 255)))
        let source = try decoded(file)
        let (image, _) = try render(file, BasicAdjustments(exposure: 1))
        // Independently: the IEC 61966-2-1 sRGB curve.
        func linear(_ v: Double) -> Double {
            let c = v / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let before = linear(Self.mean(source, channel: 1))
        let after = linear(Self.mean(image, channel: 1))
        #expect(abs(after / before - 2) < 0.06, "linear \(before) -> \(after)")
        // Gamma-space doubling would be far off (100 -> 200); linear doubling of 100 is about 138.
        #expect(abs(Self.mean(image, channel: 0) - 138.2) < 2)
    }

    @Test func contrastMinusOneIsFlatMidGreyAndExposureMinusFourDarkens() throws {
        let file = try jpeg(Self.smooth(width: 64, height: 48))
        let (flat, _) = try render(file, BasicAdjustments(contrast: -1))
        for c in 0..<3 { #expect(abs(Self.mean(flat, channel: c) - 128) < 1.5) }
        let (dark, _) = try render(file, BasicAdjustments(exposure: -4))
        let source = try decoded(file)
        #expect(Self.mean(dark, channel: 0) < Self.mean(source, channel: 0) / 2.5)
    }

    @Test func saturationMinusOneGivesRedEqualsGreenEqualsBlue() throws {
        let file = try jpeg(Fixtures.photo(width: 96, height: 64))
        let (image, _) = try render(file, BasicAdjustments(saturation: -1))
        var worst = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let (r, g, b) = Fixtures.pixel(image, x, y)
                worst = max(worst, abs(r - g), abs(g - b), abs(r - b))
            }
        }
        #expect(worst <= 2)
        // And it is the luma of the source (Rec. 601 weights), within JPEG loss.
        let source = try decoded(file)
        var reference = source
        for i in stride(from: 0, to: reference.pixels.count, by: 4) {
            let luma =
                0.299 * Double(source.pixels[i]) + 0.587 * Double(source.pixels[i + 1]) + 0.114
                * Double(source.pixels[i + 2])
            let value = UInt8(luma.rounded())
            reference.pixels[i] = value
            reference.pixels[i + 1] = value
            reference.pixels[i + 2] = value
        }
        #expect(Fixtures.meanAbsoluteError(image, reference) < 3)
    }

    @Test func chromaKeyReplacesKeyColouredPixelsWithTheBackgroundAndLeavesOthers() throws {
        // Left half green screen, right half a warm gradient.
        var source = RGBAImage(width: 96, height: 64, fill: (0, 0, 0, 255))
        for y in 0..<64 {
            for x in 0..<96 {
                let i = (y * 96 + x) * 4
                let colour: (UInt8, UInt8, UInt8) = x < 48 ? (0, 255, 0) : (UInt8(150 + x), UInt8(60 + y), 40)
                (source.pixels[i], source.pixels[i + 1], source.pixels[i + 2]) = colour
            }
        }
        let file = try jpeg(source)
        let key = BasicAdjustments.ChromaKey(
            key: .init(red: 0, green: 255, blue: 0), threshold: 0.25, background: .init(red: 20, green: 40, blue: 220))
        let (image, _) = try render(file, BasicAdjustments(chromaKey: key))
        #expect(near(Fixtures.pixel(image, 10, 10), (20, 40, 220)))
        #expect(near(Fixtures.pixel(image, 40, 50), (20, 40, 220)))
        #expect(near(Fixtures.pixel(image, 70, 30), (220, 90, 40)))
        // Against the key applied here to the decoded source.
        let decodedSource = try decoded(file)
        var reference = decodedSource
        let limit = 0.25 * 255 * 3.0.squareRoot()
        for i in stride(from: 0, to: reference.pixels.count, by: 4) {
            let (r, g, b) = (
                Double(reference.pixels[i]), Double(reference.pixels[i + 1]), Double(reference.pixels[i + 2])
            )
            if (r * r + (g - 255) * (g - 255) + b * b).squareRoot() <= limit {
                (reference.pixels[i], reference.pixels[i + 1], reference.pixels[i + 2]) = (20, 40, 220)
            }
        }
        #expect(Fixtures.meanAbsoluteError(image, reference) < 3)
    }

    // MARK: Output file

    @Test func outputHasNoGPSWhenTheSourceHadGPS() throws {
        var exif = ExifBuilder()
        exif.location = GPSLocation(latitude: 48.8584, longitude: 2.2945, altitude: 35)
        exif.captureDate = Fixtures.sampleDate
        exif.orientation = 1
        let file = try ImageEncoder.jpeg(Self.smooth(width: 64, height: 48), quality: 95, exif: exif.tiffPayload())
        #expect(try parsed(file).location != nil)
        let output = try renderedBytes(file, BasicAdjustments(exposure: 0.3))
        let metadata = try parsed(output)
        #expect(metadata.location == nil)
        #expect(metadata.orientation == 1)
        // No APP1 at all: no EXIF or XMP to carry a position.
        #expect(!output.prefix(2000).indices.dropLast().contains { output[$0] == 0xFF && output[$0 + 1] == 0xE1 })
    }

    @Test func pngSourceRendersLikeTheJPEGPath() throws {
        let source = Self.smooth(width: 70, height: 50)
        let png = try ImageEncoder.png(source)
        let adjustments = BasicAdjustments(rotateQuarterTurns: 3, crop: .init(x: 4, y: 6, width: 40, height: 60))
        let (image, statistics) = try render(png, adjustments, extension: "png")
        #expect(!statistics.streamed)
        #expect(Fixtures.meanAbsoluteError(image, Self.reference(source, adjustments)) < 2)
    }

    @Test func heifSourceRendersUprightWithTheEdit() throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        let source = Self.smooth(width: 128, height: 96)
        let heif = try ImageEncoder.heif(source, quality: 90)
        let adjustments = BasicAdjustments(rotateQuarterTurns: 2, crop: .init(x: 8, y: 16, width: 100, height: 64))
        let (image, _) = try render(heif, adjustments, extension: "heic")
        #expect(image.width == 100 && image.height == 64)
        #expect(Fixtures.meanAbsoluteError(image, Self.reference(source, adjustments)) < 4)
    }

    @Test func cancelledOrFailedRenderLeavesNoFileBehind() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try jpeg(Self.smooth(width: 64, height: 64))
        try Data(file).write(to: URL(fileURLWithPath: folder + "/in.jpg"))
        for adjustments in [BasicAdjustments(exposure: 1), BasicAdjustments(rotateQuarterTurns: 1)] {
            #expect(throws: ImageError.cancelled) {
                _ = try AdjustmentRenderer.render(
                    source: folder + "/in.jpg", adjustments: adjustments, to: folder + "/out.jpg"
                ) { true }
            }
        }
        // A truncated source: the decoder's error, and nothing written.
        try Data(file.prefix(file.count / 2)).write(to: URL(fileURLWithPath: folder + "/cut.jpg"))
        #expect(throws: ImageError.truncated) {
            _ = try AdjustmentRenderer.render(
                source: folder + "/cut.jpg", adjustments: BasicAdjustments(), to: folder + "/out.jpg")
        }
        // An output folder that is not one: an output error.
        do {
            _ = try AdjustmentRenderer.render(
                source: folder + "/in.jpg", adjustments: BasicAdjustments(), to: folder + "/cut.jpg/x")
            Issue.record("rendered into a file")
        } catch {
            guard case .output = error else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["cut.jpg", "in.jpg"])
    }

    @Test func renderReplacesASymlinkAtTheOutputPathWithoutWritingThroughIt() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = folder + "/in.jpg"
        let target = folder + "/target.txt"
        let output = folder + "/out.jpg"
        try Data(try jpeg(Self.smooth(width: 32, height: 32))).write(to: URL(fileURLWithPath: input))
        try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: target)
        _ = try AdjustmentRenderer.render(source: input, adjustments: BasicAdjustments(), to: output)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
        let attributes = try FileManager.default.attributesOfItem(atPath: output)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        // Nothing else is left in the folder (no temporary file), also after a failed render.
        let bad = BasicAdjustments(crop: .init(x: 0, y: 0, width: 33, height: 1))
        #expect(throws: ImageError.self) {
            _ = try AdjustmentRenderer.render(source: input, adjustments: bad, to: folder + "/bad.jpg")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["in.jpg", "out.jpg", "target.txt"])
    }

    @Test func streamingRenderOfALargeImageHoldsASmallFractionOfItsPixels() throws {
        let (width, height) = (4000, 3000)
        let file = try ImageEncoder.jpeg(width: width, height: height, quality: 85) { y, row in
            for x in 0..<width {
                row[x * 4] = UInt8(truncatingIfNeeded: x / 16)
                row[x * 4 + 1] = UInt8(truncatingIfNeeded: y / 12)
                row[x * 4 + 2] = 128
                row[x * 4 + 3] = 255
            }
        }
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = folder + "/large.jpg"
        try Data(file).write(to: URL(fileURLWithPath: input))
        let crop = BasicAdjustments.CropRect(x: 400, y: 300, width: 3200, height: 2400)
        let streamed = try AdjustmentRenderer.render(
            source: input, adjustments: BasicAdjustments(flipHorizontal: true, crop: crop, exposure: 0.5),
            to: folder + "/streamed.jpg")
        #expect(streamed.streamed)
        #expect(streamed.width == 3200 && streamed.height == 2400)
        #expect(streamed.peakPixelBytes < width * height * 4 / 8)
        // A quarter turn holds the cropped region once, 3 bytes a pixel.
        let rotated = try AdjustmentRenderer.render(
            source: input,
            adjustments: BasicAdjustments(
                rotateQuarterTurns: 1, crop: .init(x: 300, y: 400, width: 2400, height: 3200), exposure: 0.5),
            to: folder + "/rotated.jpg")
        #expect(!rotated.streamed)
        #expect(rotated.width == 2400 && rotated.height == 3200)
        #expect(rotated.peakPixelBytes < 3200 * 2400 * 3 + 1_000_000)
        #expect(rotated.peakPixelBytes < width * height * 4 / 2)
        #expect(rotated.passes == 1)
        // With a budget of 4 MiB: several passes, each holding a strip of the region.
        let budget = 4 << 20
        let strips = try AdjustmentRenderer.render(
            source: input,
            adjustments: BasicAdjustments(
                rotateQuarterTurns: 1, crop: .init(x: 300, y: 400, width: 2400, height: 3200), exposure: 0.5),
            to: folder + "/strips.jpg", maxHeldBytes: budget)
        #expect(strips.passes == 6)
        #expect(strips.peakPixelBytes < budget + 512 * 1024)
        #expect(strips.width == 2400 && strips.height == 3200)
    }

    @Test func renderRefusesASourceAboveThePixelLimitAndInvalidValues() throws {
        let file = try jpeg(Self.smooth(width: 64, height: 48))
        #expect(throws: ImageError.tooLarge(width: 64, height: 48, limit: 1000)) {
            _ = try render(file, BasicAdjustments(), maxPixels: 1000)
        }
        #expect(throws: ImageError.self) { _ = try render(file, BasicAdjustments(exposure: .nan)) }
    }

    // MARK: Helpers

    /// A smooth, direction-revealing image: red grows left to right, green top to bottom, blue along the
    /// anti-diagonal.
    static func smooth(width: Int, height: Int) -> RGBAImage {
        var image = RGBAImage(width: width, height: height, fill: (0, 0, 0, 255))
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                image.pixels[i] = UInt8(20 + x * 215 / (width - 1))
                image.pixels[i + 1] = UInt8(20 + y * 215 / (height - 1))
                image.pixels[i + 2] = UInt8(230 - (width - 1 - x + y) * 200 / (width + height - 2))
            }
        }
        return image
    }

    /// The geometry of `adjustments` applied to an upright image, from the definitions: clockwise quarter
    /// turns, then mirror left-right, then top-bottom, then the crop.
    static func reference(_ upright: RGBAImage, _ adjustments: BasicAdjustments) -> RGBAImage {
        func map(_ image: RGBAImage, width: Int, height: Int, _ source: (Int, Int) -> (Int, Int)) -> RGBAImage {
            var out = RGBAImage(width: width, height: height, fill: (0, 0, 0, 255))
            for y in 0..<height {
                for x in 0..<width {
                    let (sx, sy) = source(x, y)
                    for c in 0..<4 {
                        out.pixels[(y * width + x) * 4 + c] = image.pixels[sy * image.bytesPerRow + sx * 4 + c]
                    }
                }
            }
            return out
        }
        var image = upright
        for _ in 0..<adjustments.rotateQuarterTurns {
            // Clockwise: the new row y is the old column y read bottom to top.
            let h = image.height
            image = map(image, width: image.height, height: image.width) { x, y in (y, h - 1 - x) }
        }
        let (w, h) = (image.width, image.height)
        if adjustments.flipHorizontal { image = map(image, width: w, height: h) { x, y in (w - 1 - x, y) } }
        if adjustments.flipVertical { image = map(image, width: w, height: h) { x, y in (x, h - 1 - y) } }
        if let crop = adjustments.crop {
            image = map(image, width: crop.width, height: crop.height) { x, y in (x + crop.x, y + crop.y) }
        }
        return image
    }

    static func mean(_ image: RGBAImage, channel: Int) -> Double {
        var total = 0
        for y in 0..<image.height {
            for x in 0..<image.width { total += Int(image.pixels[y * image.bytesPerRow + x * 4 + channel]) }
        }
        return Double(total) / Double(image.width * image.height)
    }

    func near(_ got: (Int, Int, Int), _ want: (Int, Int, Int), tolerance: Int = 24) -> Bool {
        abs(got.0 - want.0) < tolerance && abs(got.1 - want.1) < tolerance && abs(got.2 - want.2) < tolerance
    }

    func jpeg(_ image: RGBAImage) throws -> [UInt8] { try ImageEncoder.jpeg(image, quality: 95) }

    /// The source as the decoder sees it (upright, full size).
    func decoded(_ file: [UInt8]) throws -> RGBAImage {
        try ImageDecoder.decode(data: file, request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
            .image
    }

    func parsed(_ file: [UInt8]) throws -> ImageMetadata {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: file, fileLength: file.count) else {
            throw ImageError.truncated
        }
        return metadata
    }

    func scratchFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("render-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Renders `file` through a temporary folder; the output's bytes.
    func renderedBytes(_ file: [UInt8], _ adjustments: BasicAdjustments) throws -> [UInt8] {
        try renderFile(file, adjustments, extension: "jpg", maxPixels: 100_000_000, maxHeldBytes: 32 << 20).bytes
    }

    /// Renders `file` through a temporary folder; the output decoded, and the statistics.
    func render(
        _ file: [UInt8], _ adjustments: BasicAdjustments, extension ext: String = "jpg", maxPixels: Int = 100_000_000,
        maxHeldBytes: Int = 32 << 20
    ) throws -> (RGBAImage, RenderStatistics) {
        let (bytes, statistics) = try renderFile(
            file, adjustments, extension: ext, maxPixels: maxPixels, maxHeldBytes: maxHeldBytes)
        #expect(bytes.count == statistics.outputBytes)
        let image = try decoded(bytes)
        #expect(image.width == statistics.width && image.height == statistics.height)
        return (image, statistics)
    }

    private func renderFile(
        _ file: [UInt8], _ adjustments: BasicAdjustments, extension ext: String, maxPixels: Int, maxHeldBytes: Int
    ) throws -> (bytes: [UInt8], statistics: RenderStatistics) {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = folder + "/source." + ext
        try Data(file).write(to: URL(fileURLWithPath: input))
        let statistics = try AdjustmentRenderer.render(
            source: input, adjustments: adjustments, to: folder + "/rendered.jpg", maxPixels: maxPixels,
            maxHeldBytes: maxHeldBytes, durable: false)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/rendered.jpg")))
        return (bytes, statistics)
    }
}
