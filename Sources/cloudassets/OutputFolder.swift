import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `get --output-folder DIR`: where each asset's file goes — `DIR/<key below the originals prefix>`, subfolders
/// made as needed. A key whose path would leave the folder (an empty, `.` or `..` segment, a leading `/`) is
/// refused for that asset; the folder must exist and may not be the library's folder or inside it. Files are
/// written by `AssetLibrary.writeData(for:toFile:options:)`, which never replaces one.
struct OutputFolder: Sendable {
    let folder: URL
    let originalsPrefix: String

    init(path: String, libraryFolder: URL, originalsPrefix: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError("--output-folder \(path) is not an existing folder")
        }
        folder = URL(fileURLWithPath: path, isDirectory: true)
        self.originalsPrefix = originalsPrefix
        try OutputSink.refuseInside(libraryFolder, folder.appendingPathComponent("x"))
    }

    /// The file for `key` (its folders made), or an error naming the key when its path would leave the folder.
    func file(for key: String) throws -> URL {
        let relative = key.hasPrefix(originalsPrefix) ? String(key.dropFirst(originalsPrefix.count)) : key
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }),
            !relative.utf8.contains(0)
        else {
            throw CLIError("\(key): its key is no path below the output folder (an empty, . or .. part)")
        }
        var target = folder
        for segment in segments { target.appendPathComponent(String(segment)) }
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        return target
    }
}
