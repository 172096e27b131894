import Testing

@testable import Images

@Suite struct LocationStripperTests {
    static func metadata(_ bytes: [UInt8]) throws -> ImageMetadata {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: bytes, fileLength: bytes.count) else {
            throw ImageError.corrupt("needMore for a whole file")
        }
        return metadata
    }

    static func fullDecode(_ bytes: [UInt8]) throws -> RGBAImage {
        try ImageDecoder.decode(data: bytes, request: DecodeRequest(targetWidth: 0, targetHeight: 0, resizeMode: .none))
            .image
    }

    static func xmpSegment(_ packet: String) -> [UInt8] {
        let payload = JPEGHeader.xmpIdentifier + Array(packet.utf8)
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    static let xmp = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="48,51.5N" \
        exif:ExposureTime="1/60" exif:GPSLongitude='2,17.7E'><exif:GPSAltitude>35/1</exif:GPSAltitude>\
        <exif:GPSVersionID/><exif:Flash>0</exif:Flash></rdf:Description></rdf:RDF></x:xmpmeta>
        """

    @Test func jpegWithGPSThumbnailAndOrientation() throws {
        var exif = ExifBuilder()
        exif.orientation = 6
        exif.captureDate = Fixtures.sampleDate
        exif.timeZoneOffsetSeconds = 3600
        exif.location = GPSLocation(latitude: 48.85, longitude: 2.29, altitude: 35)
        exif.thumbnailJPEG = try ImageEncoder.jpeg(Fixtures.photo(width: 40, height: 30), quality: 60)
        exif.make = "Maker"
        var file = try ImageEncoder.jpeg(Fixtures.photo(width: 90, height: 60), exif: exif.tiffPayload())
        // An XMP packet with GPS attributes and elements after the EXIF segment.
        let exifEnd = 4 + (Int(file[4]) << 8 | Int(file[5]))
        file.insert(contentsOf: Self.xmpSegment(Self.xmp), at: exifEnd)

        let before = try Self.metadata(file)
        #expect(before.location != nil)
        let stripped = try #require(try LocationStripper.strippingLocation(from: file))
        #expect(stripped.count == file.count)
        let after = try Self.metadata(stripped)
        #expect(after.location == nil)
        #expect(after.orientation == 6 && after.captureDate == Fixtures.sampleDate)
        #expect(after.pixelWidth == 90 && after.pixelHeight == 60)
        let thumbnail = try #require(after.embeddedThumbnail)
        #expect(Array(stripped[thumbnail]) == exif.thumbnailJPEG)
        #expect(try Self.fullDecode(stripped).pixels == Self.fullDecode(file).pixels)
        // No GPS text left in the XMP; the other properties are still there.
        let text = String(decoding: stripped, as: UTF8.self)
        #expect(!text.contains("GPS") && text.contains("exif:ExposureTime=\"1/60\"") && text.contains("<exif:Flash>0"))
        // A second pass finds nothing.
        #expect(try LocationStripper.strippingLocation(from: stripped) == nil)
    }

    @Test func pngEXifChunkIsStrippedWithItsCRC() throws {
        var exif = ExifBuilder()
        exif.orientation = 2
        exif.location = GPSLocation(latitude: -10, longitude: -20)
        let file = try ImageEncoder.png(Fixtures.photo(width: 30, height: 20), exif: exif.tiffPayload())
        let stripped = try #require(try LocationStripper.strippingLocation(from: file))
        #expect(stripped.count == file.count)
        let after = try Self.metadata(stripped)
        #expect(after.location == nil && after.orientation == 2)
        // libpng checks every CRC: a bad one would fail the decode.
        #expect(try Self.fullDecode(stripped).pixels == Self.fullDecode(file).pixels)
    }

    @Test("blanking a GPS attribute that joins a name before it to an = after it: a second pass finds nothing")
    func xmpBlankingIsIdempotent() throws {
        // Not well-formed XML: after `exif:GPSLatitude="1"` is blanked, `exif:GPSAltitude   ="2"` reads as an
        // attribute (found by the heif-iloc fuzz target).
        var packet = Array(#"<r exif:GPSAltitude exif:GPSLatitude="1"="2" x="3"/>"#.utf8)
        #expect(try LocationStripper.blankXMP(&packet, from: 0))
        #expect(!String(decoding: packet, as: UTF8.self).contains("exif:GPS"))
        #expect(try LocationStripper.blankXMP(&packet, from: 0) == false)
        // A chain longer than the passes allow is refused, not handed out half blanked.
        var chain = Array(("<r " + (0..<12).map { "exif:GPS\($0) " }.joined() + "exif:GPSX=\"0\"").utf8)
        chain += Array((1...12).map { "=\"\($0)\"" }.joined().utf8) + Array("/>".utf8)
        #expect(throws: ImageError.self) { try LocationStripper.blankXMP(&chain, from: 0) }
    }

    @Test func nilWhenThereIsNoLocation() throws {
        var exif = ExifBuilder()
        exif.orientation = 3
        #expect(
            try LocationStripper.strippingLocation(
                from: ImageEncoder.jpeg(Fixtures.photo(width: 20, height: 20), exif: exif.tiffPayload())) == nil)
        #expect(
            try LocationStripper.strippingLocation(from: ImageEncoder.jpeg(Fixtures.photo(width: 20, height: 20)))
                == nil)
        #expect(
            try LocationStripper.strippingLocation(from: ImageEncoder.png(Fixtures.photo(width: 20, height: 20))) == nil
        )
    }

    @Test func patchesFromTheHeadEqualTheWholeFileStrip() throws {
        var exif = ExifBuilder()
        exif.location = GPSLocation(latitude: 1.5, longitude: -2.5, altitude: -3)
        exif.captureDate = Fixtures.sampleDate
        var file = try ImageEncoder.jpeg(Fixtures.photo(width: 300, height: 200), quality: 90, exif: exif.tiffPayload())
        file.insert(contentsOf: Self.xmpSegment(Self.xmp), at: 2)
        guard case .complete(let header) = try JPEGHeader.scan(file, throughScan: true) else {
            throw ImageError.corrupt("no scan")
        }
        let headEnd = header.segments.last!.end + 64
        let head = Array(file.prefix(headEnd))
        let patches = try LocationStripper.locationPatches(head: head)
        #expect(!patches.isEmpty && patches.allSatisfy { $0.offset + $0.bytes.count <= head.count })
        var patched = file
        for patch in patches {
            patched.replaceSubrange(patch.offset..<(patch.offset + patch.bytes.count), with: patch.bytes)
        }
        #expect(patched == (try LocationStripper.strippingLocation(from: file)))
        // A head that stops inside the headers cannot be patched safely.
        #expect(throws: ImageError.truncated) { _ = try LocationStripper.locationPatches(head: Array(file.prefix(40))) }
    }

    @Test func imagesAfterThePrimaryOneAreStrippedToo() throws {
        var primaryExif = ExifBuilder()
        primaryExif.orientation = 1
        var secondaryExif = ExifBuilder()
        secondaryExif.location = GPSLocation(latitude: 40, longitude: -70)
        let primary = try ImageEncoder.jpeg(Fixtures.photo(width: 64, height: 48), exif: primaryExif.tiffPayload())
        let secondary = try ImageEncoder.jpeg(Fixtures.photo(width: 32, height: 24), exif: secondaryExif.tiffPayload())
        let file = primary + secondary
        // The head alone does not see the second image.
        #expect(try LocationStripper.locationPatches(head: file).isEmpty)
        let stripped = try #require(try LocationStripper.strippingLocation(from: file))
        #expect(stripped.count == file.count)
        #expect(Array(stripped[..<primary.count]) == primary)
        let second = Array(stripped[primary.count...])
        #expect(try Self.metadata(second).location == nil)
        #expect(try Self.fullDecode(second).pixels == Self.fullDecode(secondary).pixels)
    }

    @Test func heifExifItemIsStrippedInPlace() throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        var exif = ExifBuilder()
        exif.captureDate = Fixtures.sampleDate
        exif.location = GPSLocation(latitude: 51.5, longitude: -0.12, altitude: 11)
        exif.make = "Maker"
        let file = try ImageEncoder.heif(Fixtures.photo(width: 64, height: 48), quality: 60, exif: exif.tiffPayload())
        #expect(try Self.metadata(file).location != nil)
        let stripped = try #require(try LocationStripper.strippingLocation(from: file))
        #expect(stripped.count == file.count)
        let after = try Self.metadata(stripped)
        #expect(after.location == nil && after.captureDate == Fixtures.sampleDate)
        #expect(try Self.fullDecode(stripped).pixels == Self.fullDecode(file).pixels)
        #expect(try LocationStripper.strippingLocation(from: stripped) == nil)
        var patched = file
        for patch in try LocationStripper.locationPatches(head: file) {
            patched.replaceSubrange(patch.offset..<(patch.offset + patch.bytes.count), with: patch.bytes)
        }
        #expect(patched == stripped)
        // A head that ends before the Exif item (libheif writes it after the meta box).
        let exifAt = try #require(patched.indices.first { patched[$0] != file[$0] })
        #expect(throws: ImageError.truncated) {
            _ = try LocationStripper.locationPatches(head: Array(file.prefix(exifAt)))
        }
        // Without GPS: nothing to do.
        var plain = ExifBuilder()
        plain.captureDate = Fixtures.sampleDate
        let noGPS = try ImageEncoder.heif(Fixtures.photo(width: 32, height: 32), quality: 60, exif: plain.tiffPayload())
        #expect(try LocationStripper.strippingLocation(from: noGPS) == nil)
        #expect(
            try LocationStripper.strippingLocation(from: ImageEncoder.heif(Fixtures.photo(width: 32, height: 32)))
                == nil)
    }
}
