import AssetStore
import Foundation

/// A fresh folder under the temporary directory, removed by `cleanup()`.
struct TemporaryFolder {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("AssetStoreTests-\(UUID().uuidString)")
    }

    var databaseURL: URL { url.appendingPathComponent(AssetStore.databaseFileName) }

    func cleanup() {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: url)
    }
}

/// A listing-style record with deterministic dates derived from `index`.
func sampleRecord(_ index: Int, key: String? = nil, etag: String = "etag") -> AssetRecord {
    AssetRecord(
        key: key ?? "originals/\(index).jpg", size: Int64(1000 + index), etag: etag,
        lastModified: Date(timeIntervalSinceReferenceDate: Double(index)),
        creationDate: Date(timeIntervalSinceReferenceDate: Double(index * 7 % 1000)), mediaType: .image,
        pixelWidth: 100 + index, pixelHeight: 50)
}
