import Foundation
import Testing

@testable import Images

/// The identifier that pairs a Live Photo's halves, read from an Apple MakerNote: checked against exiftool, and
/// refused (treated as absent) whenever the note is not what it claims.
@Suite("Live Photo content identifiers")
struct ContentIdentifierTests {
    static let identifier = "9C1B0A6E-3F52-4D7B-8E21-5A6C0D4E7F10"

    static func photo(identifier: String?) throws -> [UInt8] {
        var exif = ExifBuilder()
        exif.make = "Apple"
        exif.captureDate = Date(timeIntervalSince1970: 1_700_000_000)
        exif.appleContentIdentifier = identifier
        return try ImageEncoder.jpeg(Fixtures.photo(width: 64, height: 48), quality: 80, exif: exif.tiffPayload())
    }

    static func metadata(_ file: [UInt8]) throws -> ImageMetadata {
        guard case .parsed(let metadata) = try ImageMetadata.parse(head: file, fileLength: file.count) else {
            throw ImageError.truncated
        }
        return metadata
    }

    @Test("an iPhone's MakerNote gives the identifier, as exiftool reads it (its MediaGroupUUID)")
    func readsTheMakerNote() throws {
        let file = try Self.photo(identifier: Self.identifier)
        #expect(try Self.metadata(file).contentIdentifier == Self.identifier)
        #expect(try Self.metadata(try Self.photo(identifier: nil)).contentIdentifier == nil)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString).jpg")
        try Data(file).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["exiftool", "-s3", "-MediaGroupUUID", url.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == Self.identifier)
    }

    @Test("identifiers are letters, digits and hyphens, compared without case; anything else is absent")
    func validation() {
        #expect(ContentIdentifier.validated("abc-DEF-123\0") == "ABC-DEF-123")
        #expect(ContentIdentifier.validated("") == nil)
        #expect(ContentIdentifier.validated("../../etc") == nil)
        #expect(ContentIdentifier.validated("a b") == nil)
        #expect(ContentIdentifier.validated(String(repeating: "A", count: 65)) == nil)
        #expect(ContentIdentifier.validated(String(repeating: "A", count: 64)) != nil)
    }

    @Test("a note that lies: an offset past its end, another maker's header, a count larger than the note")
    func hostileNotes() {
        var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8) + [0, 1]
        note += [0x00, 0x11, 0x00, 0x02, 0, 0, 0, 37, 0, 0, 0x10, 0]  // 37 bytes at 4096: outside
        note += [0, 0, 0, 0]
        #expect(ExifFields.appleContentIdentifier(note[...]) == nil)
        var other = note
        other.replaceSubrange(0..<5, with: Array("Canon".utf8))
        #expect(ExifFields.appleContentIdentifier(other[...]) == nil)
        var counted = note
        counted[15] = 200
        #expect(ExifFields.appleContentIdentifier(counted[...]) == nil)
        #expect(ExifFields.appleContentIdentifier(note.prefix(15)) == nil)
    }
}
