import AWSSigV4
import Essentials
import Foundation
import Hashing
import Images
import NIOCore
import Video

/// A deterministic sample photo library in the bucket layout of DESIGN.md:
///
/// - `originals/<yyyy>/<mm>/IMG_<n>.jpg` — real JPEG photos of varied dimensions (mostly), with EXIF:
///   the capture date (DateTimeOriginal at a varied time-zone offset), the orientation (1–8 in turn, the
///   stored pixels rotated so that they display upright), a GPS position on about a third and an embedded
///   IFD1 thumbnail on about half; or `VID_<n>.mov`, a real H.264 movie (``SyntheticMovie``, its `moov` at
///   either end, its facts in its fields as the library uploads them), or `AUD_<n>.m4a` with placeholder bytes. Each has
///   `x-amz-meta-creation-date` (ISO 8601), `pixel-width`, `pixel-height` (as stored), `media-type`
///   (`image`/`video`/`audio`) and `orientation` (1–8; 1 for video and audio);
/// - `thumbnails/<same path>.jpg` — a real JPEG rendition (upright, at most 160 px) for about 85 % of the assets;
/// - optionally a few large originals (`originals/large/VID_L<n>.mov`), written in 1 MiB pieces, and large
///   photos (`originals/large/IMG_L<n>.jpg`, 6000 x 4000 JPEGs).
///
/// The same `seed` always produces the same keys, metadata and bytes.
public enum SampleLibrary {
    /// What a seeding run wrote.
    public struct Summary: Sendable, Hashable {
        /// Originals written (including the large ones).
        public var originals: Int
        /// Thumbnails written.
        public var thumbnails: Int
        /// Total bytes written.
        public var bytes: Int64
    }

    /// Seeds a running (or not yet started) server's storage directly; the bucket is created when missing.
    /// - Parameters:
    ///   - server: The server to fill.
    ///   - bucket: The bucket name.
    ///   - assets: How many assets.
    ///   - large: How many large originals to add.
    ///   - largeSize: The size of each large original in bytes.
    ///   - largePhotos: How many 24 MP (6000 x 4000) JPEG photos to add (each takes a second or so to make).
    ///   - seed: The generator's seed.
    /// - Throws: ``S3Error`` (`InvalidBucketName`, or `InternalError` on a storage failure).
    @discardableResult
    public static func seed(
        into server: FakeS3Server, bucket: String = "photos", assets: Int, large: Int = 0,
        largeSize: Int64 = 300 << 20, largePhotos: Int = 0, seed: UInt64 = 1
    ) throws -> Summary {
        try fill(
            server.core.store, bucket: bucket, assets: assets, large: large, largeSize: largeSize,
            largePhotos: largePhotos, seed: seed)
    }

    /// Seeds a disk storage root (created when missing). Do not run while a server serves the same root:
    /// a running server does not see objects added behind its back until it restarts.
    /// - Parameters: See ``seed(into:bucket:assets:large:largeSize:largePhotos:seed:)``; `root` is the storage
    ///   root.
    @discardableResult
    public static func seed(
        root: URL, bucket: String = "photos", assets: Int, large: Int = 0, largeSize: Int64 = 300 << 20,
        largePhotos: Int = 0, seed: UInt64 = 1
    ) throws -> Summary {
        try fill(
            ObjectStore(storage: .disk(root: root)), bucket: bucket, assets: assets, large: large,
            largeSize: largeSize, largePhotos: largePhotos, seed: seed)
    }

