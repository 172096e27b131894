import Foundation
import Synchronization
import Testing

@testable import Images

@Suite struct DecodeLimitsTests {
    @Test(arguments: [ImageFormat.jpeg, .png])
    func cancellationAfterSomeRowsThrowsCancelled(format: ImageFormat) throws {
        let photo = Fixtures.photo(width: 200, height: 160)
        let file = format == .jpeg ? try ImageEncoder.jpeg(photo) : try ImageEncoder.png(photo)
        let polls = Mutex(0)
        #expect(throws: ImageError.cancelled) {
            _ = try ImageDecoder.decode(data: file, request: DecodeRequest(targetWidth: 50, targetHeight: 50)) {
                polls.withLock {
                    $0 += 1
                    return $0 > 10
                }
            }
        }
        #expect(polls.withLock { $0 } == 11)
        // Never cancelled: decodes.
        let image = try ImageDecoder.decode(data: file, request: DecodeRequest(targetWidth: 50, targetHeight: 50)) {
            false
        }.image
        #expect(image.width == 50 && image.height == 40)
    }

    @Test func largeJPEGAtThumbnailSizeHoldsASmallFractionOfItsPixels() throws {
        // 6000 x 4000 (24 MP), written row by row.
        let file = try ImageEncoder.jpeg(width: 6000, height: 4000, quality: 80) { y, row in
            for x in 0..<6000 {
                row[x * 4] = UInt8(x * 255 / 5999)
                row[x * 4 + 1] = UInt8(y * 255 / 3999)
                row[x * 4 + 2] = UInt8((x ^ y) & 0xFF)
                row[x * 4 + 3] = 255
            }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("images-24mp-\(UUID()).jpg").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(file))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (image, statistics) = try ImageDecoder.decode(
            fileAt: path, request: DecodeRequest(targetWidth: 256, targetHeight: 256))
        #expect(image.width == 256 && image.height == 171)
        #expect(statistics.dctScale == 8 && statistics.sourceWidth == 6000 && statistics.sourceHeight == 4000)
        #expect(statistics.peakPixelBytes < 6000 * 4000 * 4 / 16)
        #expect(statistics.peakPixelBytes < 6000 * 4000 * 4 / 100)
    }

    @Test func fileAndMemoryDecodesAgree() throws {
        var exif = ExifBuilder()
        exif.orientation = 7
        let file = try ImageEncoder.jpeg(Fixtures.photo(width: 120, height: 90), exif: exif.tiffPayload())
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("images-\(UUID()).jpg").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(file))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let request = DecodeRequest(targetWidth: 40, targetHeight: 40)
        let fromFile = try ImageDecoder.decode(fileAt: path, request: request).image
        let fromMemory = try ImageDecoder.decode(data: file, request: request).image
        #expect(fromFile.width == 30 && fromFile.height == 40)
        #expect(fromFile.pixels == fromMemory.pixels)
        #expect(throws: ImageError.self) { _ = try ImageDecoder.decode(fileAt: path + ".missing", request: request) }
    }

    @Test func heifRoundTripWhenAnEncoderExists() throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        let photo = Fixtures.quadrants(width: 128, height: 96)
        let heic = try ImageEncoder.heif(photo, quality: 90)
        #expect(ImageFormat.sniff(heic) == .heif)
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: heic, fileLength: heic.count) else {
            throw ImageError.corrupt("needMore")
        }
        #expect(metadata.format == .heif && metadata.pixelWidth == 128 && metadata.pixelHeight == 96)
        #expect(metadata.orientation == 1)
        let (image, _) = try ImageDecoder.decode(data: heic, request: DecodeRequest(targetWidth: 64, targetHeight: 64))
        #expect(image.width == 64 && image.height == 48)
        #expect(Fixtures.meanAbsoluteError(image, Fixtures.quadrants(width: 64, height: 48)) < 8)
    }

    @Test("a HEIF whose later boxes libheif reads past the head (as zeros) is read head by head to its metadata")
    func heifBoxesPastTheHead() throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        let one = try ImageEncoder.heif(Fixtures.photo(width: 16, height: 8), quality: 50)
        // Two files one after the other: libheif reads every top-level box, so a head that ends inside the second
        // ftyp shows it a brandless one (found by the image-metadata fuzz target).
        let file = one + one
        guard case .parsed(let whole) = try ImageMetadata.parse(head: file, fileLength: file.count) else {
            throw ImageError.corrupt("needMore")
        }
        for start in [16, one.count + 8] {
            var head = Array(file.prefix(start))
            var parse = try ImageMetadata.parse(head: head, fileLength: file.count)
            while case .needMore(let count) = parse {
                #expect(count > head.count && count <= file.count)
                head = Array(file.prefix(count))
                parse = try ImageMetadata.parse(head: head, fileLength: file.count)
            }
            guard case .parsed(let metadata) = parse else { return }
            #expect(metadata == whole)
        }
    }

    @Test func heifMetadataFromItsExifItemAndAShortHead() throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        var exif = ExifBuilder()
        exif.orientation = 6  // ignored for HEIF
        exif.captureDate = Fixtures.sampleDate
        exif.timeZoneOffsetSeconds = 7200
        exif.location = GPSLocation(latitude: -12.5, longitude: 130.25, altitude: 8)
        let heic = try ImageEncoder.heif(Fixtures.photo(width: 80, height: 60), quality: 70, exif: exif.tiffPayload())
        var head = Array(heic.prefix(16))
        var parse = try ImageMetadata.parse(head: head, fileLength: heic.count)
        while case .needMore(let count) = parse {
            #expect(count > head.count && count <= heic.count)
            head = Array(heic.prefix(count))
            parse = try ImageMetadata.parse(head: head, fileLength: heic.count)
        }
        guard case .parsed(let metadata) = parse else { return }
        #expect(metadata.pixelWidth == 80 && metadata.pixelHeight == 60 && metadata.orientation == 1)
        #expect(metadata.captureDate == Fixtures.sampleDate)
        let location = try #require(metadata.location)
        #expect(abs(location.latitude + 12.5) < 1e-6 && abs(location.longitude - 130.25) < 1e-6)
    }
}
