import AssetStore
import Essentials
package import Foundation

/// `collections/<id>.json`:
///
///     {"format":1,"id":"<uuid>","kind":"album","title":"Rome","titleStamp":{"time":1763900000000,"device":"…"},
///      "parent":"<folder uuid>","parentStamp":{…},"deleted":{…},
///      "members":[{"key":"originals/…","added":{…},"removed":{…},"position":1048576,"placed":{…}}]}
///
/// `parent`, `deleted` and `removed` are left out when absent; members are written in key order.
extension CollectionDocument {
    struct Wire: Codable {
        var format: Int
        var id: String
        var kind: String
        var title: String
        var titleStamp: Stamp
        var parent: String?
        var parentStamp: Stamp
        var deleted: Stamp?
        var members: [WireMember]?
    }

    struct WireMember: Codable {
        var key: String
        var added: Stamp
        var removed: Stamp?
        var position: Int64
        var placed: Stamp
    }

    /// The document's bytes (the same state always gives the same bytes): `Wire` as JSON with its keys sorted,
    /// written by hand (`JSONEncoder` took a second for a 100,000-asset album).
    package var encoded: Data {
        var out = ""
        out.reserveCapacity(256 + members.count * 220)
        func stamp(_ stamp: Stamp) {
            out += "{\"device\":"
            out += JSONText.quoted(stamp.device)
            out += ",\"time\":"
            out += String(stamp.time)
            out += "}"
        }
        out += "{"
        if let deleted {
            out += "\"deleted\":"
            stamp(deleted)
            out += ","
        }
        out += "\"format\":1,\"id\":" + JSONText.quoted(id)
        out += kind == .album ? ",\"kind\":\"album\"" : ",\"kind\":\"folder\""
        if !members.isEmpty {
            out += ",\"members\":["
            var first = true
            for (key, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                out += first ? "{\"added\":" : ",{\"added\":"
                first = false
                stamp(member.added)
                out += ",\"key\":"
                out += JSONText.quoted(key)
                out += ",\"placed\":"
                stamp(member.placed)
                out += ",\"position\":"
                out += String(member.position)
                if let removed = member.removed {
                    out += ",\"removed\":"
                    stamp(removed)
                }
                out += "}"
            }
            out += "]"
        }
        if let parent { out += ",\"parent\":" + JSONText.quoted(parent) }
        out += ",\"parentStamp\":"
        stamp(parentStamp)
        out += ",\"title\":" + JSONText.quoted(title) + ",\"titleStamp\":"
        stamp(titleStamp)
        out += "}"
        return Data(out.utf8)
    }

    /// The document as the catalog keeps it (the same text as the bucket's).
    package var text: String {
        let text = String(decoding: encoded, as: UTF8.self)
        // (A folder's members would not read back: only an album's state is kept.)
        if kind == .album { Self.remember(text, self) }
        return text
    }

    /// A document the catalog wrote itself (trusted as its own; nil when unreadable).
    package init?(catalogText text: String) {
        if let known = Self.recalled(text) {
            self = known
            return
        }
        guard
            case .success(let document) = BucketInput.collectionDocument(
                Data(text.utf8), id: nil, layout: BucketLayout(), now: .distantFuture)
        else { return nil }
        self = document
        Self.remember(text, document)
    }

    /// The large documents last written or read as the catalog keeps them, with their states: a library reads the
    /// same album's document several times a change (parsing 15 MB takes a second); a hit costs a comparison.
    private static let catalogTexts = LockedBox<[(text: String, document: CollectionDocument)]>([])
    /// Documents smaller than this are parsed again (quickly) rather than kept.
    private static let rememberedBytes = 64 << 10

    private static func remember(_ text: String, _ document: CollectionDocument) {
        guard text.utf8.count >= rememberedBytes else { return }
        catalogTexts.withLock { texts in
            texts.removeAll { $0.document.id == document.id }
            texts.append((text, document))
            if texts.count > 4 { texts.removeFirst() }
        }
    }

