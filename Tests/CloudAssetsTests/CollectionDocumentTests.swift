import AssetStore
import Essentials
import Foundation
import Testing

@testable import CloudAssets

/// The shared state of an album: the merge laws (any order of merges gives the same state), each stated rule, the
/// wire format's round trip, and what a document from a stranger may not do.
@Suite struct CollectionDocumentTests {
    typealias Stamp = CollectionDocument.Stamp
    static let id = "0a1b2c3d-0000-4000-8000-000000000001"
    static let folder = "0a1b2c3d-0000-4000-8000-000000000002"

    static func stamp(_ time: Int64, _ device: String = "d") -> Stamp { Stamp(time: time, device: device) }

    /// A random state: few keys, times and devices, so that ties and conflicts are common.
    static func random(_ rng: inout SplitMix64) -> CollectionDocument {
        func s() -> Stamp { stamp(Int64(rng.next() % 4), ["a", "b"][Int(rng.next() % 2)]) }
        var document = CollectionDocument(
            id: id, kind: .album, title: ["Rome", "Roma", "Paris"][Int(rng.next() % 3)],
            parent: rng.next() % 2 == 0 ? nil : folder, stamp: s())
        document.parentStamp = s()
        if rng.next() % 5 == 0 { document.deleted = s() }
        for key in ["originals/a", "originals/b", "originals/c", "originals/d"] where rng.next() % 3 != 0 {
            document.members[key] = CollectionDocument.Member(
                added: s(), removed: rng.next() % 2 == 0 ? nil : s(), position: Int64(rng.next() % 3), placed: s())
        }
        // A deleted collection's state is its header alone (as read from the bucket).
        if document.deleted != nil { document.members = [:] }
        return document
    }

