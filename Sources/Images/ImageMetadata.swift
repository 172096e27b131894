package import Foundation

/// A position from a file's GPS IFD: degrees north and east (south and west negative), metres above sea level.
package struct GPSLocation: Sendable, Hashable {
    package var latitude: Double
    package var longitude: Double
    package var altitude: Double?

    package init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}

/// What a file's headers say about its image, read without decoding pixels.
package struct ImageMetadata: Sendable, Hashable {
    package var format: ImageFormat
    /// The size as stored (before the EXIF orientation is applied).
    package var pixelWidth: Int
    package var pixelHeight: Int
    /// EXIF orientation 1...8; 1 when absent or invalid. HEIF reports 1: libheif applies its irot/imir
    /// transforms, and its pixel size is already the displayed one.
    package var orientation: Int
    /// DateTimeOriginal at OffsetTimeOriginal (UTC when there is no offset), else DateTime at OffsetTime.
    package var captureDate: Date?
    /// From the GPS IFD; nil when absent or invalid.
    package var location: GPSLocation?
    /// Where in the file IFD1's JPEG thumbnail lies; it starts with FFD8 and lies inside the EXIF segment.
    package var embeddedThumbnail: Range<Int>?
    /// The Live Photo identifier of an Apple camera's photo (its MakerNote), validated; nil without one.
    package var contentIdentifier: String?

    /// The size as displayed: the stored one, swapped for orientations 5...8.
    package var displayWidth: Int { orientation >= 5 ? pixelHeight : pixelWidth }
    package var displayHeight: Int { orientation >= 5 ? pixelWidth : pixelHeight }

    package init(
        format: ImageFormat, pixelWidth: Int, pixelHeight: Int, orientation: Int = 1, captureDate: Date? = nil,
        location: GPSLocation? = nil, embeddedThumbnail: Range<Int>? = nil
    ) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
        self.captureDate = captureDate
        self.location = location
        self.embeddedThumbnail = embeddedThumbnail
    }

    package enum Parse: Sendable {
        case parsed(ImageMetadata)
        /// The headers extend past the bytes given: call again with the file's first `byteCount` bytes.
        case needMore(byteCount: Int)
    }

    /// The most leading bytes `parse` will ask for.
    package static let maxHeadBytes = 1 << 20

    /// Parses the first bytes of a file. `.needMore(byteCount:)` when the headers (APP1 EXIF + SOF for JPEG;
    /// IHDR/eXIf for PNG; meta box for HEIF) extend past `head`; byteCount is how many leading bytes are needed,
    /// never more than `maxHeadBytes` (headers beyond that throw `.corrupt`) nor than `fileLength` (headers
    /// past the end of the file throw `.truncated`). Malformed EXIF throws `.corrupt`; a GPS IFD without a valid
    /// position gives a nil location.
    package static func parse(head: [UInt8], fileLength: Int?) throws(ImageError) -> Parse {
        func more(_ count: Int) throws(ImageError) -> Parse {
            if let fileLength, count > fileLength || head.count >= fileLength { throw .truncated }
            guard count <= maxHeadBytes else { throw .corrupt("headers extend past \(maxHeadBytes) bytes") }
            return .needMore(byteCount: count)
        }
        guard let format = ImageFormat.sniff(head) else {
            // A HEIF brand may be among an ftyp box's compatible brands: a head shorter than what `sniff` looks
            // at, of a longer file, is not yet known not to be an image.
            let window = min(ImageFormat.sniffLength, fileLength ?? ImageFormat.sniffLength)
            if head.count < window { return try more(window) }
            throw .unsupportedFormat
        }
        switch format {
        case .jpeg:
            switch try JPEGHeader.scan(head, throughScan: false) {
            case .needMore(let count): return try more(count)
            case .complete(let header):
                var metadata = ImageMetadata(format: .jpeg, pixelWidth: header.width!, pixelHeight: header.height!)
                if let payload = header.segments.lazy.compactMap({ JPEGHeader.exifPayload($0, in: head) }).first {
                    try metadata.apply(ExifFields(TIFFReader(bytes: head, range: payload)), payloadStart: payload)
                }
                return .parsed(metadata)
            }
        case .png:
            switch try PNGHeader.scan(head) {
            case .needMore(let count): return try more(count)
            case .complete(let header):
                var metadata = ImageMetadata(format: .png, pixelWidth: header.width, pixelHeight: header.height)
                if let chunk = header.chunks.first(where: { $0.type == "eXIf" }) {
                    try metadata.apply(ExifFields(TIFFReader(bytes: head, range: chunk.data)), payloadStart: chunk.data)
                }
                return .parsed(metadata)
            }
        case .heif:
            switch try HEIFHeader.parse(head, fileLength: fileLength) {
            case .needMore(let count): return try more(count)
            case .parsed(let metadata): return .parsed(metadata)
            }
        }
    }

    mutating func apply(_ exif: ExifFields, payloadStart payload: Range<Int>) {
        orientation = exif.orientation ?? 1
        if let original = exif.dateTimeOriginal, let date = ExifDate.parse(original, offset: exif.offsetTimeOriginal) {
            captureDate = date
        } else if let dateTime = exif.dateTime {
            captureDate = ExifDate.parse(dateTime, offset: exif.offsetTime)
        }
        location = exif.location
        contentIdentifier = exif.contentIdentifier
        embeddedThumbnail = exif.thumbnail.map {
            (payload.lowerBound + $0.lowerBound)..<(payload.lowerBound + $0.upperBound)
        }
    }

    /// The EXIF orientation of a file, 1 when it has none or its headers cannot be read (decoding does not fail
    /// for broken metadata).
    static func orientation(head: [UInt8], fileLength: Int?) -> Int {
        // try?: unreadable headers mean orientation 1 (as documented)
        guard case .parsed(let metadata)? = try? parse(head: head, fileLength: fileLength) else { return 1 }
        return metadata.orientation
    }
}
