package import AssetStore
package import Foundation

/// Reads one checkpoint part's lines (already inflated) where they lie: no `Data` slice per line or per field.
package enum CheckpointPartReader {
    /// What a part holds.
    package struct Contents: Sendable {
        /// The records of the assets that passed ``BucketInput/checkpointAsset(_:layout:now:learnedAt:)``.
        package var records: [AssetRecord]
        /// One entry per asset that did not, with why.
        package var skipped: [SyncSummary.SkippedObject]
        /// The lines read (valid or not): the caller checks them against the manifest's count.
        package var lines: Int
    }

    /// The part's assets, validated; nil when a line is not an asset at all (the part is corrupt).
    package static func read(
        _ lines: Data, part: CheckpointManifest.Part, layout: BucketLayout, now: Date, learnedAt: Date
    ) -> Contents? {
        // Never allocated from the claimed count alone: it is capped, and so is this.
        var contents = Contents(records: [], skipped: [], lines: 0)
        contents.records.reserveCapacity(min(part.assets, SyncEngine.checkpointPartAssets))
        let parsed = lines.withUnsafeBytes { buffer -> Bool in
            var start = 0
            for index in 0...buffer.count where index == buffer.count || buffer[index] == 0x0A {
                defer { start = index + 1 }
                guard index > start else { continue }
                let line = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
                guard let asset = CheckpointAsset(line: line) else { return false }
                contents.lines += 1
                switch BucketInput.checkpointAsset(asset, layout: layout, now: now, learnedAt: learnedAt) {
                case .success(let record): contents.records.append(record)
                case .failure(let rejection):
                    contents.skipped.append(
                        SyncSummary.SkippedObject(key: part.key, reason: "line \(contents.lines): \(rejection.reason)"))
                }
            }
            return true
        }
        return parsed ? contents : nil
    }
}
