package import Foundation

/// A revision identifier: `<13-digit milliseconds since 1970>-<device>`. Identifiers sort in time order (ties by
/// device), so "the latest revision" is the same for every library; they are safe as file and key names.
package enum EditRevisionID {
    package static func make(time: Int64, device: String) -> String {
        let digits = String(max(0, time))
        return String(repeating: "0", count: max(0, 13 - digits.count)) + digits + "-" + device
    }

    /// A new revision made now on `device`, later than every revision in `known`.
    package static func next(device: String, now: Date, after known: [String]) -> String {
        var time = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        if let latest = known.compactMap(Self.time(of:)).max(), latest >= time { time = latest + 1 }
        return make(time: time, device: device)
    }

    package static func time(of revision: String) -> Int64? {
        guard isValid(revision) else { return nil }
        return Int64(revision.prefix(13))
    }

    /// 13 digits, a dash, then 1–64 lower-case letters, digits or dashes.
    package static func isValid(_ revision: String) -> Bool {
        let bytes = Array(revision.utf8)
        guard bytes.count >= 15, bytes.count <= 78, bytes[13] == UInt8(ascii: "-") else { return false }
        return bytes[..<13].allSatisfy { $0 >= 48 && $0 <= 57 }
            && bytes[14...].allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || $0 == 45 }
    }

    /// Whether `a` is later than `b` (`nil`: no revision, earlier than any).
    package static func isLater(_ a: String, than b: String?) -> Bool {
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
package struct EditManifest: Codable, Sendable, Hashable {
    package var format = 1
    package var original: String
    package var revision: String
    package var reverted = false
    package var adjustment: Adjustment?
    package var basedOn: String?
    package var rendered: Rendered?
    package var thumbnailKey: String?

    package init(
        format: Int = 1, original: String, revision: String, reverted: Bool = false, adjustment: Adjustment? = nil,
        basedOn: String? = nil, rendered: Rendered? = nil, thumbnailKey: String? = nil
    ) {
        self.format = format
        self.original = original
        self.revision = revision
        self.reverted = reverted
        self.adjustment = adjustment
        self.basedOn = basedOn
        self.rendered = rendered
        self.thumbnailKey = thumbnailKey
    }

    package struct Adjustment: Codable, Sendable, Hashable {
        package var formatIdentifier: String
        package var formatVersion: String
        package var data: Data  // base64 in JSON

        package init(formatIdentifier: String, formatVersion: String, data: Data) {
            self.formatIdentifier = formatIdentifier
            self.formatVersion = formatVersion
            self.data = data
        }
    }

    package struct Rendered: Codable, Sendable, Hashable {
        package var key: String
        package var size: Int64
        package var etag: String?
        package var sha256: String
        package var pixelWidth: Int
        package var pixelHeight: Int

        package init(key: String, size: Int64, etag: String?, sha256: String, pixelWidth: Int, pixelHeight: Int) {
            self.key = key
            self.size = size
            self.etag = etag
            self.sha256 = sha256
            self.pixelWidth = pixelWidth
            self.pixelHeight = pixelHeight
        }
    }

    package var adjustmentData: AdjustmentData? {
        adjustment.map {
            AdjustmentData(formatIdentifier: $0.formatIdentifier, formatVersion: $0.formatVersion, data: $0.data)
        }
    }

    package var encoded: String { String(decoding: encodedData, as: UTF8.self) }
    // try?: encoding these string and number fields cannot fail
    package var encodedData: Data { (try? JournalChange.encoder.encode(self)) ?? Data() }

    /// A manifest read from the bucket, the journal or the catalog; `nil` when it is not one this version
    /// understands or names a revision that is not well formed.
    package static func decode(_ data: Data) -> EditManifest? {
        // try?: not a manifest this version reads is nil (documented)
        guard let manifest = try? JSONDecoder().decode(EditManifest.self, from: data), manifest.format == 1,
            EditRevisionID.isValid(manifest.revision), manifest.reverted || manifest.rendered != nil
        else { return nil }
        return manifest
    }

    package static func decode(_ text: String) -> EditManifest? { decode(Data(text.utf8)) }
}

extension BucketLayout {
    /// The folder of an original's edit revisions: `edits/<path>/` for `originals/<path>`; nil when the key is
    /// not under the originals prefix.
    package func editsFolder(forOriginalKey originalKey: String) -> String? {
        guard originalKey.hasPrefix(originalsPrefix) else { return nil }
        return editsPrefix + originalKey.dropFirst(originalsPrefix.count) + "/"
    }

    /// The original's key and the revision for a manifest key (`edits/<path>/<revision>.json`); nil otherwise.
    package func editManifest(key: String) -> (original: String, revision: String)? {
        guard key.hasPrefix(editsPrefix), key.hasSuffix(".json"), let slash = key.lastIndex(of: "/") else {
            return nil
        }
        let path = key[key.index(key.startIndex, offsetBy: editsPrefix.count)..<slash]
        let revision = String(key[key.index(after: slash)...].dropLast(".json".count))
        guard !path.isEmpty, EditRevisionID.isValid(revision) else { return nil }
        return (originalsPrefix + path, revision)
    }
}