    static func fill(
        _ store: ObjectStore, bucket: String, assets: Int, large: Int, largeSize: Int64, largePhotos: Int,
        seed: UInt64
    ) throws(S3Error) -> Summary {
        if !store.bucketExists(bucket) { try store.createBucket(bucket) }
        var rng = SplitMix64(seed: seed)
        var summary = Summary(originals: 0, thumbnails: 0, bytes: 0)
        let base = Date(timeIntervalSince1970: 1_420_070_400)  // 2015-01-01
        for n in 1...max(1, assets) where n <= assets {
            let created = base + TimeInterval(rng.next() % (10 * 365 * 86_400))
            let (year, month) = yearMonth(created)
            let roll = rng.next() % 100
            let mediaType = roll < 90 ? "image" : (roll < 97 ? "video" : "audio")
            let orientation = mediaType == "image" ? (n - 1) % 8 + 1 : 1
            let width = 16 + Int(rng.next() % 1_009)
            let height = 16 + Int(rng.next() % 761)
            let number = String(format: "%05d", n)
            let name: String
            let data: Data
            let contentType: String
            switch mediaType {
            case "image":
                name = "IMG_\(number).jpg"
                data = try photo(
                    width: width, height: height, orientation: orientation, created: created, rng: &rng)
                contentType = "image/jpeg"
            case "video":
                name = "VID_\(number).mov"
                data = video(mediaBytes: 200_000 + Int(rng.next() % 2_000_000), shape: (width, height), rng: &rng)
                contentType = "video/quicktime"
            default:
                name = "AUD_\(number).m4a"
                data = noise(count: 50_000 + Int(rng.next() % 500_000), rng: &rng)
                contentType = "audio/mp4"
            }
            let path = "\(year)/\(String(format: "%02d", month))/\(name)"
            var metadata = [
                "creation-date": iso8601(created), "media-type": mediaType, "orientation": String(orientation),
            ]
            if mediaType == "video" {
                // As the library uploads a video: its container's facts in its fields (no reads at sync).
                let facts = videoFacts(shape: (width, height))
                metadata["pixel-width"] = String(facts.width)
                metadata["pixel-height"] = String(facts.height)
                metadata["duration"] = String(Double(facts.duration))
                metadata["video-codec"] = "avc1"
                metadata["frame-rate"] = String(Double(facts.frameRate))
            } else if mediaType != "audio" {
                metadata["pixel-width"] = String(width)
                metadata["pixel-height"] = String(height)
            }
            try put(store, bucket, "originals/\(path)", data, contentType, metadata)
            summary.originals += 1
            summary.bytes += Int64(data.count)
            if rng.next() % 100 < 85 {
                let thumb: Data
                if mediaType == "image" {
                    thumb = try thumbnail(of: data)
                } else {
                    let scale = max(1.0, Double(max(width, height)) / 160)
                    thumb = try jpeg(
                        pixels(
                            width: max(1, Int(Double(width) / scale)), height: max(1, Int(Double(height) / scale)),
                            rng: &rng), exif: nil)
                }
                try put(store, bucket, "thumbnails/\(path).jpg", thumb, "image/jpeg", [:])
                summary.thumbnails += 1
                summary.bytes += Int64(thumb.count)
            }
        }
        for n in 0..<large {
            let key = "originals/large/VID_L\(String(format: "%03d", n + 1)).mov"
            let created = base + TimeInterval(rng.next() % (10 * 365 * 86_400))
            try putLarge(
                store, bucket, key, size: largeSize, seed: rng.next(),
                metadata: [
                    "creation-date": iso8601(created), "media-type": "video", "orientation": "1",
                    "pixel-width": "3840", "pixel-height": "2160",
                ])
            summary.originals += 1
            summary.bytes += largeSize
        }
        for n in 0..<largePhotos {
            let key = "originals/large/IMG_L\(String(format: "%03d", n + 1)).jpg"
            let created = base + TimeInterval(rng.next() % (10 * 365 * 86_400))
            let orientation = n % 8 + 1
            let data = try largePhoto(created: created, orientation: orientation, seed: rng.next())
            try put(
                store, bucket, key, data, "image/jpeg",
                [
                    "creation-date": iso8601(created), "media-type": "image", "orientation": String(orientation),
                    "pixel-width": "6000", "pixel-height": "4000",
                ])
            summary.originals += 1
            summary.bytes += Int64(data.count)
        }
        return summary
    }

    /// A JPEG photo with EXIF, `width` x `height` as stored. The stored pixels are the upright picture turned
    /// for `orientation`, so that a viewer applying the tag shows it upright. About a third carry a GPS
    /// position, about half an embedded thumbnail (of the stored pixels, as EXIF has it).
    private static func photo(
        width: Int, height: Int, orientation: Int, created: Date, rng: inout SplitMix64
    ) throws(S3Error) -> Data {
        // `width` x `height` is the stored size (as the metadata says); the picture is upright after turning.
        let swaps = orientation >= 5
        let upright = pixels(width: swaps ? height : width, height: swaps ? width : height, rng: &rng)
        let stored = turned(upright, for: orientation)
        var exif = ExifBuilder()
        exif.orientation = orientation
        exif.make = "CloudAssets"
        exif.model = "Sample Camera"
        let offsets = [0, 3600, -18_000, 19_800, 32_400, -28_800]
        exif.timeZoneOffsetSeconds = offsets[Int(rng.next() % UInt64(offsets.count))]
        exif.captureDate = created
        if rng.next() % 3 == 0 {
            let latitude = Double(rng.next() % 1_600_000) / 10_000 - 80
            let longitude = Double(rng.next() % 3_600_000) / 10_000 - 180
            exif.location = GPSLocation(
                latitude: latitude, longitude: longitude, altitude: Double(rng.next() % 3000) / 10)
        }
        if rng.next() % 2 == 0 {
            // EXIF thumbnails show the stored pixels (readers turn them like the main image).
            exif.thumbnailJPEG = [UInt8](try thumbnail(of: try jpeg(stored, exif: nil)))
        }
        return try jpeg(stored, exif: exif.tiffPayload())
    }

