import AssetStore
import Foundation

/// Where the library keeps bytes, all under its store folder, named by local identifier — never by the
/// remote key, so no key (however hostile: `..`, absolute, NUL, 4 KiB long) can point outside the folder.
///
/// ```
/// <store>/originals/<id>.<ext>         verified originals (state `full`)
/// <store>/originals/<id>.<ext>.part    a download in progress (kept for resume)
/// <store>/partial/<id>.ranges          sparse file of verified byte ranges (state `partial`)
/// <store>/thumbnails/<id>.jpg          thumbnails (state `thumbnail` and above)
/// ```
struct LocalFiles: Sendable {
    let root: URL

    var originalsFolder: URL { root.appendingPathComponent("originals", isDirectory: true) }
    var partialFolder: URL { root.appendingPathComponent("partial", isDirectory: true) }
    var thumbnailsFolder: URL { root.appendingPathComponent("thumbnails", isDirectory: true) }

    func createFolders() throws {
        for folder in [originalsFolder, partialFolder, thumbnailsFolder] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
    }

    /// A short, safe extension taken from the key (letters and digits only), so a verified original keeps a
    /// type other tools recognise.
    static func safeExtension(of key: String) -> String? {
        guard let dot = key.lastIndex(of: "."), !key[dot...].contains("/") else { return nil }
        let ext = key[key.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 8, ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return nil
        }
        return ext.lowercased()
    }

    func original(id: Int64, key: String) -> URL {
        let name = Self.safeExtension(of: key).map { "\(id).\($0)" } ?? "\(id)"
        return originalsFolder.appendingPathComponent(name)
    }

    func partial(id: Int64) -> URL { partialFolder.appendingPathComponent("\(id).ranges") }
    func thumbnail(id: Int64) -> URL { thumbnailsFolder.appendingPathComponent("\(id).jpg") }

    /// Every file that holds bytes of this asset's original (verified, in progress, ranges, and sidecars).
    func originalPaths(id: Int64, key: String) -> [String] {
        let full = original(id: id, key: key).path
        let ranges = partial(id: id).path
        return [full, full + ".part", full + ".part.json", ranges, ranges + ".json"]
    }

    func allPaths(id: Int64, key: String) -> [String] {
        originalPaths(id: id, key: key) + [thumbnail(id: id).path]
    }

    /// The local identifier a file in one of the folders belongs to (its name up to the first dot).
    static func identifier(ofFileNamed name: String) -> Int64? {
        Int64(name.prefix { $0 != "." })
    }
}
