import Testing

@testable import Images

@Suite struct ResizeTests {
    @Test(arguments: [2, 4, 8])
    func dctScaledDecodeMatchesFullDecodeThenResize(denominator: Int) throws {
        let photo = Fixtures.photo(width: 640, height: 480)
        let jpeg = try ImageEncoder.jpeg(photo, quality: 90)
        let target = 640 / denominator
        let (scaled, statistics) = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: target, targetHeight: target))
        #expect(statistics.dctScale == denominator)
        #expect(scaled.width == target && scaled.height == 480 / denominator)

        let (full, fullStatistics) = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
        #expect(fullStatistics.dctScale == 1 && full.width == 640 && full.height == 480)
        let resized = try ImageDecoder.decode(
            data: ImageEncoder.png(full), request: DecodeRequest(targetWidth: target, targetHeight: target)
        ).image
        #expect(Fixtures.meanAbsoluteError(scaled, resized) < 3)
    }

    @Test func aspectFitAndFillSizes() {
        func size(_ w: Int, _ h: Int, _ tw: Int, _ th: Int, _ mode: ContentMode) -> [Int] {
            let s = DecodePlan.fittedSize(width: w, height: h, targetWidth: tw, targetHeight: th, contentMode: mode)
            return [s.width, s.height]
        }
        #expect(size(4000, 3000, 256, 256, .aspectFit) == [256, 192])
        #expect(size(4000, 3000, 256, 256, .aspectFill) == [341, 256])
        #expect(size(3000, 4000, 256, 256, .aspectFit) == [192, 256])
        #expect(size(3000, 4000, 256, 256, .aspectFill) == [256, 341])
        #expect(size(1000, 10, 100, 100, .aspectFit) == [100, 1])
        #expect(size(10_000, 1, 100, 100, .aspectFit) == [100, 1])  // at least one pixel
        #expect(size(100, 100, 300, 200, .aspectFit) == [200, 200])
        #expect(size(100, 100, 300, 200, .aspectFill) == [300, 300])
    }

    @Test func withoutUpscalingATargetLargerThanTheImageGivesTheImagesOwnSize() throws {
        var exif = ExifBuilder()
        exif.orientation = 6
        let jpeg = try ImageEncoder.jpeg(Fixtures.photo(width: 60, height: 40), exif: exif.tiffPayload())
        let png = try ImageEncoder.png(Fixtures.photo(width: 60, height: 40))
        // Displayed 40 x 60 (JPEG, turned) and 60 x 40 (PNG); each box is larger than the image in some way.
        for (data, displayed) in [(jpeg, [40, 60]), (png, [60, 40])] {
            for (width, height, mode) in [
                (16_384, 16_384, ContentMode.aspectFit), (4000, 10, .aspectFill), (10, 4000, .aspectFill),
            ] {
                for resize in [ResizeMode.exact, .fast] {
                    var request = DecodeRequest(
                        targetWidth: width, targetHeight: height, contentMode: mode, resizeMode: resize)
                    request.allowsUpscaling = false
                    let (image, statistics) = try ImageDecoder.decode(data: data, request: request)
                    #expect([image.width, image.height] == displayed, "\(width)x\(height) \(mode) \(resize)")
                    #expect(statistics.peakPixelBytes <= 4 * 60 * 40 * 3, "\(statistics.peakPixelBytes)")
                }
            }
            // A box the image does not fit is still met exactly, and upscaling is what requests allow by default.
            var smaller = DecodeRequest(targetWidth: 20, targetHeight: 20)
            smaller.allowsUpscaling = false
            #expect(try ImageDecoder.decode(data: data, request: smaller).image.width <= 20)
            let larger = try ImageDecoder.decode(
                data: data, request: DecodeRequest(targetWidth: 120, targetHeight: 120))
            #expect(max(larger.image.width, larger.image.height) == 120)
        }
    }

    @Test func resizeModesNoneFastExact() throws {
        var exif = ExifBuilder()
        exif.orientation = 6
        let jpeg = try ImageEncoder.jpeg(Fixtures.photo(width: 600, height: 400), exif: exif.tiffPayload())
        // Displayed 400 x 600.
        let none = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 50, targetHeight: 50, resizeMode: .none))
        #expect(none.image.width == 400 && none.image.height == 600 && none.statistics.dctScale == 1)

        let fast = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 100, targetHeight: 100, resizeMode: .fast))
        // Exact fit would be 67 x 100; 1/4 gives 100 x 150 (>= it), 1/8 gives 50 x 75 (too small).
        #expect(fast.statistics.dctScale == 4)
        #expect(fast.image.width == 100 && fast.image.height == 150)

        let exact = try ImageDecoder.decode(data: jpeg, request: DecodeRequest(targetWidth: 100, targetHeight: 100))
        #expect(exact.image.width == 67 && exact.image.height == 100)

        let fill = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 100, targetHeight: 100, contentMode: .aspectFill))
        #expect(fill.image.width == 100 && fill.image.height == 150)
    }

    @Test func fastIsNeverMoreThanTwiceTheExactSize() throws {
        var exif = ExifBuilder()
        exif.orientation = 6
        let jpeg = try ImageEncoder.jpeg(Fixtures.photo(width: 1600, height: 1200), exif: exif.tiffPayload())
        // Displayed 1200 x 1600. At 64 x 64 the exact fit is 48 x 64; libjpeg's smallest scale, 1/8, is 150 x 200:
        // more than twice it, so it is resampled to the exact size as it streams (still decoded at 1/8).
        let far = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 64, targetHeight: 64, resizeMode: .fast))
        #expect(far.statistics.dctScale == 8)
        #expect(far.image.width == 48 && far.image.height == 64)
        #expect(far.statistics.peakPixelBytes < 150 * 200 * 4 * 2)
        // At 100 x 100 (exact 75 x 100) the 1/8 decode is within twice it and is the answer as decoded.
        let near = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 100, targetHeight: 100, resizeMode: .fast))
        #expect(near.statistics.dctScale == 8)
        #expect(near.image.width == 150 && near.image.height == 200)
    }

    @Test func pngFastModeUsesAWholeFraction() throws {
        let png = try ImageEncoder.png(Fixtures.photo(width: 300, height: 200))
        let fast = try ImageDecoder.decode(
            data: png, request: DecodeRequest(targetWidth: 64, targetHeight: 64, resizeMode: .fast))
        // Exact is 64 x 43; the largest whole divisor keeping >= that is 4: 75 x 50.
        #expect(fast.image.width == 75 && fast.image.height == 50)
        let exact = try ImageDecoder.decode(data: png, request: DecodeRequest(targetWidth: 64, targetHeight: 64))
        #expect(exact.image.width == 64 && exact.image.height == 43)
    }

    @Test func areaAverageOfFlatColourIsExact() throws {
        let image = RGBAImage(width: 97, height: 61, fill: (10, 200, 77, 255))
        let png = try ImageEncoder.png(image)
        for (tw, th) in [(13, 13), (50, 50), (200, 200)] {
            let out = try ImageDecoder.decode(data: png, request: DecodeRequest(targetWidth: tw, targetHeight: th))
                .image
            #expect(out.pixels.enumerated().allSatisfy { i, v in v == [10, 200, 77, 255][i % 4] })
        }
    }

    @Test func areaAverageWeighsPartlyCoveredPixels() throws {
        // Three columns 0, 90, 180 to two: [0, 1.5) and [1.5, 3): (0 + 45) / 1.5 = 30, (45 + 180) / 1.5 = 150.
        var image = RGBAImage(width: 3, height: 1, fill: (0, 0, 0, 255))
        image.pixels[4] = 90
        image.pixels[8] = 180
        let out = try ImageDecoder.decode(
            data: ImageEncoder.png(image), request: DecodeRequest(targetWidth: 2, targetHeight: 10)
        ).image
        #expect(out.width == 2 && out.height == 1)
        #expect(out.pixels[0] == 30 && out.pixels[4] == 150)
    }

    @Test func interlacedPNGDecodesLikeTheSameImageNonInterlaced() throws {
        var exif = ExifBuilder()
        exif.orientation = 6
        let photo = Fixtures.photo(width: 90, height: 70)
        let interlaced = try ImageEncoder.png(photo, exif: exif.tiffPayload(), interlaced: true)
        let plain = try ImageEncoder.png(photo, exif: exif.tiffPayload())
        #expect(interlaced != plain)
        for request in [
            DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none),
            DecodeRequest(targetWidth: 35, targetHeight: 35),
        ] {
            let a = try ImageDecoder.decode(data: interlaced, request: request)
            let b = try ImageDecoder.decode(data: plain, request: request)
            #expect(a.image.width == b.image.width && a.image.height == b.image.height)
            #expect(a.image.pixels == b.image.pixels)
        }
        let full = try ImageDecoder.decode(
            data: interlaced, request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
        #expect(full.image.width == 70 && full.image.height == 90)
        #expect(throws: ImageError.truncated) {
            _ = try ImageDecoder.decode(
                data: Array(interlaced.prefix(interlaced.count / 2)),
                request: DecodeRequest(targetWidth: 20, targetHeight: 20))
        }
    }
}
