import AssetStore
import Essentials
package import Foundation

/// The bucket journal's format: what a library writes under ``BucketLayout/journalPrefix`` after it changed the
/// bucket, so that other libraries can follow with a listing of the entries they have not seen and a GET of each,
/// instead of listing the whole bucket and HEADing every new object.
///
/// An entry is one immutable JSON object, written with `If-None-Match: *` and never rewritten:
///
///     journal/<13-digit milliseconds since 1970, the service's clock>-<device>-<sequence>.json
///     {"format":1,"device":"…","changes":[{"op":"put","key":"originals/2024/05/a.jpg","size":123,
///       "etag":"…","contentType":"image/jpeg","metadata":{"creation-date":"…","pixel-width":"4032",…},
///       "thumbnailKey":"thumbnails/2024/05/a.jpg.jpg","thumbnailSize":5012,"thumbnailETag":"…"},
///      {"op":"delete","key":"originals/…","etag":"…"},
///      {"op":"metadata","key":"originals/…","sidecarETag":"…","sidecar":{…the sidecar's JSON…}},
///      {"op":"edit","key":"originals/…","edit":{…the edit revision's manifest (EditManifest)…}},
///      {"op":"collection","key":"collections/<id>.json","etag":"…"}]}
///
/// Keys sort in time order, so a reader lists after the last time it applied (less a look-back window, for
/// entries that arrive late). `metadata` carries the `x-amz-meta-*` fields of the original
/// (docs/bucket-layout.md). Applying an entry twice has the effect of applying it once.
package struct JournalEntry: Codable, Sendable {
    package var format = 1
    package var device: String
    package var changes: [JournalChange]
}

/// A thumbnail object an upload wrote beside its original.
package struct ThumbnailObject: Sendable, Hashable {
    package var key: String
    package var size: Int64
    package var etag: String

    package init(key: String, size: Int64, etag: String) {
        self.key = key
        self.size = size
        self.etag = etag
    }
}

