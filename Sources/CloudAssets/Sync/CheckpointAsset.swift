package import AssetStore
import Essentials
package import Foundation

/// One asset of a checkpoint: the bucket's state of its original and its shared properties.
///
/// A part holds one line per asset, 19 tab-separated fields in this order: key, size, ETag, Last-Modified (ms,
/// empty when no listing showed it yet), content type, creation and modification dates (ms), media type
/// (`image`, `video`, `audio` or empty), pixel width, height, orientation, thumbnail key, size and ETag, SHA-256,
/// sidecar ETag, the sidecar's JSON (empty without shared properties), the location (`lat,lon[,alt]`, empty when
/// unknown), `1` when the object's own headers were not read yet (else empty), and a video's container facts
/// (`duration;codec;frame rate`, empty for anything else). Lines of 17 and 19 fields (written before the last
/// fields existed) are read without them; a video read from such a line has its container read by the next sync. Text fields escape `\`, tab and newline
/// as `\\`, `\t`, `\n`; an empty text field is absent. (Lines, not JSON objects: a million of them parse in
/// about a second where a JSON decoder takes ten.)
package struct CheckpointAsset: Sendable {
    package var key: String
    package var size: Int64
    package var etag: String
    /// Milliseconds; nil when no listing showed the object yet.
    package var lastModified: Int64?
    package var contentType: String?
    package var created: Int64
    package var modified: Int64
    package var mediaType: String?
    package var width: Int
    package var height: Int
    package var orientation: Int
    package var thumbnailKey: String?
    package var thumbnailSize: Int64?
    package var thumbnailETag: String?
    package var sha256: String?
    package var sidecarETag: String?
    package var sidecar: SharedMetadata.Sidecar?
    package var location: AssetLocation?
    package var metadataFill = MetadataFill.complete
    /// A video's length (seconds), codec and frame rate, as the 20th field carries them.
    package var video: (duration: Double, codec: String?, frameRate: Double)?

    package init(_ record: AssetRecord) {
        key = record.key
        size = record.size
        etag = record.etag
        lastModified =
            record.lastModified == AssetRecord.notListedYet
            ? nil : Int64(record.lastModified.timeIntervalSince1970 * 1000)
        contentType = record.contentType
        created = Int64((record.creationDate.timeIntervalSince1970 * 1000).rounded())
        modified = Int64((record.modificationDate.timeIntervalSince1970 * 1000).rounded())
        mediaType = record.mediaType.metadataValue
        width = record.pixelWidth
        height = record.pixelHeight
        orientation = record.orientation
        thumbnailKey = record.thumbnailKey
        thumbnailSize = record.thumbnailSize
        thumbnailETag = record.thumbnailETag
        sha256 = record.contentSHA256
        sidecarETag = record.sidecarETag
        location = record.location
        metadataFill = record.metadataFill
        if record.mediaType == .video, record.duration > 0 || record.videoCodec != nil {
            video = (record.duration, record.videoCodec, record.frameRate)
        }
        let shared = SharedMetadata(record: record)
        sidecar = shared.stamps.isEmpty ? nil : shared.sidecar(originalKey: record.key, sha256: record.contentSHA256)
    }

    /// The asset's line, without its newline.
    package var line: Data {
        // Built as bytes, then one `Data` (a `Data` appended to a byte at a time costs a call per byte).
        var out: [UInt8] = []
        out.reserveCapacity(160)
        func text(_ value: String?) {
            guard let value else { return }
            guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A }) else {
                out.append(contentsOf: value.utf8)
                return
            }
            for byte in value.utf8 {
                switch byte {
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x09: out.append(contentsOf: [0x5C, 0x74])
                case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
                default: out.append(byte)
                }
            }
        }
        func number<N: BinaryInteger>(_ value: N?) {
            if let value { out.append(contentsOf: String(value).utf8) }
        }
        let sidecarJSON = sidecar.map { String(decoding: SharedMetadata.encode($0), as: UTF8.self) }
        text(key)
        out.append(0x09)
        number(size)
        out.append(0x09)
        text(etag)
        out.append(0x09)
        number(lastModified)
        out.append(0x09)
        text(contentType)
        out.append(0x09)
        number(created)
        out.append(0x09)
        number(modified)
        out.append(0x09)
        text(mediaType)
        out.append(0x09)
        number(width)
        out.append(0x09)
        number(height)
        out.append(0x09)
        number(orientation)
        out.append(0x09)
        text(thumbnailKey)
        out.append(0x09)
        number(thumbnailSize)
        out.append(0x09)
        text(thumbnailETag)
        out.append(0x09)
        text(sha256)
        out.append(0x09)
        text(sidecarETag)
        out.append(0x09)
        text(sidecarJSON)
        out.append(0x09)
        text(location?.serialized)
        out.append(0x09)
        text(metadataFill == .complete ? nil : String(metadataFill.rawValue))
        out.append(0x09)
        text(video.map { "\($0.duration);\($0.codec ?? "");\($0.frameRate)" })
        return Data(out)
    }

    /// Parses a line; nil when it is not one.
    package init?(line: Data.SubSequence) {
        guard let parsed = line.withUnsafeBytes({ CheckpointAsset(line: $0) }) else { return nil }
        self = parsed
    }

    /// Parses a line held in raw bytes (the restore's path: no `Data` slice per line or per field).
    package init?(line: UnsafeRawBufferPointer) {
        // Field boundaries as offsets, on the stack: at most 20 fields (17 and 19 in the earlier formats).
        var starts = InlineArray<20, Int>(repeating: 0)
        var ends = InlineArray<20, Int>(repeating: 0)
        var count = 0
        var start = 0
        for index in 0..<line.count where line[index] == 0x09 {
            guard count < 19 + 1 else { return nil }
            starts[count] = start
            ends[count] = index
            count += 1
            start = index + 1
        }
        guard count < 19 + 1 else { return nil }
        starts[count] = start
        ends[count] = line.count
        count += 1
        guard count == 17 || count == 19 || count == 20 else { return nil }
        func field(_ i: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: line[starts[i]..<ends[i]])
        }
        // A field that ends inside an escape (a lone trailing backslash) was not written by a library: the line is
        // refused (read as an empty field, it would not survive being written again).
        var danglingEscape = false
        func text(_ i: Int) -> String? {
            let field = field(i)
            guard !field.isEmpty else { return nil }
            guard field.contains(0x5C) else { return String(decoding: field, as: UTF8.self) }
            var bytes: [UInt8] = []
            var escaped = false
            for byte in field {
                if escaped {
                    bytes.append(byte == 0x74 ? 0x09 : byte == 0x6E ? 0x0A : byte)
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else {
                    bytes.append(byte)
                }
            }
            if escaped { danglingEscape = true }
            return String(decoding: bytes, as: UTF8.self)
        }
        func number(_ i: Int) -> Int64? {
            let field = field(i)
            guard !field.isEmpty, field.count <= 19 else { return nil }
            var value: Int64 = 0
            var negative = false
            for (offset, byte) in field.enumerated() {
                if offset == 0 && byte == 0x2D {
                    negative = true
                    continue
                }
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                // Nineteen digits may spell more than Int64 holds: not a number.
                let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
                let (sum, carried) = times.addingReportingOverflow(Int64(byte - 0x30))
                guard !overflowed, !carried else { return nil }
                value = sum
            }
            return negative ? -value : value
        }
        guard let key = text(0), let size = number(1), let created = number(5), let modified = number(6) else {
            return nil
        }
        self.key = key
        self.size = size
        etag = text(2) ?? ""
        lastModified = number(3)
        contentType = text(4)
        self.created = created
        self.modified = modified
        mediaType = text(7)
        width = Int(number(8) ?? 0)
        height = Int(number(9) ?? 0)
        orientation = Int(number(10) ?? 1)
        thumbnailKey = text(11)
        thumbnailSize = number(12)
        thumbnailETag = text(13)
        sha256 = text(14)
        sidecarETag = text(15)
        if let json = text(16) {
            guard let decoded = SharedMetadata.decode(Data(json.utf8)) else { return nil }
            sidecar = decoded
        } else {
            sidecar = nil
        }
        if count >= 19 {
            location = text(17).flatMap(AssetLocation.init(serialized:))
            metadataFill = text(18).flatMap { Int($0) }.flatMap(MetadataFill.init(rawValue:)) ?? .complete
        }
        if count == 20, let facts = text(19) {
            let parts = facts.split(separator: ";", omittingEmptySubsequences: false)
            guard parts.count == 3, let duration = Double(parts[0]), duration.isFinite, duration >= 0,
                duration < 1e9, let frameRate = Double(parts[2]), frameRate.isFinite, frameRate >= 0,
                frameRate < 10_000, parts[1].utf8.count <= 16, parts[1].allSatisfy(\.isASCII)
            else { return nil }
            video = (duration, parts[1].isEmpty ? nil : String(parts[1]), frameRate)
        }
        if danglingEscape { return nil }
    }

    /// The catalog row for this asset (cloud only).
    package var record: AssetRecord {
        let date = { (ms: Int64) in Date(timeIntervalSince1970: Double(ms) / 1000) }
        var record = AssetRecord(
            key: key, size: size, etag: etag, lastModified: lastModified.map(date) ?? AssetRecord.notListedYet,
            contentType: contentType, creationDate: date(created), modificationDate: date(modified),
            mediaType: mediaType.flatMap(MediaType.init(metadataValue:)) ?? MediaType(guessingFrom: key),
            pixelWidth: max(0, width), pixelHeight: max(0, height),
            orientation: (1...8).contains(orientation) ? orientation : 1,
            thumbnailKey: thumbnailKey, thumbnailSize: thumbnailSize, thumbnailETag: thumbnailETag)
        record.contentSHA256 = sha256
        record.sidecarETag = sidecarETag
        record.location = location
        record.metadataFill = metadataFill
        if record.mediaType == .video {
            if let video {
                (record.duration, record.videoCodec, record.frameRate) = video
            } else if metadataFill == .complete, record.uploadState == .uploaded {
                // A line without the container's facts (an earlier format): the next sync reads them.
                record.metadataFill = .imageHeaders
            }
        }
        if let sidecar { SharedMetadata(sidecar: sidecar, learnedAt: Date()).apply(to: &record) }
        return record
    }
}
