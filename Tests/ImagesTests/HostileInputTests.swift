import PropertyBased
import TestSupport
import Testing

@testable import Images

@Suite(.heavy) struct HostileInputTests {
    /// A TIFF payload (little-endian) of IFD0 at 8 with the given 12-byte entries and next pointer.
    static func tiff(entries: [[UInt8]], next: UInt32 = 0, tail: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        out += [UInt8(entries.count & 0xFF), UInt8(entries.count >> 8)]
        for entry in entries { out += entry }
        out += le32(next)
        return out + tail
    }

    static func entry(tag: UInt16, type: UInt16, count: UInt32, value: UInt32) -> [UInt8] {
        [UInt8(tag & 0xFF), UInt8(tag >> 8), UInt8(type & 0xFF), UInt8(type >> 8)] + le32(count) + le32(value)
    }

    static func le32(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }

    static func jpeg(exif: [UInt8]? = nil) throws -> [UInt8] {
        try ImageEncoder.jpeg(Fixtures.photo(width: 64, height: 48), quality: 80, exif: exif)
    }

    func expectCorrupt(_ file: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            _ = try ImageMetadata.parse(head: file, fileLength: file.count)
        } throws: { error in
            if case ImageError.corrupt = error { return true }
            return false
        }
    }

    @Test func hugeJPEGFrameIsRefusedBeforeAllocating() throws {
        var file = try Self.jpeg()
        guard case .complete(let header) = try JPEGHeader.scan(file, throughScan: false),
            let sof = header.segments.first(where: { JPEGHeader.isFrameHeader($0.marker) })
        else { throw ImageError.corrupt("no SOF") }
        // 65000 x 65000 (the largest a JPEG frame header can say is 65535).
        file.replaceSubrange((sof.dataStart + 1)..<(sof.dataStart + 5), with: [0xFD, 0xE8, 0xFD, 0xE8])
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: file, fileLength: file.count) else {
            throw ImageError.corrupt("needMore")
        }
        #expect(metadata.pixelWidth == 65_000 && metadata.pixelHeight == 65_000)
        let start = ContinuousClock.now
        #expect(throws: ImageError.tooLarge(width: 65_000, height: 65_000, limit: 100_000_000)) {
            _ = try ImageDecoder.decode(data: file, request: DecodeRequest(targetWidth: 256, targetHeight: 256))
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func hugePNGHeaderIsRefusedBeforeAllocating() throws {
        var file = try ImageEncoder.png(Fixtures.photo(width: 16, height: 16))
        // IHDR data at 16..<29, CRC at 29..<33.
        file.replaceSubrange(16..<24, with: PNGHeader.bigEndian32(100_000) + PNGHeader.bigEndian32(100_000))
        file.replaceSubrange(29..<33, with: PNGHeader.bigEndian32(PNGHeader.crc32(file[12..<29])))
        let start = ContinuousClock.now
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000, limit: 100_000_000)) {
            _ = try ImageDecoder.decode(data: file, request: DecodeRequest(targetWidth: 256, targetHeight: 256))
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test("an aspect-fill of a very thin image whose output would be over the pixel limit is refused, not allocated")
    func thinImageAspectFillOverTheLimit() throws {
        // 2 x 4096 is 8,192 source pixels; covering 64 x 64 asks for 64 x 131,072 = 8.4 Mpx (found by the
        // image-decode fuzz target: a JPEG frame of 4 x 65,000 under a 1 Mpx limit allocated 104 MB of output).
        let file = try ImageEncoder.png(Fixtures.photo(width: 2, height: 4096))
        var request = DecodeRequest(targetWidth: 64, targetHeight: 64, contentMode: .aspectFill)
        request.maxPixels = 1 << 20
        #expect(throws: ImageError.tooLarge(width: 64, height: 131_072, limit: 1 << 20)) {
            _ = try ImageDecoder.decode(data: file, request: request)
        }
        // The same output under a limit that allows it decodes at the promised size.
        request.maxPixels = 10_000_000
        let (image, _) = try ImageDecoder.decode(data: file, request: request)
        #expect(image.width == 64 && image.height == 131_072)
    }

    @Test("an ancillary PNG chunk declaring 256 MiB in a small file is skipped by the decoder, not allocated")
    func hugeAncillaryPNGChunk() throws {
        let file = try ImageEncoder.png(Fixtures.photo(width: 6, height: 4))
        // After IHDR (33 bytes): chunks whose declared lengths run far past the file's end. libpng's own eXIf
        // handler allocated the declared length (found by the image-decode fuzz target under a 64 MiB limit).
        for type in ["eXIf", "iTXt", "zTXt", "iCCP", "sPLT"] {
            var bytes = Array(file[0..<33])
            bytes += PNGHeader.bigEndian32(0x1000_010A) + Array(type.utf8) + Array(file[33...])
            let start = ContinuousClock.now
            #expect(throws: ImageError.self) {
                _ = try ImageDecoder.decode(data: bytes, request: DecodeRequest(targetWidth: 8, targetHeight: 8))
            }
            #expect(ContinuousClock.now - start < .seconds(1))
        }
    }

    @Test("a second, short IHDR at the end of a PNG head is corrupt, not read past the bytes")
    func secondShortIHDR() throws {
        let file = try ImageEncoder.png(Fixtures.photo(width: 6, height: 4))
        // Signature and IHDR, then an empty IHDR chunk (length 0, type, CRC) and nothing after it.
        let head = Array(file[0..<33]) + PNGHeader.chunk(type: "IHDR", data: [])
        expectCorrupt(head)
        #expect(throws: ImageError.self) { _ = try LocationStripper.locationPatches(head: head) }
    }

    @Test("GPS values that share bytes with IFD0 are not zeroed with it: the orientation survives the strip")
    func gpsValueOverlappingIFD0() throws {
        // IFD0 at 8 (orientation 3, GPS pointer), 30 bytes; the GPS IFD at 38 holds a latitude whose 8 bytes lie
        // at offset 6, over IFD0's entry count and orientation entry (found by the location-strip fuzz target).
        let gps = [1, 0] + Self.entry(tag: 2, type: 5, count: 1, value: 6) + Self.le32(0)
        let file = try Self.jpeg(
            exif: Self.tiff(
                entries: [
                    Self.entry(tag: 0x0112, type: 3, count: 1, value: 3),
                    Self.entry(tag: 0x8825, type: 4, count: 1, value: 38),
                ], tail: gps))
        let stripped = try #require(try LocationStripper.strippingLocation(from: file))
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: stripped, fileLength: stripped.count) else {
            throw ImageError.corrupt("needMore")
        }
        #expect(metadata.orientation == 3 && metadata.location == nil)
        #expect(try LocationStripper.strippingLocation(from: stripped) == nil)
        let request = DecodeRequest(targetWidth: 16, targetHeight: 16)
        #expect(
            try ImageDecoder.decode(data: stripped, request: request).image.pixels
                == ImageDecoder.decode(data: file, request: request).image.pixels)
    }

    @Test func exifOffsetsBeyondTheData() throws {
        // IFD0 pointer far outside.
        var payload = Self.tiff(entries: [])
        payload.replaceSubrange(4..<8, with: Self.le32(0xFFFF_FF00))
        expectCorrupt(try Self.jpeg(exif: payload))
        // An Exif IFD pointer outside.
        expectCorrupt(
            try Self.jpeg(exif: Self.tiff(entries: [Self.entry(tag: 0x8769, type: 4, count: 1, value: 0x7FFF_FFFF)])))
        // A DateTime whose text lies outside.
        expectCorrupt(
            try Self.jpeg(exif: Self.tiff(entries: [Self.entry(tag: 0x0132, type: 2, count: 20, value: 0xFFFF_FFF0)])))
        // Decoding ignores the broken EXIF.
        let decoded = try ImageDecoder.decode(
            data: try Self.jpeg(exif: payload), request: DecodeRequest(targetWidth: 32, targetHeight: 32))
        #expect(decoded.image.width == 32 && decoded.image.height == 24)
    }

    @Test func ifdLoopIsRefused() throws {
        // IFD0's next pointer is IFD0.
        expectCorrupt(
            try Self.jpeg(exif: Self.tiff(entries: [Self.entry(tag: 0x0112, type: 3, count: 1, value: 6)], next: 8)))
        // The GPS pointer is IFD0.
        expectCorrupt(try Self.jpeg(exif: Self.tiff(entries: [Self.entry(tag: 0x8825, type: 4, count: 1, value: 8)])))
        #expect(throws: ImageError.self) {
            _ = try LocationStripper.strippingLocation(
                from: try Self.jpeg(exif: Self.tiff(entries: [Self.entry(tag: 0x8825, type: 4, count: 1, value: 8)])))
        }
    }

    @Test func countOverflowIsRefused() throws {
        // GPS latitude with 2^32 - 1 rationals (8 bytes each) at a small offset.
        let gpsAt: UInt32 = 8 + 2 + 12 + 4
        var gps: [UInt8] = [2, 0]
        gps += Self.entry(tag: 2, type: 5, count: 0xFFFF_FFFF, value: 8)
        gps += Self.entry(tag: 4, type: 5, count: 0x2000_0001, value: 8)
        gps += Self.le32(0)
        expectCorrupt(
            try Self.jpeg(
                exif: Self.tiff(entries: [Self.entry(tag: 0x8825, type: 4, count: 1, value: gpsAt)], tail: gps)))
        // An IFD declaring 65535 entries.
        var many = Self.tiff(entries: [])
        many.replaceSubrange(8..<10, with: [0xFF, 0xFF])
        expectCorrupt(try Self.jpeg(exif: many))
    }

    @Test func truncatedFilesThrowTypedErrors() throws {
        let jpeg = try ImageEncoder.jpeg(Fixtures.photo(width: 200, height: 150), quality: 90)
        let png = try ImageEncoder.png(Fixtures.photo(width: 200, height: 150))
        for file in [jpeg, png] {
            for fraction in [0.3, 0.6, 0.95] {
                let cut = Array(file.prefix(Int(Double(file.count) * fraction)))
                #expect(throws: ImageError.truncated) {
                    _ = try ImageDecoder.decode(data: cut, request: DecodeRequest(targetWidth: 50, targetHeight: 50))
                }
            }
        }
        #expect(throws: ImageError.truncated) {
            _ = try ImageMetadata.parse(head: Array(jpeg.prefix(100)), fileLength: 100)
        }
    }

    @Test func randomByteFlipsNeverCrash() async throws {
        var exif = ExifBuilder()
        exif.orientation = 6
        exif.location = GPSLocation(latitude: 1, longitude: 2, altitude: 3)
        exif.captureDate = Fixtures.sampleDate
        let file = try ImageEncoder.jpeg(Fixtures.photo(width: 48, height: 32), quality: 80, exif: exif.tiffPayload())
        let flip = zip(Gen.int(in: 0...(file.count - 1)), Gen.int(in: 1...255))
        await propertyCheck(count: 300, input: flip.array(of: 1...6)) { flips in
            var bytes = file
            for (index, mask) in flips { bytes[index] ^= UInt8(mask) }
            // Every outcome is an image of the promised shape or an ImageError (typed throws).
            if let (image, _) = try? ImageDecoder.decode(
                data: bytes, request: DecodeRequest(targetWidth: 20, targetHeight: 20))
            {
                #expect(image.pixels.count == image.width * image.height * 4)
            }
            _ = try? ImageMetadata.parse(head: bytes, fileLength: bytes.count)
            if let stripped = try? LocationStripper.strippingLocation(from: bytes) {
                #expect(stripped.count == bytes.count)
            }
        }
    }

    @Test func heifByteFlipsNeverCrash() async throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        var exif = ExifBuilder()
        exif.captureDate = Fixtures.sampleDate
        let file = try ImageEncoder.heif(Fixtures.photo(width: 64, height: 48), quality: 70, exif: exif.tiffPayload())
        // Mostly the boxes (the first few hundred bytes), sometimes the coded data.
        let position = Gen.oneOf(Gen.int(in: 0...600), Gen.int(in: 0...(file.count - 1)))
        await propertyCheck(count: 200, input: zip(position, Gen.int(in: 1...255)).array(of: 1...4)) { flips in
            var bytes = file
            for (index, mask) in flips { bytes[index] ^= UInt8(mask) }
            if let (image, _) = try? ImageDecoder.decode(
                data: bytes, request: DecodeRequest(targetWidth: 16, targetHeight: 16))
            {
                #expect(image.pixels.count == image.width * image.height * 4)
            }
            _ = try? ImageMetadata.parse(head: bytes, fileLength: bytes.count)
            _ = try? ImageMetadata.parse(head: Array(bytes.prefix(400)), fileLength: bytes.count)
            if let stripped = try? LocationStripper.strippingLocation(from: bytes) {
                #expect(stripped.count == bytes.count)
            }
            _ = try? LocationStripper.locationPatches(head: Array(bytes.prefix(400)))
        }
    }
}
