import Foundation
import Images
import Testing

@Suite("HEIF location strip")
struct HEIFLocationTests {
    static func located() throws -> [UInt8] {
        var exif = ExifBuilder()
        exif.orientation = 1
        exif.captureDate = Date(timeIntervalSince1970: 1_700_000_000)
        exif.location = GPSLocation(latitude: 35.6586, longitude: 139.7454, altitude: 150)
        let image = RGBAImage(width: 64, height: 48, fill: (red: 200, green: 80, blue: 40, alpha: 255))
        return try ImageEncoder.heif(image, quality: 70, exif: exif.tiffPayload())
    }

    static func metadata(_ bytes: [UInt8]) throws -> ImageMetadata? {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: bytes, fileLength: bytes.count) else {
            return nil
        }
        return metadata
    }

    @Test("the EXIF item of a HEIC is found and its GPS removed in place; the image decodes the same")
    func stripsHEIF() throws {
        guard ImageEncoder.canEncodeHEIF else {
            Issue.record("this libheif cannot encode HEVC: the HEIF strip is untested here")
            return
        }
        let heic = try Self.located()
        #expect(try Self.metadata(heic)?.location != nil)
        let items = try HEIFLocation.items(head: heic)
        #expect(items.map(\.kind) == [.exif])
        var stripped = heic
        for item in items {
            let bytes = Array(heic[item.range])
            for patch in try HEIFLocation.patches(item: bytes, kind: item.kind, at: item.range.lowerBound) {
                stripped.replaceSubrange(patch.offset..<(patch.offset + patch.bytes.count), with: patch.bytes)
            }
        }
        #expect(stripped.count == heic.count && stripped != heic)
        let after = try #require(try Self.metadata(stripped))
        #expect(after.location == nil)
        #expect(after.captureDate == Date(timeIntervalSince1970: 1_700_000_000))
        let request = DecodeRequest(targetWidth: 64, targetHeight: 48, resizeMode: .none)
        #expect(
            try ImageDecoder.decode(data: stripped, request: request).image.pixels
                == ImageDecoder.decode(data: heic, request: request).image.pixels)
        // Stripped again: nothing left to do.
        let again = try HEIFLocation.items(head: stripped).flatMap {
            try HEIFLocation.patches(item: Array(stripped[$0.range]), kind: $0.kind, at: $0.range.lowerBound)
        }
        #expect(again.isEmpty)
    }

    @Test("a meta box too short for a full box's version and flags is corrupt, not a crash")
    func metaWithoutVersion() {
        for size in [0, 8, 9, 11] {
            // Size 0: the box runs to the end of the bytes (here one byte of payload).
            let meta: [UInt8] = [0, 0, 0, UInt8(size)] + Array("meta".utf8) + [4, 0, 0].prefix(max(1, size - 8))
            #expect(throws: ImageError.self) { try HEIFLocation.items(head: meta) }
        }
    }

    @Test("an iloc extent longer than any file (a 64-bit length of 2^63 or more) is corrupt, not an overflow")
    func hugeExtentLength() {
        for length: UInt64 in [1 << 63, .max, UInt64(Int.max)] {
            // iloc version 0: offset and length 8 bytes, no base offset; one item with one extent at offset 16.
            var iloc: [UInt8] = [0, 0, 0, 0, 0x88, 0x00, 0, 1, 0, 1, 0, 0, 0, 1]
            iloc += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(16) >> (56 - 8 * $0)) }
            iloc += (0..<8).map { UInt8(truncatingIfNeeded: length >> (56 - 8 * $0)) }
            let ilocBox = [0, 0, 0, UInt8(8 + iloc.count)] + Array("iloc".utf8) + iloc
            let meta = [0, 0, 0, UInt8(12 + ilocBox.count)] + Array("meta".utf8) + [0, 0, 0, 0] + ilocBox
            #expect(throws: ImageError.self) { try HEIFLocation.items(head: meta) }
        }
    }

    @Test("a 64-bit box size that ends the box at Int.max ends the walk, without an overflow")
    func boxEndingAtIntMax() {
        for largeSize in [UInt64(Int.max), UInt64(Int.max) - 7, UInt64(Int.max) - 100] {
            let box =
                [0, 0, 0, 1] + Array("free".utf8)
                + (0..<8).map { UInt8(truncatingIfNeeded: largeSize >> (56 - 8 * $0)) }
            #expect(throws: ImageError.self) { try HEIFLocation.items(head: box + [UInt8](repeating: 0, count: 16)) }
        }
    }

    @Test("a meta box that lies about its sizes or item locations is a typed error, never a crash")
    func hostileHEIF() throws {
        guard ImageEncoder.canEncodeHEIF else { return }
        let heic = try Self.located()
        // Every single-byte corruption of the first 512 bytes: any outcome but a crash or a wrong range.
        for index in stride(from: 0, to: min(512, heic.count), by: 3) {
            var bytes = heic
            bytes[index] ^= 0xA5
            if let items = try? HEIFLocation.items(head: bytes) {
                for item in items where item.range.upperBound <= bytes.count {
                    _ = try? HEIFLocation.patches(
                        item: Array(bytes[item.range]), kind: item.kind, at: item.range.lowerBound)
                }
            }
        }
        #expect(throws: ImageError.self) { try HEIFLocation.items(head: Array(heic.prefix(40))) }
    }
}