    @Test("merging is commutative, associative and idempotent: libraries agree whatever order they merge in")
    func mergeLaws() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<2000 {
            let (a, b, c) = (Self.random(&rng), Self.random(&rng), Self.random(&rng))
            #expect(a.merged(with: b) == b.merged(with: a))
            #expect(a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)))
            #expect(a.merged(with: a) == a)
            #expect(a.merged(with: b).orderedKeys == b.merged(with: a).orderedKeys)
        }
    }

    @Test("the rules: last title wins, deletion is final, the later of add and remove wins, the later place wins")
    func rules() {
        var base = CollectionDocument(id: Self.id, kind: .album, title: "Rome", parent: nil, stamp: Self.stamp(1))
        base.members["originals/a"] = .init(
            added: Self.stamp(1), removed: nil, position: 10, placed: Self.stamp(1))
        var left = base
        var right = base
        left.title = "Roma"
        left.titleStamp = Self.stamp(5, "a")
        right.title = "Rom"
        right.titleStamp = Self.stamp(5, "b")  // same time: the device breaks the tie
        left.members["originals/a"]?.removed = Self.stamp(3)  // removed at 3 …
        right.members["originals/a"]?.added = Self.stamp(4)  // … added again at 4: the later wins
        right.members["originals/b"] = .init(added: Self.stamp(2), removed: nil, position: 10, placed: Self.stamp(2))
        left.members["originals/c"] = .init(added: Self.stamp(2), removed: nil, position: 5, placed: Self.stamp(2))
        let merged = left.merged(with: right)
        #expect(merged.title == "Rom")
        #expect(merged.orderedKeys == ["originals/c", "originals/a", "originals/b"])  // 5, then 10 by key
        // A move wins over an older one; a deletion wins over everything.
        var moved = merged
        moved.members["originals/b"]?.position = 1
        moved.members["originals/b"]?.placed = Self.stamp(9)
        var deleted = base
        deleted.deleted = Self.stamp(2)
        #expect(merged.merged(with: moved).orderedKeys.first == "originals/b")
        #expect(moved.merged(with: deleted).deleted == Self.stamp(2))
    }

    @Test(
        "folding the catalog: additions, removals, moves and renames become stamped changes; others stay as they were")
    func folding() {
        var document = CollectionDocument(id: Self.id, kind: .album, title: "Rome", parent: nil, stamp: Self.stamp(1))
        for (key, position) in [("originals/a", 10), ("originals/b", 20), ("originals/x", 30)] {
            document.members[key] = .init(
                added: Self.stamp(1), removed: nil, position: Int64(position), placed: Self.stamp(1))
        }
        let now = Date(timeIntervalSince1970: 100)
        // b taken out, c added, a moved after c; x is not this library's to speak for (no asset here).
        let folded = document.folding(
            title: "Roma", parent: nil, isDeleted: false,
            members: [("originals/c", 15), ("originals/a", 25)],
            shareable: ["originals/a", "originals/b", "originals/c"], device: "me", now: now)
        #expect(folded.title == "Roma" && folded.titleStamp == Self.stamp(100_000, "me"))
        #expect(folded.orderedKeys == ["originals/c", "originals/a", "originals/x"])
        #expect(folded.members["originals/b"]?.isPresent == false)
        #expect(folded.members["originals/x"] == document.members["originals/x"])
        #expect(
            folded.folding(
                title: "Roma", parent: nil, isDeleted: false, members: [("originals/c", 15), ("originals/a", 25)],
                shareable: ["originals/a", "originals/b", "originals/c"], device: "me", now: now) == folded)
    }

    @Test("the wire format reads back the same state, and the same state is always the same bytes")
    func wireRoundTrip() throws {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<200 {
            let document = Self.random(&rng)
            let read = try BucketInput.collectionDocument(
                document.encoded, id: Self.id, layout: BucketLayout(), now: Date(timeIntervalSince1970: 10)
            ).get()
            #expect(read == document)
            #expect(read.encoded == document.encoded)
        }
    }

    @Test("the bytes written by hand are JSONEncoder's (keys sorted, slashes plain), quotes and non-ASCII included")
    func handWrittenBytesAreTheEncoders() throws {
        var rng = SplitMix64(seed: 6)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let titles = ["Rome", "Say \"cheese\"", "back\\slash", "Été 😀", "e\u{301}"]
        for round in 0..<200 {
            var document = Self.random(&rng)
            document.title = titles[round % titles.count]
            if round % 7 == 0 { document.members["originals/é \"q\"/😀.jpg"] = document.members.values.first }
            if round % 11 == 0 {
                document.kind = .folder
                document.members = [:]
            }
            let wire = CollectionDocument.Wire(
                format: 1, id: document.id, kind: document.kind == .album ? "album" : "folder", title: document.title,
                titleStamp: document.titleStamp, parent: document.parent, parentStamp: document.parentStamp,
                deleted: document.deleted,
                members: document.members.isEmpty
                    ? nil
                    : document.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                        CollectionDocument.WireMember(
                            key: $0.key, added: $0.value.added, removed: $0.value.removed,
                            position: $0.value.position, placed: $0.value.placed)
                    })
            #expect(
                document.encoded == (try encoder.encode(wire)), "\(String(decoding: document.encoded, as: UTF8.self))")
            // The catalog's text, read back (from the parse or from the cache of large ones), is the same state.
            #expect(CollectionDocument(catalogText: document.text) == document)
        }
    }

    @Test("a large document read back from the catalog is the same state, and a text that differs is parsed anew")
    func largeCatalogTexts() throws {
        var document = CollectionDocument(id: Self.id, kind: .album, title: "Big", parent: nil, stamp: Self.stamp(1))
        for index in 0..<2_000 {
            document.members["originals/\(index)-é.jpg"] = .init(
                added: Self.stamp(1), removed: nil, position: Int64(index), placed: Self.stamp(1))
        }
        let text = document.text
        #expect(text.utf8.count > 64 << 10)
        #expect(CollectionDocument(catalogText: text) == document)
        // The same text with a decomposed é (canonically equal as Swift strings, other bytes): another state.
        let decomposed = text.replacingOccurrences(of: "0-é", with: "0-e\u{301}")
        #expect(decomposed == text && !decomposed.utf8.elementsEqual(text.utf8))
        let other = try #require(CollectionDocument(catalogText: decomposed))
        #expect(other.encoded == Data(decomposed.utf8) && other.encoded != document.encoded, "its own bytes")
    }

    @Test("a stranger's document is refused when it names another id, escapes the originals, or is malformed")
    func strangersDocuments() {
        let good = CollectionDocument(id: Self.id, kind: .album, title: "Rome", parent: nil, stamp: Self.stamp(1))
        let text = good.text
        func refused(_ body: String, id: String = Self.id) -> Bool {
            if case .failure = BucketInput.collectionDocument(
                Data(body.utf8), id: id, layout: BucketLayout(), now: Date())
            {
                return true
            }
            return false
        }
        #expect(!refused(text))
        #expect(refused(text, id: Self.folder))  // under another object's name
        #expect(refused(text.replacingOccurrences(of: "\"Rome\"", with: "\"\"")))  // empty title
        #expect(refused(text.replacingOccurrences(of: "\"Rome\"", with: "\"a\\u0000b\"")))  // control character
        #expect(refused(text.replacingOccurrences(of: "\"album\"", with: "\"smart\"")))
        #expect(refused(text.replacingOccurrences(of: "\"format\":1", with: "\"format\":2")))
        #expect(refused("[]"))
        let escaping =
            text.dropLast() + #","members":[{"key":"originals/../x","added":{"time":1,"device":"d"},"#
            + #""position":1,"placed":{"time":1,"device":"d"}}]}"#
        #expect(refused(String(escaping)))
        let intoItself = text.dropLast() + ",\"parent\":\"\(Self.id)\"}"
        #expect(refused(String(intoItself)))
        // A stamp from the far future is clamped to the service's clock plus an hour.
        let future = text.replacingOccurrences(of: "\"time\":1}", with: "\"time\":99999999999999}")
        let now = Date(timeIntervalSince1970: 1_000)
        let read = try? BucketInput.collectionDocument(Data(future.utf8), id: Self.id, layout: BucketLayout(), now: now)
            .get()
        #expect(read?.titleStamp.time == Int64(4_600_000))
    }
}
