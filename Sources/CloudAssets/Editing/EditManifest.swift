import Foundation

/// A revision identifier: `<13-digit milliseconds since 1970>-<device>`. Identifiers sort in time order (ties by
/// device), so "the latest revision" is the same for every library; they are safe as file and key names.
enum EditRevisionID {
    static func make(time: Int64, device: String) -> String {
        let digits = String(max(0, time))
        return String(repeating: "0", count: max(0, 13 - digits.count)) + digits + "-" + device
    }

    /// A new revision made now on `device`, later than every revision in `known`.
    static func next(device: String, now: Date, after known: [String]) -> String {
        var time = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        if let latest = known.compactMap(Self.time(of:)).max(), latest >= time { time = latest + 1 }
        return make(time: time, device: device)
    }

    static func time(of revision: String) -> Int64? {
        guard isValid(revision) else { return nil }
        return Int64(revision.prefix(13))
    }

    /// 13 digits, a dash, then 1–64 lower-case letters, digits or dashes.
    static func isValid(_ revision: String) -> Bool {
        let bytes = Array(revision.utf8)
        guard bytes.count >= 15, bytes.count <= 78, bytes[13] == UInt8(ascii: "-") else { return false }
        return bytes[..<13].allSatisfy { $0 >= 48 && $0 <= 57 }
            && bytes[14...].allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || $0 == 45 }
    }

    /// Whether `a` is later than `b` (`nil`: no revision, earlier than any).
    static func isLater(_ a: String, than b: String?) -> Bool {
        guard let b else { return true }
        return a.utf8.lexicographicallyPrecedes(b.utf8) == false && a != b
    }
}

/// One revision of an asset's content edit, as the bucket and the journal carry it
/// (`edits/<path>/<revision>.json` for `originals/<path>`):
///
/// ```json
/// {"format":1,"original":"originals/2026/11/IMG_1.jpg","revision":"1764160000000-6f1…","reverted":false,
///  "adjustment":{"formatIdentifier":"com.cloudassets.basic","formatVersion":"1","data":"<base64>"},
///  "basedOn":null,
///  "rendered":{"key":"edits/2026/11/IMG_1.jpg/1764160000000-6f1….jpg","size":812345,"etag":"…",
///              "sha256":"…","pixelWidth":3000,"pixelHeight":4000},
///  "thumbnailKey":"edits/2026/11/IMG_1.jpg/1764160000000-6f1….thumb.jpg"}
/// ```
///
/// A revert is a revision with `"reverted":true` and nothing else. The rendered file and the thumbnail are written
/// first, then the manifest (each with `If-None-Match: *`): a manifest in the bucket always names files that are
/// there. `basedOn` names the revision whose rendering the edit was applied to when its editor could not resume
/// the adjustments (`null`: applied to the original).
struct EditManifest: Codable, Sendable, Hashable {
    var format = 1
    var original: String
    var revision: String
    var reverted = false
    var adjustment: Adjustment?
    var basedOn: String?
    var rendered: Rendered?
    var thumbnailKey: String?

    struct Adjustment: Codable, Sendable, Hashable {
        var formatIdentifier: String
        var formatVersion: String
        var data: Data  // base64 in JSON
    }

    struct Rendered: Codable, Sendable, Hashable {
        var key: String
        var size: Int64
        var etag: String?
        var sha256: String
        var pixelWidth: Int
        var pixelHeight: Int
    }

    var adjustmentData: AdjustmentData? {
        adjustment.map {
            AdjustmentData(formatIdentifier: $0.formatIdentifier, formatVersion: $0.formatVersion, data: $0.data)
        }
    }

    var encoded: String { String(decoding: encodedData, as: UTF8.self) }
    var encodedData: Data { (try? JournalChange.encoder.encode(self)) ?? Data() }

    /// A manifest read from the bucket, the journal or the catalog; `nil` when it is not one this version
    /// understands or names a revision that is not well formed.
    static func decode(_ data: Data) -> EditManifest? {
        guard let manifest = try? JSONDecoder().decode(EditManifest.self, from: data), manifest.format == 1,
            EditRevisionID.isValid(manifest.revision), manifest.reverted || manifest.rendered != nil
        else { return nil }
        return manifest
    }

    static func decode(_ text: String) -> EditManifest? { decode(Data(text.utf8)) }
}

extension BucketLayout {
    /// The folder of an original's edit revisions: `edits/<path>/` for `originals/<path>`; nil when the key is
    /// not under the originals prefix.
    func editsFolder(forOriginalKey originalKey: String) -> String? {
        guard originalKey.hasPrefix(originalsPrefix) else { return nil }
        return editsPrefix + originalKey.dropFirst(originalsPrefix.count) + "/"
    }

    /// The original's key and the revision for a manifest key (`edits/<path>/<revision>.json`); nil otherwise.
    func editManifest(key: String) -> (original: String, revision: String)? {
        guard key.hasPrefix(editsPrefix), key.hasSuffix(".json"), let slash = key.lastIndex(of: "/") else {
            return nil
        }
        let path = key[key.index(key.startIndex, offsetBy: editsPrefix.count)..<slash]
        let revision = String(key[key.index(after: slash)...].dropLast(".json".count))
        guard !path.isEmpty, EditRevisionID.isValid(revision) else { return nil }
        return (originalsPrefix + path, revision)
    }
}