    private static func recalled(_ text: String) -> CollectionDocument? {
        guard text.utf8.count >= rememberedBytes else { return nil }
        return catalogTexts.withLock { texts in
            texts.last { sameBytes($0.text, text) }?.document
        }
    }

    /// Whether two strings hold the same UTF-8 bytes (`==` would also take canonically equivalent ones: a key
    /// with a composed `é` for one with a decomposed one).
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let fast = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        return (fast ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    /// A new delta's name: the time in milliseconds and 64 random bits (`1764400000000-0123456789abcdef`), so that
    /// names sort by time and two libraries never pick the same.
    package static func deltaName(now: Date) -> String {
        let millis = max(0, Int64((now.timeIntervalSince1970 * 1000).rounded(.down)))
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        return "\(millis)-" + String(repeating: "0", count: 16 - random.count) + random
    }

    /// Whether `name` is a delta's name as ``deltaName(now:)`` makes them: 1 to 19 digits, `-`, 16 lower-case
    /// hexadecimal digits.
    package static func isDeltaName(_ name: Substring) -> Bool {
        let bytes = Array(name.utf8)
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")), (1...19).contains(dash), bytes.count == dash + 17
        else { return false }
        return bytes[..<dash].allSatisfy { (0x30...0x39).contains($0) }
            && bytes[(dash + 1)...].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Whether `text` is a collection identifier as libraries make them: a lower-case UUID.
    package static func isIdentifier(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !((0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)) {
                return false
            }
        }
        return true
    }
}

extension BucketInput {
    /// The largest collection document read: about 150 bytes an asset, an album of 200,000.
    package static let maxCollectionDocumentBytes = 32 << 20
    /// The most assets (present or removed) one collection document may name.
    package static let maxCollectionMembers = 200_000

    /// What is wrong with an album's or folder's title, or nil: the one rule for titles, held by every library to
    /// the documents it reads (one breaking it is skipped) and by ``AssetChangeRequests`` to the titles it is given
    /// (after trimming them), so that no library writes a title the others refuse. A title is not empty, has no
    /// white space or line break around it, holds no control character (below U+0020) and is at most
    /// ``maxTitleBytes`` bytes of UTF-8.
    /// - Returns: The problem as the end of a sentence about the title ("has control characters (U+0009)").
    package static func collectionTitleProblem(_ title: String) -> String? {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return "is empty" }
        if trimmed != title { return "has white space around it" }
        if let control = title.unicodeScalars.first(where: { $0.value < 0x20 }) {
            return "has control characters (U+\(String(format: "%04X", control.value)))"
        }
        if title.utf8.count > maxTitleBytes {
            return "has \(title.utf8.count) bytes (at most \(maxTitleBytes))"
        }
        return nil
    }

