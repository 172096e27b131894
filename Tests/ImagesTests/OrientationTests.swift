import Testing

@testable import Images

@Suite struct OrientationTests {
    @Test(arguments: 1...8)
    func decodedJPEGLooksLikeTheReferenceForEveryOrientation(orientation: Int) throws {
        let reference = Fixtures.quadrants(width: 64, height: 48)
        let stored = Fixtures.stored(for: reference, orientation: orientation)
        var exif = ExifBuilder()
        exif.orientation = orientation
        let jpeg = try ImageEncoder.jpeg(stored, quality: 95, exif: exif.tiffPayload())

        guard case .parsed(let metadata) = try ImageMetadata.parse(head: jpeg, fileLength: jpeg.count) else {
            Issue.record("needMore for a whole file")
            return
        }
        #expect(metadata.orientation == orientation)
        #expect(metadata.pixelWidth == stored.width && metadata.pixelHeight == stored.height)
        #expect(metadata.displayWidth == 64 && metadata.displayHeight == 48)

        let (image, _) = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
        #expect(image.width == 64 && image.height == 48)
        #expect(Fixtures.meanAbsoluteError(image, reference) < 4)
        // Quadrant centres, away from the JPEG ringing at the edges.
        for (x, y) in [(16, 12), (48, 12), (16, 36), (48, 36)] {
            let got = Fixtures.pixel(image, x, y)
            let want = Fixtures.quadrantColour(x: x, y: y, width: 64, height: 48)
            #expect(abs(got.0 - Int(want.0)) < 24 && abs(got.1 - Int(want.1)) < 24 && abs(got.2 - Int(want.2)) < 24)
        }
    }

    @Test(arguments: 1...8)
    func scaledDecodeIsUprightAndDisplaySized(orientation: Int) throws {
        let reference = Fixtures.quadrants(width: 320, height: 240)
        let stored = Fixtures.stored(for: reference, orientation: orientation)
        var exif = ExifBuilder()
        exif.orientation = orientation
        let jpeg = try ImageEncoder.jpeg(stored, quality: 95, exif: exif.tiffPayload())
        let (image, statistics) = try ImageDecoder.decode(
            data: jpeg, request: DecodeRequest(targetWidth: 80, targetHeight: 80))
        #expect(image.width == 80 && image.height == 60)
        #expect(statistics.dctScale == 4)  // 320 / 4 = 80: the smallest DCT scale still >= the target
        let small = Fixtures.quadrants(width: 80, height: 60)
        #expect(Fixtures.meanAbsoluteError(image, small) < 6)
    }

    @Test func orientationSwapsAxesOnlyForFiveToEight() {
        #expect((1...8).filter(Orientation.swapsAxes) == [5, 6, 7, 8])
    }
}
