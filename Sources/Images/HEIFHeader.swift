import CHeif

/// HEIF metadata: the top-level boxes are walked to the `meta` box, then libheif reads the prefix of the file
/// that holds it (it needs no pixel data for sizes and metadata items).
enum HEIFHeader {
    enum Result {
        case parsed(ImageMetadata)
        case needMore(byteCount: Int)
    }

    static func parse(_ head: [UInt8], fileLength: Int?) throws(ImageError) -> Result {
        var position = 0
        var metaEnd: Int?
        while metaEnd == nil {
            guard position + 8 <= head.count else {
                if let fileLength, position >= fileLength { throw .corrupt("HEIF: no meta box") }
                return .needMore(byteCount: position + 16)
            }
            var size =
                Int(head[position]) << 24 | Int(head[position + 1]) << 16 | Int(head[position + 2]) << 8
                | Int(head[position + 3])
            let type = String(decoding: head[(position + 4)..<(position + 8)], as: UTF8.self)
            if size == 1 {
                guard position + 16 <= head.count else { return .needMore(byteCount: position + 16) }
                var large: UInt64 = 0
                for i in 0..<8 { large = large << 8 | UInt64(head[position + 8 + i]) }
                guard large <= UInt64(Int32.max) else { throw .corrupt("HEIF: box of \(large) bytes") }
                size = Int(large)
            } else if size == 0 {
                size = (fileLength ?? head.count) - position
            }
            guard size >= 8 else { throw .corrupt("HEIF: box of \(size) bytes") }
            if type == "meta" {
                guard position + size <= head.count else { return .needMore(byteCount: position + size) }
                metaEnd = position + size
            }
            position += size
        }
        // libheif checks item extents against the file's length, not the head's; the head must stay alive
        // while libheif reads it, so everything happens inside the closure. libheif allocates each metadata
        // item's declared length before reading it (past the head, as zeros): of a file of unknown length, no
        // more than the most that could be asked for is offered (an item beyond makes the open fail).
        let fileSize = fileLength ?? max(head.count, ImageMetadata.maxHeadBytes)
        return try head.withUnsafeBufferPointer { (bytes) throws(ImageError) -> Result in
            var message = [CChar](repeating: 0, count: 256)
            var needed = 0
            guard
                let file = cheif_open_prefix(
                    bytes.baseAddress, bytes.count, fileSize, &needed, &message, message.count)
            else {
                // libheif read past the head (zeros) before it failed: it may not fail on the bytes themselves.
                if needed > head.count, needed <= ImageMetadata.maxHeadBytes, needed <= fileSize {
                    return .needMore(byteCount: needed)
                }
                throw .corrupt("HEIF: \(cText(message))")
            }
            defer { cheif_close(file) }
            return try metadata(file, headCount: head.count, fileLength: fileLength)
        }
    }

    private static func metadata(_ file: OpaquePointer, headCount: Int, fileLength: Int?) throws(ImageError) -> Result {
        // libheif read past the head (as zeros: a later box, the Exif item): what it answered may not be the
        // file's. Ask for the bytes it read, within the cap.
        func readPastHead() -> Int? {
            let needed = cheif_prefix_needed(file)
            guard needed > headCount, needed <= ImageMetadata.maxHeadBytes, fileLength.map({ needed <= $0 }) ?? true
            else { return nil }
            return needed
        }
        if let needed = readPastHead() { return .needMore(byteCount: needed) }
        var width: Int32 = 0
        var height: Int32 = 0
        cheif_primary_size(file, &width, &height)
        guard width > 0, height > 0 else { throw .corrupt("HEIF: primary image of \(width)x\(height)") }
        var metadata = ImageMetadata(format: .heif, pixelWidth: Int(width), pixelHeight: Int(height))
        let exifSize = cheif_exif_size(file)
        if exifSize > 8, exifSize <= ImageMetadata.maxHeadBytes {
            var block = [UInt8](repeating: 0, count: exifSize)
            var fields: ExifFields?
            var payload = 0..<0
            if cheif_exif_copy(file, &block, block.count) == CHEIF_OK {
                // The block starts with a 4-byte offset from its end to the TIFF header.
                let skip = Int(block[0]) << 24 | Int(block[1]) << 16 | Int(block[2]) << 8 | Int(block[3])
                if skip >= 0, skip < block.count - 4 {
                    payload = (4 + skip)..<block.count
                    // try?: broken EXIF reads as none (metadata never fails a decode)
                    fields = try? ExifFields(TIFFReader(bytes: block, range: payload))
                }
            }
            // Read past the head beyond the cap, the EXIF may be part zeros: the metadata goes without it.
            if let fields, cheif_prefix_needed(file) <= headCount { metadata.apply(fields, payloadStart: payload) }
        }
        if let needed = readPastHead() { return .needMore(byteCount: needed) }
        metadata.orientation = 1
        metadata.embeddedThumbnail = nil
        return .parsed(metadata)
    }
}
