import AssetStore
import Foundation
import S3Transfer

extension SyncEngine {
    /// Reads the sidecars that changed since this library last merged them (their ETags differ from the ones it
    /// remembers) and merges them, in batches. Part of ``AssetLibrary/sync(mode:fetchThumbnails:progress:)``.
    /// - Returns: How many sidecars were read.
    func pullSharedMetadata(remote: LibraryRemote) async throws -> Int {
        let layout = configuration.layout
        var listed: [String: String] = [:]
        for try await page in remote.client.listAllObjects(bucket: configuration.bucket, prefix: layout.metadataPrefix)
        {
            for object in page.objects {
                if let original = layout.originalKey(forSidecarKey: object.key) { listed[original] = object.etag }
            }
        }
        guard !listed.isEmpty else { return 0 }
        var stale: [(id: Int64, key: String)] = []
        for chunk in Array(listed.keys).chunked(500) {
            for (key, record) in try catalog.store.records(keys: Array(chunk)) {
                guard let id = record.id, let etag = listed[key],
                    record.sidecarETag.map({ !S3ETag.same($0, etag) }) ?? true
                else { continue }
                stale.append((id, key))
            }
        }
        var read = 0
        for batch in stale.chunked(64) {
            let states = try await withThrowingTaskGroup(of: (Int64, SharedMetadata, String)?.self) { group in
                for (id, key) in batch {
                    guard let sidecarKey = layout.sidecarKey(forOriginalKey: key) else { continue }
                    group.addTask {
                        let (state, etag) = try await remote.readSidecar(sidecarKey)
                        guard let state, let etag else { return nil }
                        return (id, state, etag)
                    }
                }
                var result: [(id: Int64, state: SharedMetadata, etag: String?)] = []
                while let item = try await group.next() { if let item { result.append((item.0, item.1, item.2)) } }
                return result
            }
            read += states.count
            try catalog.adoptSharedMetadata(states)
        }
        return read
    }
}
