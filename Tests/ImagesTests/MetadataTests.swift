import Foundation
import Testing

@testable import Images

@Suite struct MetadataTests {
    func parsed(_ bytes: [UInt8]) throws -> ImageMetadata {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: bytes, fileLength: bytes.count) else {
            throw ImageError.corrupt("needMore for a whole file")
        }
        return metadata
    }

    @Test func captureDateWithOffset() throws {
        var exif = ExifBuilder()
        exif.captureDate = Fixtures.sampleDate
        exif.timeZoneOffsetSeconds = -5 * 3600
        let metadata = try parsed(ImageEncoder.jpeg(Fixtures.photo(width: 40, height: 30), exif: exif.tiffPayload()))
        #expect(metadata.captureDate == Fixtures.sampleDate)
    }

    @Test func captureDateWithoutOffsetIsReadAsUTC() throws {
        // "2023:11:14 22:13:20" with no offset.
        let date = ExifDate.parse("2023:11:14 22:13:20", offset: nil)
        #expect(date == Fixtures.sampleDate)
        var exif = ExifBuilder()
        exif.captureDate = Fixtures.sampleDate
        let metadata = try parsed(ImageEncoder.jpeg(Fixtures.photo(width: 40, height: 30), exif: exif.tiffPayload()))
        #expect(metadata.captureDate == Fixtures.sampleDate)
        #expect(ExifDate.parse("2023:11:14 22:13:20", offset: "+01:30") == Fixtures.sampleDate - 5400)
        #expect(ExifDate.parse("    :  :     :  :  ", offset: nil) == nil)
        #expect(ExifDate.parse("2023:02:29 00:00:00", offset: nil) == nil)
    }

    @Test(arguments: [
        GPSLocation(latitude: 48.858_37, longitude: 2.294_481, altitude: 35.5),
        GPSLocation(latitude: -33.856_784, longitude: -151.215_297, altitude: -12),
        GPSLocation(latitude: -0.5, longitude: 179.999, altitude: nil),
    ])
    func gpsRoundTrip(location: GPSLocation) throws {
        var exif = ExifBuilder()
        exif.location = location
        let metadata = try parsed(ImageEncoder.jpeg(Fixtures.photo(width: 40, height: 30), exif: exif.tiffPayload()))
        let read = try #require(metadata.location)
        #expect(abs(read.latitude - location.latitude) < 1e-6)
        #expect(abs(read.longitude - location.longitude) < 1e-6)
        #expect(read.altitude.map { abs($0 - location.altitude!) < 1e-3 } ?? (location.altitude == nil))
    }

    @Test func sizeOrientationAndThumbnailRange() throws {
        let thumbnail = try ImageEncoder.jpeg(Fixtures.photo(width: 32, height: 24), quality: 70)
        var exif = ExifBuilder()
        exif.orientation = 8
        exif.thumbnailJPEG = thumbnail
        exif.make = "Maker"
        exif.model = "Model 1"
        let file = try ImageEncoder.jpeg(Fixtures.photo(width: 120, height: 80), exif: exif.tiffPayload())
        let metadata = try parsed(file)
        #expect(metadata.format == .jpeg)
        #expect(metadata.pixelWidth == 120 && metadata.pixelHeight == 80)
        #expect(metadata.orientation == 8 && metadata.displayWidth == 80 && metadata.displayHeight == 120)
        let range = try #require(metadata.embeddedThumbnail)
        #expect(Array(file[range]) == thumbnail)
        #expect(metadata.location == nil && metadata.captureDate == nil)
    }

    @Test func pngEXifChunk() throws {
        var exif = ExifBuilder()
        exif.orientation = 3
        exif.captureDate = Fixtures.sampleDate
        exif.location = GPSLocation(latitude: 10, longitude: -20)
        let png = try ImageEncoder.png(Fixtures.photo(width: 30, height: 20), exif: exif.tiffPayload())
        let metadata = try parsed(png)
        #expect(metadata.format == .png && metadata.pixelWidth == 30 && metadata.pixelHeight == 20)
        #expect(metadata.orientation == 3 && metadata.captureDate == Fixtures.sampleDate)
        #expect(metadata.location == GPSLocation(latitude: 10, longitude: -20))
    }

    @Test func needMoreWhenTheHeadIsShort() throws {
        var exif = ExifBuilder()
        exif.thumbnailJPEG = try ImageEncoder.jpeg(Fixtures.photo(width: 64, height: 48))
        let file = try ImageEncoder.jpeg(Fixtures.photo(width: 100, height: 100), exif: exif.tiffPayload())
        let whole = try parsed(file)
        var head = Array(file.prefix(10))
        var rounds = 0
        while case .needMore(let count) = try ImageMetadata.parse(head: head, fileLength: file.count) {
            #expect(count > head.count && count <= file.count)
            head = Array(file.prefix(count))
            rounds += 1
        }
        #expect(rounds >= 1)
        #expect(try parsed(head) == whole)
        // Without a file length, a short head still asks for more.
        guard case .needMore = try ImageMetadata.parse(head: Array(file.prefix(30)), fileLength: nil) else {
            Issue.record("parsed from 30 bytes")
            return
        }
    }

    @Test("a HEIF brand among the compatible brands: a 16-byte head asks for the rest of the ftyp box")
    func compatibleBrandPastAShortHead() throws {
        // ftyp: major brand "isom", minor version 0, compatible brands "isom", "mif1" (bytes 20..<24).
        let ftyp: [UInt8] = [0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 0, 0] + Array("isommif1".utf8)
        let file = ftyp + [UInt8](repeating: 0, count: 100)
        #expect(ImageFormat.sniff(file.prefix(16)) == nil && ImageFormat.sniff(file) == .heif)
        guard case .needMore(let count) = try ImageMetadata.parse(head: Array(file.prefix(16)), fileLength: file.count)
        else {
            Issue.record("a 16-byte head of a HEIF file is not asked to grow")
            return
        }
        #expect(count == ImageFormat.sniffLength)
        // Not an image at all: refused once the bytes sniff looks at are there (or the file ends first).
        let text = Array("not an image, only some text".utf8) + [UInt8](repeating: 0x20, count: 40)
        #expect(throws: ImageError.unsupportedFormat) {
            try ImageMetadata.parse(head: Array(text.prefix(32)), fileLength: text.count)
        }
        #expect(throws: ImageError.unsupportedFormat) {
            try ImageMetadata.parse(head: Array(text.prefix(20)), fileLength: 20)
        }
    }

    @Test func sniffFormats() throws {
        #expect(ImageFormat.sniff(try ImageEncoder.jpeg(Fixtures.photo(width: 8, height: 8))) == .jpeg)
        #expect(ImageFormat.sniff(try ImageEncoder.png(Fixtures.photo(width: 8, height: 8))) == .png)
        #expect(ImageFormat.sniff(Array("\0\0\0\u{18}ftypheic\0\0\0\0mif1heic".utf8)) == .heif)
        #expect(ImageFormat.sniff(Array("GIF89a.........".utf8)) == nil)
    }
}
