import Foundation

/// Where a target's committed inputs live and how to list them.
package enum FuzzFiles {
    /// The files at `url`: the file itself, or every regular file in the folder (not its subfolders), by name.
    package static func inputs(at url: URL) -> [URL] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { return [url] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.sorted().map { url.appendingPathComponent($0) }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }

    /// `Fuzz/corpus/NAME` (minimised corpus) and `Fuzz/regressions/NAME` (every input that ever failed) under the
    /// package root.
    package static func committedFolders(of target: FuzzTarget, packageRoot: URL) -> [URL] {
        ["corpus", "regressions"].map {
            packageRoot.appendingPathComponent("Fuzz").appendingPathComponent($0).appendingPathComponent(target.name)
        }
    }
}