/// One change in a journal entry.
package struct JournalChange: Codable, Sendable {
    package enum Operation: String, Codable, Sendable {
        /// An original was written (created or replaced).
        case put
        /// An original was deleted.
        case delete
        /// The shared properties (the sidecar) of an original were written.
        case metadata
        /// A revision of an original's content edit (or a revert) was written; ``edit`` is its manifest.
        case edit
        /// An album's or folder's shared state (`collections/<id>.json`, ``key``) was written, with ``etag``.
        case collection
    }

    package var op: Operation
    /// The original's key.
    package var key: String
    package var size: Int64?
    package var etag: String?
    package var contentType: String?
    /// The original's `x-amz-meta-*` fields (names without the prefix).
    package var metadata: [String: String]?
    package var sidecarETag: String?
    package var sidecar: SharedMetadata.Sidecar?
    package var edit: EditManifest?
    /// A `put`'s thumbnail object (the layout's `thumbnails/<path>.jpg`), when the writer uploaded one with it.
    package var thumbnailKey: String?
    package var thumbnailSize: Int64?
    package var thumbnailETag: String?

    package static func put(
        key: String, size: Int64, etag: String, contentType: String?, metadata: [String: String],
        thumbnail: ThumbnailObject? = nil
    ) -> JournalChange {
        JournalChange(
            op: .put, key: key, size: size, etag: etag, contentType: contentType, metadata: metadata,
            thumbnailKey: thumbnail?.key, thumbnailSize: thumbnail?.size, thumbnailETag: thumbnail?.etag)
    }

    package static func delete(key: String, etag: String) -> JournalChange {
        JournalChange(op: .delete, key: key, etag: etag)
    }

    package static func metadata(key: String, sidecar: SharedMetadata.Sidecar, sidecarETag: String) -> JournalChange {
        JournalChange(op: .metadata, key: key, sidecarETag: sidecarETag, sidecar: sidecar)
    }

    package static func edit(key: String, manifest: EditManifest) -> JournalChange {
        JournalChange(op: .edit, key: key, edit: manifest)
    }

    package static func collection(key: String, etag: String) -> JournalChange {
        JournalChange(op: .collection, key: key, etag: etag)
    }

    /// The change as the outbox keeps it: JSON with its keys sorted. A `put` or a `delete` (one per asset an
    /// import uploads or a trash empties) is written by hand: the generic encoder took ~3 % of an import's CPU.
    /// The changes that carry a nested document (a sidecar, an edit manifest) use it.
    package var encoded: String {
        guard sidecar == nil, sidecarETag == nil, edit == nil else {
            // try?: encoding these string and number fields cannot fail
            return String(decoding: (try? Self.encoder.encode(self)) ?? Data(), as: UTF8.self)
        }
        var fields: [String] = []
        if let contentType { fields.append("\"contentType\":" + JSONText.quoted(contentType)) }
        if let etag { fields.append("\"etag\":" + JSONText.quoted(etag)) }
        fields.append("\"key\":" + JSONText.quoted(key))
        if let metadata {
            let members = metadata.sorted { $0.key < $1.key }.map {
                JSONText.quoted($0.key) + ":" + JSONText.quoted($0.value)
            }
            fields.append("\"metadata\":{" + members.joined(separator: ",") + "}")
        }
        fields.append("\"op\":" + JSONText.quoted(op.rawValue))
        if let size { fields.append("\"size\":" + String(size)) }
        if let thumbnailETag { fields.append("\"thumbnailETag\":" + JSONText.quoted(thumbnailETag)) }
        if let thumbnailKey { fields.append("\"thumbnailKey\":" + JSONText.quoted(thumbnailKey)) }
        if let thumbnailSize { fields.append("\"thumbnailSize\":" + String(thumbnailSize)) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension JournalEntry {
    /// The entry's JSON, keys sorted as the generic encoder sorts them, each change as ``JournalChange/encoded``.
    package var encoded: Data { Self.encoded(device: device, changes: changes.map(\.encoded), format: format) }

    /// An entry's JSON from its changes already encoded (``JournalChange/encoded``, as the outbox keeps them): a
    /// flush of 500 changes neither decodes nor encodes them again.
    package static func encoded(device: String, changes: [String], format: Int = 1) -> Data {
        Data(
            ("{\"changes\":[" + changes.joined(separator: ",") + "],\"device\":" + JSONText.quoted(device)
                + ",\"format\":\(format)}").utf8)
    }

    /// An entry read from the bucket; nil when it is not one this version understands.
    package static func decode(_ data: Data) -> JournalEntry? {
        // try?: not an entry this version reads is nil (documented)
        guard let entry = try? JSONDecoder().decode(JournalEntry.self, from: data), entry.format == 1 else {
            return nil
        }
        return entry
    }
}

/// Journal keys: `<prefix><13-digit milliseconds>-<device>-<sequence>.json`.
package enum JournalKey {
    package static func make(prefix: String, time: Int64, device: String, sequence: Int64) -> String {
        prefix + padded(time) + "-" + device + "-" + String(sequence) + ".json"
    }

    /// The key every entry written at `time` or later sorts after (a listing's `StartAfter`).
    package static func start(prefix: String, time: Int64) -> String { prefix + padded(max(0, time)) }

    /// The time an entry's key says it was written at; nil for a key that is not an entry's.
    package static func time(of key: String, prefix: String) -> Int64? {
        guard key.hasPrefix(prefix) else { return nil }
        let digits = key.utf8.dropFirst(prefix.utf8.count).prefix(13)
        guard digits.count == 13, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    private static func padded(_ time: Int64) -> String {
        let text = String(time)
        return String(repeating: "0", count: max(0, 13 - text.utf8.count)) + text
    }
}

/// How ``AssetLibrary/sync(mode:fetchThumbnails:progress:)`` learns what changed in the bucket.
public enum SyncMode: Sendable, Hashable, Codable {
    /// Full on the first sync and once the last full listing is older than 100 times what it took (at least a
    /// minute, at most ``AssetLibrary/Configuration/fullSyncInterval``, which applies alone until the library has
    /// timed a listing of its own); incremental otherwise. ``SyncSummary/lastFullListing`` says when it last ran.
    case automatic
    /// List the whole bucket: finds everything, including objects other tools wrote; costs a listing of every
    /// object (and a HEAD for each new one).
    case full
    /// Read only the journal entries written since this library's position: costs O(changes).
    case incremental
}