    /// A 6000 x 4000 JPEG written row by row.
    private static func largePhoto(created: Date, orientation: Int, seed: UInt64) throws(S3Error) -> Data {
        var exif = ExifBuilder()
        exif.orientation = orientation
        exif.captureDate = created
        var noise = seed | 1
        do {
            return Data(
                try ImageEncoder.jpeg(width: 6000, height: 4000, quality: 88, exif: exif.tiffPayload()) { y, row in
                    for x in 0..<6000 {
                        noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        let jitter = UInt8(truncatingIfNeeded: noise >> 60)
                        row[x * 4] = UInt8(truncatingIfNeeded: x * 255 / 6000) &+ jitter
                        row[x * 4 + 1] = UInt8(truncatingIfNeeded: y * 255 / 4000) &+ jitter
                        row[x * 4 + 2] = UInt8(truncatingIfNeeded: (x + y) * 128 / 10_000)
                        row[x * 4 + 3] = 255
                    }
                })
        } catch {
            throw S3Error(status: 500, code: "InternalError", message: "sample photo: \(error)")
        }
    }

    /// A photograph as a camera writes it, to put in a bucket as another tool would (no `x-amz-meta-*`): stored
    /// `width` x `height` (4000 x 3000) turned for EXIF orientation 6 (the camera held upright), with a capture
    /// date, a GPS position and an embedded 160 x 120 EXIF thumbnail. The picture, upright: a sky over a meadow
    /// with a sun at the top left. Written row by row.
    /// - Parameters:
    ///   - created: The capture date.
    ///   - latitude, longitude: Where it was taken.
    ///   - width, height: The stored size (displayed as `height` x `width`).
    public static func cameraPhoto(
        created: Date, latitude: Double, longitude: Double, width: Int = 4000, height: Int = 3000
    ) throws(S3Error) -> Data {
        // Displayed height x width; stored (sx, sy) shows at display (height - 1 - sy, sx).
        func colour(_ x: Int, _ y: Int, displayWidth: Int, displayHeight: Int) -> (UInt8, UInt8, UInt8) {
            let sunX = displayWidth / 5
            let sunY = displayHeight / 6
            let radius = displayWidth / 10
            if (x - sunX) * (x - sunX) + (y - sunY) * (y - sunY) < radius * radius { return (250, 200, 40) }
            if y < displayHeight * 11 / 20 {
                return (UInt8(90 + 60 * y / displayHeight), UInt8(150 + 60 * y / displayHeight), 235)
            }
            return (50, UInt8(150 - 60 * y / displayHeight), 60)
        }
        func storedPixels(width: Int, height: Int, into row: inout [UInt8], y: Int, noise: inout UInt64) {
            for x in 0..<width {
                noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let jitter = Int(noise >> 61)
                let (r, g, b) = colour(height - 1 - y, x, displayWidth: height, displayHeight: width)
                row[x * 4] = UInt8(min(255, Int(r) + jitter))
                row[x * 4 + 1] = UInt8(min(255, Int(g) + jitter))
                row[x * 4 + 2] = UInt8(min(255, Int(b) + jitter))
                row[x * 4 + 3] = 255
            }
        }
        do {
            var noise: UInt64 = 0x5DEE_CE66
            let (thumbWidth, thumbHeight) = (160, 120)
            var thumbPixels = [UInt8](repeating: 0, count: thumbWidth * thumbHeight * 4)
            var row = [UInt8](repeating: 0, count: thumbWidth * 4)
            for y in 0..<thumbHeight {
                storedPixels(width: thumbWidth, height: thumbHeight, into: &row, y: y, noise: &noise)
                thumbPixels.replaceSubrange((y * thumbWidth * 4)..<((y + 1) * thumbWidth * 4), with: row)
            }
            var exif = ExifBuilder()
            exif.orientation = 6
            exif.make = "CloudAssets"
            exif.model = "Sample Camera"
            exif.captureDate = created
            exif.timeZoneOffsetSeconds = 3600
            exif.location = GPSLocation(latitude: latitude, longitude: longitude, altitude: 35)
            exif.thumbnailJPEG = try ImageEncoder.jpeg(
                RGBAImage(width: thumbWidth, height: thumbHeight, bytesPerRow: thumbWidth * 4, pixels: thumbPixels),
                quality: 75)
            return Data(
                try ImageEncoder.jpeg(width: width, height: height, quality: 88, exif: exif.tiffPayload()) {
                    y, out in
                    var line = [UInt8](repeating: 0, count: width * 4)
                    storedPixels(width: width, height: height, into: &line, y: y, noise: &noise)
                    for index in 0..<(width * 4) { out[index] = line[index] }
                })
        } catch {
            throw S3Error(status: 500, code: "InternalError", message: "sample photo: \(error)")
        }
    }