    /// Reads a collection document: its identifier is `id` (the object's name) and a UUID, its kind album or
    /// folder, its title 1 to ``maxTitleBytes`` bytes without control characters, its folder another UUID, every
    /// member's key an original's, every device bounded; stamps later than `now` plus ``maxStampLead`` are clamped
    /// to that. A folder's members are dropped, and a deleted collection's.
    package static func collectionDocument(_ data: Data, id: String?, layout: BucketLayout, now: Date) -> Result<
        CollectionDocument, Rejection
    > {
        guard data.count <= maxCollectionDocumentBytes else {
            return .failure(
                Rejection("collection document of \(data.count) bytes (at most \(maxCollectionDocumentBytes))"))
        }
        // try?: refused with a reason below
        guard let wire = try? JSONDecoder().decode(CollectionDocument.Wire.self, from: data), wire.format == 1
        else { return .failure(Rejection("not a collection document")) }
        guard CollectionDocument.isIdentifier(wire.id), id == nil || wire.id == id else {
            return .failure(Rejection("collection document naming \(quoted(wire.id)) under \(quoted(id ?? ""))"))
        }
        let kind: StoredCollectionKind
        switch wire.kind {
        case "album": kind = .album
        case "folder": kind = .folder
        default: return .failure(Rejection("collection of kind \(quoted(wire.kind))"))
        }
        let limit = now == .distantFuture ? Int64.max : milliseconds(now.addingTimeInterval(maxStampLead))
        func stamp(_ stamp: CollectionDocument.Stamp) -> Result<CollectionDocument.Stamp, Rejection> {
            if let problem = textProblem(stamp.device, "device", max: maxDeviceBytes) {
                return .failure(Rejection(problem))
            }
            return .success(CollectionDocument.Stamp(time: min(stamp.time, limit), device: stamp.device))
        }
        if let problem = collectionTitleProblem(wire.title) {
            return .failure(Rejection("collection title \(quoted(wire.title)) \(problem)"))
        }
        if let parent = wire.parent, !CollectionDocument.isIdentifier(parent) || parent == wire.id {
            return .failure(Rejection("collection folder \(quoted(parent)) is not another collection's identifier"))
        }
        // A deleted collection's members no longer matter: they are not read.
        let members = kind == .album && wire.deleted == nil ? (wire.members ?? []) : []
        guard members.count <= maxCollectionMembers else {
            return .failure(Rejection("collection of \(members.count) members (at most \(maxCollectionMembers))"))
        }
        do {
            var document = CollectionDocument(
                id: wire.id, kind: kind, title: wire.title, parent: wire.parent,
                stamp: try stamp(wire.titleStamp).get())
            document.parentStamp = try stamp(wire.parentStamp).get()
            document.deleted = try wire.deleted.map { try stamp($0).get() }
            for member in members {
                if let problem = originalKeyProblem(member.key, layout: layout) { return .failure(Rejection(problem)) }
                let value = CollectionDocument.Member(
                    added: try stamp(member.added).get(), removed: try member.removed.map { try stamp($0).get() },
                    position: member.position, placed: try stamp(member.placed).get())
                // A key written twice (only a stranger does): the merge of both.
                if let earlier = document.members[member.key] {
                    var one = document
                    one.members = [member.key: earlier]
                    var other = document
                    other.members = [member.key: value]
                    document.members[member.key] = one.merged(with: other).members[member.key]
                } else {
                    document.members[member.key] = value
                }
            }
            return .success(document)
        } catch let rejection as Rejection {
            return .failure(rejection)
        } catch {
            return .failure(Rejection("not a collection document"))
        }
    }
}

extension BucketLayout {
    /// `collections/<id>.json`.
    package func collectionKey(_ id: String) -> String { collectionsPrefix + id + ".json" }

    /// The collection a key under the prefix names (`<uuid>.json`), or nil.
    package func collectionID(forKey key: String) -> String? {
        guard key.hasPrefix(collectionsPrefix), key.hasSuffix(".json") else { return nil }
        let id = String(key.dropFirst(collectionsPrefix.count).dropLast(5))
        return CollectionDocument.isIdentifier(id) ? id : nil
    }

    /// `collections/<id>/`: where the collection's deltas are.
    package func collectionDeltaPrefix(_ id: String) -> String { collectionsPrefix + id + "/" }

    /// `collections/<id>/<name>.json`, a delta of the collection (``CollectionDocument/deltaName(now:)``).
    package func collectionDeltaKey(_ id: String, name: String) -> String {
        collectionDeltaPrefix(id) + name + ".json"
    }

    /// The collection a delta's key names (`<uuid>/<digits>-<16 hex digits>.json` under the prefix), or nil.
    package func collectionID(forDeltaKey key: String) -> String? {
        guard key.hasPrefix(collectionsPrefix), key.hasSuffix(".json") else { return nil }
        let rest = key.dropFirst(collectionsPrefix.count).dropLast(5)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let id = String(rest[..<slash])
        guard CollectionDocument.isIdentifier(id), CollectionDocument.isDeltaName(rest[rest.index(after: slash)...])
        else { return nil }
        return id
    }
}
