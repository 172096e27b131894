import Foundation
import Images

extension FuzzCatalog {
    /// `LocationStripper` on any bytes: what it hands out keeps the file's length, carries no position the
    /// metadata reader finds, needs no second pass and decodes to the same pixels; its patches lie in the head.
    static let locationStrip = FuzzTarget(
        name: "location-strip",
        summary: "LocationStripper: same length, no GPS after, idempotent, same pixels; patches inside the head",
        maxLength: 4096,
        cpuMinutesGoal: 30,
        seeds: { ImageSeeds.jpegs + ImageSeeds.pngs + ImageSeeds.heics + ImageSeeds.heifContainers },
        check: { bytes throws(FuzzFailure) in
            // The patches of a head: the whole input, and its first half (a head that may end early).
            var wholePatches: [(offset: Int, bytes: [UInt8])]?
            for head in [bytes, Array(bytes.prefix(bytes.count / 2))] {
                guard let patches = try? LocationStripper.locationPatches(head: head) else { continue }
                if head.count == bytes.count { wholePatches = patches }
                var end = 0
                for patch in patches.sorted(by: { $0.offset < $1.offset }) {
                    try expect(
                        patch.offset >= end && !patch.bytes.isEmpty && patch.bytes.count <= head.count - patch.offset,
                        "patch of \(patch.bytes.count) bytes at \(patch.offset) (a head of \(head.count) bytes, "
                            + "the previous patch ends at \(end))")
                    end = patch.offset + patch.bytes.count
                }
            }

            let stripped: [UInt8]
            do {
                stripped = try LocationStripper.strippingLocation(from: bytes) ?? bytes
            } catch {
                return  // refused: the caller does not hand the file out
            }
            try expect(stripped.count == bytes.count, "stripped \(bytes.count) bytes to \(stripped.count)")
            // The whole-file strip writes at least what the head's patches say (it may add images after the first).
            for patch in wholePatches ?? [] {
                try expect(
                    stripped[patch.offset..<(patch.offset + patch.bytes.count)].elementsEqual(patch.bytes),
                    "the strip of the file differs from the head's patch at \(patch.offset)")
            }
            if case .parsed(let metadata)? = try? ImageMetadata.parse(head: stripped, fileLength: stripped.count) {
                try expect(metadata.location == nil, "still located after stripping: \(metadata.location!)")
            }
            if stripped == bytes { return }
            // Nothing left for a second pass (nil: nothing to strip, or refused).
            let again = try? LocationStripper.strippingLocation(from: stripped)
            try expect(again == nil, "a second strip still changes bytes")
            // The same pixels (HEIF is left out: libheif's decode is slow, and the strip touches only metadata
            // items there).
            guard let format = ImageFormat.sniff(bytes), format != .heif else { return }
            let before = DecodeOutcome(bytes)
            let after = DecodeOutcome(stripped)
            try expect(before == after, "decoded before stripping: \(before); after: \(after)")
        })

    /// `HEIFLocation` on any bytes (boxes with huge, zero, 64-bit and looping sizes): items are well-formed file
    /// ranges, the patches of an item lie inside it and leave nothing for a second pass.
    static let heifILOC = FuzzTarget(
        name: "heif-iloc",
        summary: "HEIFLocation.items / patches: item ranges well-formed, patches inside their item, idempotent",
        maxLength: 2048,
        cpuMinutesGoal: 30,
        seeds: { ImageSeeds.heifContainers + ImageSeeds.heics.filter { $0.count <= 2048 } },
        check: { bytes throws(FuzzFailure) in
            if let items = try? HEIFLocation.items(head: bytes) {
                for item in items {
                    // Ranges are of the file, which may be longer than the head: only their form is checked here.
                    try expect(item.range.lowerBound >= 0 && !item.range.isEmpty, "item range \(item.range)")
                    guard item.range.upperBound <= bytes.count else { continue }
                    try checkPatches(Array(bytes[item.range]), kind: item.kind, at: item.range.lowerBound)
                }
            }
            // The same bytes as an item's contents: the TIFF strip and the XMP blanking on their own.
            try checkPatches(bytes, kind: .exif, at: 0)
            try checkPatches(bytes, kind: .xmp, at: 0)
        })

    /// The patches of one item lie inside it; applied, they leave nothing to patch.
    static func checkPatches(_ item: [UInt8], kind: HEIFLocation.ItemKind, at offset: Int) throws(FuzzFailure) {
        guard let patches = try? HEIFLocation.patches(item: item, kind: kind, at: offset) else { return }
        var patched = item
        for patch in patches {
            try expect(
                patch.offset >= offset && patch.bytes.count <= item.count - (patch.offset - offset),
                "\(kind) patch of \(patch.bytes.count) bytes at \(patch.offset), item of \(item.count) at \(offset)")
            patched.replaceSubrange(
                (patch.offset - offset)..<(patch.offset - offset + patch.bytes.count), with: patch.bytes)
        }
        guard !patches.isEmpty, let again = try? HEIFLocation.patches(item: patched, kind: kind, at: offset) else {
            return
        }
        try expect(again.isEmpty, "\(kind) item still patched after its patches")
    }
}

/// What decoding a file small gives: its pixels, or that it failed.
enum DecodeOutcome: Equatable, CustomStringConvertible {
    case image(width: Int, height: Int, pixels: [UInt8])
    case failed

    init(_ bytes: [UInt8]) {
        var request = DecodeRequest(targetWidth: 32, targetHeight: 32)
        request.maxPixels = 1 << 18
        if let (image, _) = try? ImageDecoder.decode(data: bytes, request: request) {
            self = .image(width: image.width, height: image.height, pixels: image.pixels)
        } else {
            self = .failed
        }
    }

    var description: String {
        switch self {
        case .image(let width, let height, _): return "\(width)x\(height) image"
        case .failed: return "an error"
        }
    }
}