    private static func jpeg(_ image: RGBAImage, exif: [UInt8]?) throws(S3Error) -> Data {
        do {
            return Data(try ImageEncoder.jpeg(image, quality: 85, exif: exif))
        } catch {
            throw S3Error(status: 500, code: "InternalError", message: "sample photo: \(error)")
        }
    }

    /// A rendition of a JPEG at most 160 px a side, upright (its EXIF orientation applied).
    private static func thumbnail(of original: Data) throws(S3Error) -> Data {
        do {
            let request = DecodeRequest(targetWidth: 160, targetHeight: 160)
            let image = try ImageDecoder.decode(data: [UInt8](original), request: request).image
            return Data(try ImageEncoder.jpeg(image, quality: 75))
        } catch {
            throw S3Error(status: 500, code: "InternalError", message: "sample thumbnail: \(error)")
        }
    }

    /// The stored pixels that display as `upright` under EXIF `orientation`.
    private static func turned(_ upright: RGBAImage, for orientation: Int) -> RGBAImage {
        guard orientation != 1 else { return upright }
        let (dw, dh) = (upright.width, upright.height)
        let (sw, sh) = orientation >= 5 ? (dh, dw) : (dw, dh)
        var out = [UInt8](repeating: 0, count: sw * sh * 4)
        upright.pixels.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { destination in
                for y in 0..<dh {
                    for x in 0..<dw {
                        let s = Orientation.storedPosition(
                            displayX: x, displayY: y, orientation: orientation, width: sw, height: sh)
                        let pixel = source.loadUnaligned(fromByteOffset: (y * dw + x) * 4, as: UInt32.self)
                        destination.storeBytes(of: pixel, toByteOffset: (s.y * sw + s.x) * 4, as: UInt32.self)
                    }
                }
            }
        }
        return RGBAImage(width: sw, height: sh, bytesPerRow: sw * 4, pixels: out)
    }

    /// A smooth gradient with a little noise: compresses like a photo would, roughly.
    private static func pixels(width: Int, height: Int, rng: inout SplitMix64) -> RGBAImage {
        let r0 = Int(rng.next() % 256)
        let g0 = Int(rng.next() % 256)
        let b0 = Int(rng.next() % 256)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        var noise = rng.next()
        pixels.withUnsafeMutableBufferPointer { p in
            for y in 0..<height {
                let g = UInt8(truncatingIfNeeded: g0 + y * 255 / height)
                var i = y * width * 4
                for x in 0..<width {
                    noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let jitter = UInt8(truncatingIfNeeded: noise >> 61)
                    p[i] = UInt8(truncatingIfNeeded: r0 + x * 255 / width) &+ jitter
                    p[i + 1] = g &+ jitter
                    p[i + 2] = UInt8(truncatingIfNeeded: b0 + (x + y) * 128 / (width + height))
                    i += 4
                }
            }
        }
        return RGBAImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
    }

    private static func put(
        _ store: ObjectStore, _ bucket: String, _ key: String, _ data: Data, _ contentType: String,
        _ metadata: [String: String]
    ) throws(S3Error) {
        let sink = try store.makeUpload(bucket: bucket, allocator: ByteBufferAllocator(), expectedSize: data.count)
        do {
            try sink.write(ByteBuffer(bytes: data))
        } catch {
            sink.abort()
            throw error
        }
        let info = ObjectInfo(
            key: key, size: Int64(data.count), etag: "\"\(SigV4.hex(Insecure.MD5.hash(data: data)))\"",
            lastModified: S3Service.now(), contentType: contentType, userMetadata: metadata)
        try store.commit(bucket: bucket, info: info, upload: sink)
    }

    /// Writes a large object in 1 MiB pieces (never whole in memory on disk storage).
    private static func putLarge(
        _ store: ObjectStore, _ bucket: String, _ key: String, size: Int64, seed: UInt64, metadata: [String: String]
    ) throws(S3Error) {
        let allocator = ByteBufferAllocator()
        let sink = try store.makeUpload(bucket: bucket, allocator: allocator, expectedSize: Int(size))
        var md5 = Insecure.MD5()
        var rng = SplitMix64(seed: seed)
        var buffer = allocator.buffer(capacity: 1 << 20)
        var remaining = size
        do {
            while remaining > 0 {
                let n = Int(min(Int64(1 << 20), remaining))
                buffer.clear()
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: n) { raw in
                    var i = 0
                    while i + 8 <= n {
                        raw.storeBytes(of: rng.next(), toByteOffset: i, as: UInt64.self)
                        i += 8
                    }
                    while i < n {
                        raw[i] = UInt8(truncatingIfNeeded: rng.next())
                        i += 1
                    }
                    return n
                }
                buffer.withUnsafeReadableBytes { md5.update(bufferPointer: $0) }
                try sink.write(buffer)
                remaining -= Int64(n)
            }
        } catch {
            sink.abort()
            throw error
        }
        let info = ObjectInfo(
            key: key, size: size, etag: "\"\(SigV4.hex(md5.finalize()))\"", lastModified: S3Service.now(),
            contentType: "video/quicktime", userMetadata: metadata)
        try store.commit(bucket: bucket, info: info, upload: sink)
    }

    /// A sample photo (PNG) like the seeded ones, for demos that import a file.
    /// - Parameters:
    ///   - width: Pixels across.
    ///   - height: Pixels down.
    ///   - seed: Different seeds give different images.
    public static func samplePNG(width: Int, height: Int, seed: UInt64) throws -> Data {
        var rng = SplitMix64(seed: seed)
        return Data(try ImageEncoder.png(pixels(width: width, height: height, rng: &rng)))
    }

    /// A sample video's facts, from the size drawn for its asset: 160 x 90 (H.264 of raw keyframes is large per
    /// pixel), 2 to 21 seconds at 30 fps, its `moov` after the media data for 55 of 100 (as phones write; one
    /// published sample of phone videos had 55 % so), a place on one in three.
    static func videoFacts(shape: (width: Int, height: Int)) -> (
        width: Int, height: Int, duration: Int, frameRate: Int, movieLast: Bool, location: String?
    ) {
        (
            160, 90, 2 + shape.width % 20, 30, shape.height % 100 < 55,
            shape.width % 3 == 0 ? "+\(40 + shape.height % 10).\(1000 + shape.width)+00\(shape.height % 10).5/" : nil
        )
    }

    /// A real, decodable movie (``SyntheticMovie``) of about `mediaBytes`, drawing from `rng` what the noise it
    /// replaced drew, so that every other sample asset stays as it was.
    private static func video(mediaBytes: Int, shape: (width: Int, height: Int), rng: inout SplitMix64) -> Data {
        rng.skip(mediaBytes)
        let facts = videoFacts(shape: shape)
        return Data(
            SyntheticMovie.make(
                duration: facts.duration, width: facts.width, height: facts.height, frameRate: facts.frameRate,
                mediaBytes: mediaBytes, movieLast: facts.movieLast, location: facts.location, decodable: true))
    }

    private static func noise(count: Int, rng: inout SplitMix64) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count { bytes[i] = UInt8(truncatingIfNeeded: rng.next() >> 24) }
        return Data(bytes)
    }

    private static func yearMonth(_ date: Date) -> (Int, Int) {
        let iso = iso8601(date)
        return (Int(iso.prefix(4))!, Int(iso.dropFirst(5).prefix(2))!)
    }

    private static func iso8601(_ date: Date) -> String {
        String(HTTPDate.iso8601(date).prefix(19)) + "Z"
    }
}
