import CTurboJPEG
import Foundation
import Images

extension FuzzCatalog {
    /// `ImageMetadata.parse` on any bytes (JPEG segments, the TIFF/EXIF reader, PNG chunks, the HEIF boxes and
    /// libheif's reading of them). The fields keep their documented ranges; reading a file head by head, as
    /// `ImageDecoder.probe` and the library do, asks for more within the file and the cap and ends where reading the
    /// whole file does; and a JPEG's size is the one libjpeg reads from the same header.
    static let imageMetadata = FuzzTarget(
        name: "image-metadata",
        summary: "ImageMetadata.parse: fields in range, growing heads agree with the whole file, JPEG size = libjpeg's",
        maxLength: 4096,
        cpuMinutesGoal: 30,
        seeds: { ImageSeeds.jpegs + ImageSeeds.pngs + ImageSeeds.heics + ImageSeeds.heifContainers },
        check: { bytes throws(FuzzFailure) in
            let whole = MetadataOutcome(bytes, fileLength: bytes.count)
            switch whole {
            case .needMore(let count):
                throw FuzzFailure("the whole file (\(bytes.count) bytes) asks for its first \(count) bytes")
            case .parsed(let metadata):
                try checkFields(metadata, of: bytes)
                try checkAgainstLibjpeg(metadata, bytes)
            case .failed:
                break
            }

            // Head by head, from 16 bytes: each answer asks for more than it had, within the file and the cap.
            var head = Array(bytes.prefix(16))
            var outcome = MetadataOutcome(head, fileLength: bytes.count)
            while case .needMore(let count) = outcome {
                try expect(
                    count > head.count && count <= bytes.count && count <= ImageMetadata.maxHeadBytes,
                    "a head of \(head.count) bytes of a \(bytes.count)-byte file asks for \(count)")
                head = Array(bytes.prefix(count))
                outcome = MetadataOutcome(head, fileLength: bytes.count)
            }
            try expect(
                outcome.sameResult(as: whole),
                "read head by head (to \(head.count) bytes): \(outcome); the whole file: \(whole)")

            // A stream of unknown length: the bytes at hand are read, or more of them asked for.
            let unknown = MetadataOutcome(bytes, fileLength: nil)
            switch unknown {
            case .needMore(let count):
                try expect(
                    count > bytes.count && count <= ImageMetadata.maxHeadBytes,
                    "\(bytes.count) bytes of unknown length ask for \(count)")
            case .parsed(let metadata):
                try checkFields(metadata, of: bytes)
                if case .parsed(let known) = whole {
                    try expect(metadata == known, "unknown length: \(metadata); known length: \(known)")
                }
            case .failed:
                break
            }
        })

    /// The documented ranges of every field of a parse of `bytes`.
    static func checkFields(_ metadata: ImageMetadata, of bytes: [UInt8]) throws(FuzzFailure) {
        try expect(metadata.format == ImageFormat.sniff(bytes), "format \(metadata.format) for other magic")
        try expect((1...8).contains(metadata.orientation), "orientation \(metadata.orientation)")
        try expect(
            metadata.pixelWidth > 0 && metadata.pixelHeight > 0,
            "pixel size \(metadata.pixelWidth)x\(metadata.pixelHeight)")
        if let location = metadata.location {
            try expect(
                location.latitude.isFinite && abs(location.latitude) <= 90 && location.longitude.isFinite
                    && abs(location.longitude) <= 180 && location.altitude.map(\.isFinite) != false,
                "location \(location)")
        }
        if let date = metadata.captureDate {
            try expect(date.timeIntervalSince1970.isFinite, "capture date \(date.timeIntervalSince1970)")
        }
        if let thumbnail = metadata.embeddedThumbnail {
            try expect(
                thumbnail.lowerBound >= 0 && thumbnail.count >= 2 && thumbnail.upperBound <= bytes.count
                    && bytes[thumbnail.lowerBound] == 0xFF && bytes[thumbnail.lowerBound + 1] == 0xD8,
                "thumbnail at \(thumbnail) of \(bytes.count) bytes")
        }
        if metadata.format == .heif {
            try expect(
                metadata.orientation == 1 && metadata.embeddedThumbnail == nil,
                "HEIF with orientation \(metadata.orientation), thumbnail \(metadata.embeddedThumbnail as Any)")
        }
    }

    /// When libjpeg reads the same bytes' header, its image size is the stored size the metadata reports
    /// (`pixelWidth` x `pixelHeight` are before the EXIF orientation, as libjpeg's are).
    static func checkAgainstLibjpeg(_ metadata: ImageMetadata, _ bytes: [UInt8]) throws(FuzzFailure) {
        guard metadata.format == .jpeg else { return }
        let header: (Int, Int)? = bytes.withUnsafeBufferPointer { buffer in
            guard let decoder = cj_decoder_create_memory(buffer.baseAddress, buffer.count) else { return nil }
            defer { cj_decoder_destroy(decoder) }
            var width: Int32 = 0
            var height: Int32 = 0
            var components: Int32 = 0
            guard cj_decoder_read_header(decoder, &width, &height, &components) == CJ_OK else { return nil }
            return (Int(width), Int(height))
        }
        guard let (width, height) = header else { return }
        try expect(
            width == metadata.pixelWidth && height == metadata.pixelHeight,
            "libjpeg reads \(width)x\(height); the metadata says \(metadata.pixelWidth)x\(metadata.pixelHeight)")
    }
}

/// One answer of `ImageMetadata.parse`, comparable.
enum MetadataOutcome: CustomStringConvertible {
    case parsed(ImageMetadata)
    case needMore(Int)
    case failed(ImageError)

    init(_ head: [UInt8], fileLength: Int?) {
        do {
            switch try ImageMetadata.parse(head: head, fileLength: fileLength) {
            case .parsed(let metadata): self = .parsed(metadata)
            case .needMore(let count): self = .needMore(count)
            }
        } catch {
            self = .failed(error)
        }
    }

    /// The same metadata, or both failed (for reasons that may be worded differently).
    func sameResult(as other: MetadataOutcome) -> Bool {
        switch (self, other) {
        case (.parsed(let a), .parsed(let b)): return a == b
        case (.failed, .failed): return true
        default: return false
        }
    }

    var description: String {
        switch self {
        case .parsed(let metadata): return "parsed \(metadata)"
        case .needMore(let count): return "needs \(count) bytes"
        case .failed(let error): return "throws \(error)"
        }
    }
}
