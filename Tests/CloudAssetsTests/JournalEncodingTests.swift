import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import CloudAssets

extension JournalChange {
    /// A change read back with the generic decoder, as every reader of an entry reads it.
    static func decode(_ text: String) -> JournalChange? {
        try? JSONDecoder().decode(JournalChange.self, from: Data(text.utf8))
    }
}

/// The journal's `put` and `delete` changes are written by hand (``JournalChange/encoded``): every reader decodes
/// them with the generic decoder, so whatever the text in a key, an ETag or a metadata value, it must read back
/// exactly.
@Suite(.heavy) struct JournalEncodingTests {
    /// Characters JSON must escape or that are easy to get wrong: quotes, backslashes, control characters, the
    /// slash (left as it is), the line separators JavaScript breaks on, non-ASCII letters and an emoji.
    static let awkward = Gen<Character?>.element(
        of: Array("a/\"\\\n\t\u{01}\u{1F}\u{7F}\u{2028}\u{2029}é日😀 {}:,[")
    ).map { $0 ?? "a" }
    static let text = awkward.array(of: 0...12).map { String($0) }

    @Test func handWrittenChangesDecodeToWhatWasWritten() async {
        let metadata = zip(Self.text, Self.text).array(of: 0...4).map { pairs in
            Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        }
        await propertyCheck(
            count: 300, input: Self.text, Self.text, Self.text, metadata, Gen.int(in: 0...Int(Int32.max))
        ) { key, etag, contentType, fields, size in
            let changes = [
                JournalChange.put(
                    key: key, size: Int64(size), etag: etag, contentType: contentType.isEmpty ? nil : contentType,
                    metadata: fields),
                JournalChange.delete(key: key, etag: etag),
            ]
            for change in changes {
                let decoded = try #require(JournalChange.decode(change.encoded), "\(change.encoded)")
                #expect(decoded.op == change.op)
                #expect(decoded.key == change.key)
                #expect(decoded.etag == change.etag)
                #expect(decoded.size == change.size)
                #expect(decoded.contentType == change.contentType)
                #expect(decoded.metadata == change.metadata)
            }
            let entry = try #require(
                JournalEntry.decode(JournalEntry(device: key.isEmpty ? "d" : key, changes: changes).encoded))
            #expect(entry.device == (key.isEmpty ? "d" : key))
            #expect(entry.changes.map(\.key) == [key, key])
            #expect(entry.changes.map(\.op) == [.put, .delete])
        }
    }

    @Test func plainChangesAreWrittenAsTheGenericEncoderWritesThem() throws {
        let put = JournalChange.put(
            key: "originals/2024/05/IMG 1.jpg", size: 123_456, etag: "\"9b2cf535f27731c974343645a3985328\"",
            contentType: "image/jpeg", metadata: ["pixel-width": "4032", "creation-date": "2024-05-01T10:00:00Z"])
        let delete = JournalChange.delete(key: "originals/a.jpg", etag: "abc")
        for change in [put, delete] {
            let generic = String(decoding: try JournalChange.encoder.encode(change), as: UTF8.self)
            #expect(change.encoded == generic)
        }
        let entry = JournalEntry(device: "device-1", changes: [put, delete])
        #expect(entry.encoded == (try JournalChange.encoder.encode(entry)))
    }
}
