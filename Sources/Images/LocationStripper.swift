import CHeif

/// Removes GPS positions from JPEG, PNG and HEIF files without changing their length or their pixels.
package enum LocationStripper {
    /// The same bytes with every GPS tag removed and the file still valid and decoding to identical pixels: same
    /// length, in place: JPEG APP1 EXIF: IFD0's GPSInfo (0x8825) entry removed (entries and the next-IFD
    /// pointer shifted, count decremented, freed slot zeroed) and the GPS IFD's bytes (entries and values)
    /// zeroed; XMP packets' exif:GPS* attributes/elements blanked with spaces; PNG eXIf chunk (and an uncompressed
    /// XMP iTXt chunk) likewise with CRC recomputed. Returns nil when there was nothing to strip. Hostile/corrupt
    /// EXIF -> throws (caller decides), never crashes. HEIF: the Exif item's TIFF payload is stripped the same
    /// way and XMP items blanked, where they lie in the file (an item split into several extents throws
    /// `.unsupportedFormat`).
    ///
    /// Unlike `locationPatches(head:)`, this also strips the EXIF and XMP of JPEG images stored after the
    /// primary one (MPF secondary images such as depth maps, found by their SOI + APP marker after the first
    /// scan); a candidate whose header does not parse is left as it is.
    package static func strippingLocation(from bytes: [UInt8]) throws(ImageError) -> [UInt8]? {
        var patches = try patches(bytes, isWholeFile: true)
        if ImageFormat.sniff(bytes) == .jpeg { patches += try trailingImagePatches(bytes) }
        guard !patches.isEmpty else { return nil }
        var result = bytes
        for patch in patches {
            result.replaceSubrange(patch.offset..<(patch.offset + patch.bytes.count), with: patch.bytes)
        }
        return result
    }

    /// The byte ranges to overwrite in a file, with their new contents, computed from its head (so a large file
    /// can be fixed with pwrite in place without reading it all). Ranges all lie inside `head`. `head` must
    /// reach the first scan (JPEG) or the first IDAT (PNG), else `.truncated`; empty when there is no location.
    /// Covers the primary image's headers only (see `strippingLocation(from:)` for images stored after it).
    package static func locationPatches(head: [UInt8]) throws(ImageError) -> [(offset: Int, bytes: [UInt8])] {
        try patches(head, isWholeFile: false)
    }

    private static func patches(
        _ head: [UInt8], isWholeFile: Bool
    ) throws(ImageError) -> [(offset: Int, bytes: [UInt8])] {
        switch ImageFormat.sniff(head) {
        case .jpeg: return try jpegPatches(head)
        case .png: return try pngPatches(head)
        case .heif: return try heifPatches(head)
        case nil: throw .unsupportedFormat
        }
    }

    private static func jpegPatches(_ head: [UInt8]) throws(ImageError) -> [(offset: Int, bytes: [UInt8])] {
        guard case .complete(let header) = try JPEGHeader.scan(head, throughScan: true) else { throw .truncated }
        var patches: [(offset: Int, bytes: [UInt8])] = []
        for segment in header.segments where segment.marker == 0xE1 {
            var bytes = Array(head[segment.start..<segment.end])
            let shifted = JPEGHeader.Segment(
                marker: segment.marker, start: 0, dataStart: segment.dataStart - segment.start,
                end: segment.end - segment.start)
            var changed = false
            if let payload = JPEGHeader.exifPayload(shifted, in: bytes) {
                changed = try stripTIFF(&bytes, payload: payload)
            } else if JPEGHeader.isXMP(shifted, in: bytes) {
                changed = try blankXMP(&bytes, from: shifted.dataStart + JPEGHeader.xmpIdentifier.count)
            }
            if changed { patches.append((segment.start, bytes)) }
        }
        return patches
    }

    /// Patches for JPEG images after the primary one's first scan (entropy-coded data cannot hold FF D8).
    private static func trailingImagePatches(_ bytes: [UInt8]) throws(ImageError) -> [(offset: Int, bytes: [UInt8])] {
        guard case .complete(let primary) = try JPEGHeader.scan(bytes, throughScan: true),
            var i = primary.scanStart
        else { return [] }
        var patches: [(offset: Int, bytes: [UInt8])] = []
        while i + 4 <= bytes.count {
            guard bytes[i] == 0xFF, bytes[i + 1] == 0xD8, bytes[i + 2] == 0xFF, (0xE0...0xEF).contains(bytes[i + 3])
            else {
                i += 1
                continue
            }
            // A header is at most 1 MiB here; a candidate that does not walk to its scan is not an image.
            let candidate = Array(bytes[i..<min(bytes.count, i + ImageMetadata.maxHeadBytes)])
            // try?: a candidate that does not parse is not an image: skipped
            guard let found = try? jpegPatches(candidate),
                // try?: no complete header in the candidate: not an image, skipped
                case .complete(let header)? = try? JPEGHeader.scan(candidate, throughScan: true)
            else {
                i += 2
                continue
            }
            patches += found.map { (i + $0.offset, $0.bytes) }
            i += header.scanStart ?? 2
        }
        return patches
    }

    /// Patches for a HEIF file's Exif and XMP items (located by `HEIFLocation`); items past the head throw
    /// `.truncated`.
    private static func heifPatches(_ head: [UInt8]) throws(ImageError) -> [(offset: Int, bytes: [UInt8])] {
        var patches: [(offset: Int, bytes: [UInt8])] = []
        let items = try HEIFLocation.items(head: head)
        // Each item's patch is computed from the file's bytes: a later patch over an earlier one's bytes would
        // put back what that one removed.
        let ranges = items.map(\.range).sorted { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(ranges, ranges.dropFirst()) where a.overlaps(b) {
            throw .corrupt("HEIF: metadata items at \(a) and \(b) overlap")
        }
        for item in items {
            guard item.range.upperBound <= head.count else { throw .truncated }
            patches += try HEIFLocation.patches(
                item: Array(head[item.range]), kind: item.kind, at: item.range.lowerBound)
        }
        return patches
    }

    private static func pngPatches(_ head: [UInt8]) throws(ImageError) -> [(offset: Int, bytes: [UInt8])] {
        guard case .complete(let header) = try PNGHeader.scan(head) else { throw .truncated }
        var patches: [(offset: Int, bytes: [UInt8])] = []
        let xmpKeyword = Array("XML:com.adobe.xmp".utf8) + [0]
        for chunk in header.chunks where chunk.type == "eXIf" || chunk.type == "iTXt" {
            guard chunk.end <= head.count else { throw .truncated }
            var bytes = Array(head[chunk.start..<chunk.end])
            let data = (chunk.data.lowerBound - chunk.start)..<(chunk.data.upperBound - chunk.start)
            var changed = false
            if chunk.type == "eXIf" {
                changed = try stripTIFF(&bytes, payload: data)
            } else if data.count > xmpKeyword.count + 2,
                bytes[data.lowerBound..<(data.lowerBound + xmpKeyword.count)].elementsEqual(xmpKeyword),
                bytes[data.lowerBound + xmpKeyword.count] == 0
            {
                changed = try blankXMP(&bytes, from: data.lowerBound + xmpKeyword.count, end: data.upperBound)
            }
            if changed {
                let crc = PNGHeader.bigEndian32(PNGHeader.crc32(bytes[4..<data.upperBound]))
                bytes.replaceSubrange(data.upperBound..<(data.upperBound + 4), with: crc)
                patches.append((chunk.start, bytes))
            }
        }
        return patches
    }

    /// Removes the GPS IFD pointer from IFD0 and zeroes the GPS IFD; true when there was one. The payload is
    /// fully validated (loops, bounds) before anything is written.
    static func stripTIFF(_ bytes: inout [UInt8], payload: Range<Int>) throws(ImageError) -> Bool {
        var changed = false
        for _ in 0..<4 {
            let reader = try TIFFReader(bytes: bytes, range: payload)
            let fields = try ExifFields(reader)
            guard let pointer = fields.gpsPointer else { return changed }
            let base = payload.lowerBound
            if let gps = fields.gpsIFD {
                // Offsets may make the GPS IFD or its values share bytes with the other structures (IFD0's
                // orientation, a date, the thumbnail): those bytes are theirs and stay. Once the pointer is gone
                // nothing reads them as GPS data.
                var kept = [Bool](repeating: false, count: payload.count)
                func keep(_ range: Range<Int>) {
                    for i in range.clamped(to: 0..<payload.count) { kept[i] = true }
                }
                keep(0..<8)
                for ifd in [fields.ifd0] + fields.otherIFDs {
                    keep(ifd.byteRange)
                    for entry in ifd.entries { if let value = entry.value { keep(value) } }
                }
                if let thumbnail = fields.thumbnail { keep(thumbnail) }
                func zeroGPS(_ range: Range<Int>) {
                    for i in range where !kept[i] { bytes[base + i] = 0 }
                }
                for entry in gps.entries {
                    if let value = entry.value, value.lowerBound != entry.entryOffset + 8 { zeroGPS(value) }
                }
                zeroGPS(gps.byteRange)
            }
            // Shift the entries after the pointer and the next-IFD pointer up one slot; zero the freed 12 bytes.
            let ifd0 = fields.ifd0
            let count = ifd0.entries.count
            let slot = base + pointer.entryOffset
            let end = base + ifd0.byteRange.upperBound
            bytes.replaceSubrange(slot..<(end - 12), with: Array(bytes[(slot + 12)..<end]))
            zero(&bytes, (end - 12)..<end)
            let newCount = count - 1
            let countAt = base + ifd0.offset
            if reader.littleEndian {
                bytes[countAt] = UInt8(newCount & 0xFF)
                bytes[countAt + 1] = UInt8(newCount >> 8)
            } else {
                bytes[countAt] = UInt8(newCount >> 8)
                bytes[countAt + 1] = UInt8(newCount & 0xFF)
            }
            changed = true
        }
        throw .corrupt("EXIF: too many GPS pointers")
    }

    private static func zero(_ bytes: inout [UInt8], _ range: Range<Int>) {
        for i in range { bytes[i] = 0 }
    }

    /// Blanks every exif:GPS* attribute (name through closing quote) and element (start tag through end tag)
    /// with spaces, from `start` to `end` (the end of `bytes` when nil); true when one was found. Blanking can
    /// join what was around a field into a new one (a name, spaces, then an `=` that followed the field's closing
    /// quote): passes repeat until one finds nothing, and a packet that still has some after a few is refused.
    static func blankXMP(_ bytes: inout [UInt8], from start: Int, end: Int? = nil) throws(ImageError) -> Bool {
        var changed = false
        for pass in 0...8 {
            guard try blankXMPPass(&bytes, from: start, end: end ?? bytes.count) else { return changed }
            guard pass < 8 else { break }
            changed = true
        }
        throw .corrupt("XMP: GPS fields still found after 8 passes")
    }

    /// One pass of `blankXMP`.
    private static func blankXMPPass(_ bytes: inout [UInt8], from start: Int, end: Int) throws(ImageError) -> Bool {
        let needle = Array("exif:GPS".utf8)
        var changed = false
        var i = start
        func find(_ pattern: [UInt8], from: Int) -> Int? {
            guard !pattern.isEmpty, from + pattern.count <= end else { return nil }
            var k = from
            while k + pattern.count <= end {
                if bytes[k] == pattern[0], bytes[k..<(k + pattern.count)].elementsEqual(pattern) { return k }
                k += 1
            }
            return nil
        }
        while let hit = find(needle, from: i) {
            var nameEnd = hit + needle.count
            while nameEnd < end, !isNameTerminator(bytes[nameEnd]) { nameEnd += 1 }
            let name = Array(bytes[hit..<nameEnd])
            if hit > start, bytes[hit - 1] == 0x3C {  // "<exif:GPS…": an element
                guard let close = find([0x3E], from: nameEnd) else { throw .corrupt("XMP: unclosed element") }
                var blankEnd = close + 1
                if bytes[close - 1] != 0x2F {
                    guard let endTag = find([0x3C, 0x2F] + name + [0x3E], from: close) else {
                        throw .corrupt("XMP: no end tag for \(String(decoding: name, as: UTF8.self))")
                    }
                    blankEnd = endTag + name.count + 3
                }
                blank(&bytes, (hit - 1)..<blankEnd)
                i = blankEnd
            } else if hit > start + 1, bytes[hit - 1] == 0x2F, bytes[hit - 2] == 0x3C {
                i = nameEnd  // an end tag whose start tag was not ours
                continue
            } else {
                var k = nameEnd
                while k < end, bytes[k] == 0x20 || bytes[k] == 0x09 || bytes[k] == 0x0A || bytes[k] == 0x0D { k += 1 }
                guard k < end, bytes[k] == 0x3D else {
                    i = nameEnd  // the text appears outside an attribute or element name
                    continue
                }
                k += 1
                while k < end, bytes[k] == 0x20 || bytes[k] == 0x09 || bytes[k] == 0x0A || bytes[k] == 0x0D { k += 1 }
                guard k < end, bytes[k] == 0x22 || bytes[k] == 0x27,
                    let closeQuote = find([bytes[k]], from: k + 1)
                else { throw .corrupt("XMP: unquoted attribute") }
                blank(&bytes, hit..<(closeQuote + 1))
                i = closeQuote + 1
            }
            changed = true
        }
        return changed
    }

    private static func isNameTerminator(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x3D || byte == 0x3E || byte == 0x2F
    }

    private static func blank(_ bytes: inout [UInt8], _ range: Range<Int>) {
        for i in range { bytes[i] = 0x20 }
    }
}
