import Foundation

/// Checkpoints: a snapshot of the catalog's bucket state as of a journal position, so that a new library
/// bootstraps from the newest checkpoint plus the journal after it instead of listing (and HEADing) every object.
///
/// Layout, under ``BucketLayout/checkpointPrefix``:
///
///     checkpoints/<slot: 13-digit ms>/manifest.json           written last, with If-None-Match: the commit point
///     checkpoints/<slot>/<device>/part-<5 digits>.z           zlib streams of lines, one asset per line
///     checkpoints/<slot>/<device>/collections-<5 digits>.z    zlib streams of lines, one album or folder per line:
///                                                            its document's ETag, a tab, the document
///
/// A slot is a multiple of ``AssetLibrary/Configuration/checkpointInterval``: the first library to write a slot's
/// manifest wins it (the others delete the parts they wrote). The manifest names the journal position the
/// snapshot reflects (`time`, the writer's cursor), when the writer last listed the whole bucket, and the parts.
package struct CheckpointManifest: Codable, Sendable {
    package var format = 1
    package var device: String
    /// The journal position (milliseconds, the service's clock) the snapshot reflects.
    package var time: Int64
    /// When the writer last completed a full listing (milliseconds since 1970).
    package var lastFullSync: Int64
    package var assets: Int
    package var parts: [Part]
    /// The albums' and folders' documents as the writer had merged them from the bucket, with their ETags (absent
    /// in checkpoints written before albums were: a bootstrap then reads every document). A part's `assets` is
    /// its number of documents.
    package var collectionParts: [Part]? = nil

    package struct Part: Codable, Sendable {
        package var key: String
        package var assets: Int
        /// Uncompressed bytes (the room to inflate into).
        package var bytes: Int

        package init(key: String, assets: Int, bytes: Int) {
            self.key = key
            self.assets = assets
            self.bytes = bytes
        }
    }
}

/// Checkpoint keys.
package enum CheckpointKey {
    package static func slotFolder(prefix: String, slot: Int64) -> String {
        JournalKey.start(prefix: prefix, time: slot) + "/"
    }

    package static func manifest(prefix: String, slot: Int64) -> String {
        slotFolder(prefix: prefix, slot: slot) + "manifest.json"
    }

    package static func part(prefix: String, slot: Int64, device: String, index: Int) -> String {
        let number = String(index)
        return slotFolder(prefix: prefix, slot: slot) + device + "/part-"
            + String(repeating: "0", count: max(0, 5 - number.count)) + number + ".z"
    }

    package static func collectionPart(prefix: String, slot: Int64, device: String, index: Int) -> String {
        let number = String(index)
        return slotFolder(prefix: prefix, slot: slot) + device + "/collections-"
            + String(repeating: "0", count: max(0, 5 - number.count)) + number + ".z"
    }
}
