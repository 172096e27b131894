import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets add`: imports files and folders into the library and (unless `--no-wait`) waits for their uploads.
struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import files into the library and upload them.",
        discussion: """
            Each file becomes an asset at once (local, full); its upload runs with progress and the command waits \
            for it unless --no-wait (then the next sync, or any command that waits, uploads it). A file whose \
            bytes the library already holds adds nothing. A folder adds every regular file in it and its \
            subfolders (hidden ones and links left out), in name order. Prints "<id>\\t<key>" per file (also with \
            --quiet, which leaves out only the progress): the key the original is stored under — printed once the \
            uploads are done, since an upload that finds another object at its name stores it under a new one. \
            With --no-wait the key printed is the one planned, which the upload may still change.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Files to import, or folders (every file in them, recursively).") var files: [String]
    @Flag(name: .long, help: "Take the files instead of copying them (removed once imported).") var move = false
    @Flag(name: .long, help: "Import only; do not wait for the uploads.") var noWait = false
    @Option(help: "Also add the files to this album (id, title or folder path), in the order given.")
    var album: String?

    /// The files named, with each folder replaced by the regular files under it (recursively, in name order;
    /// names starting with a dot and symbolic links are skipped). A name that does not exist is kept, so the import
    /// reports it.
    static func expand(_ names: [String]) throws -> [URL] {
        var result: [URL] = []
        for name in names {
            let url = URL(fileURLWithPath: name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: name, isDirectory: &isFolder), isFolder.boolValue else {
                result.append(url)
                continue
            }
            var found: [String] = []
            try Self.walk(name, relative: "", into: &found)
            result += found.sorted().map { url.appendingPathComponent($0) }
        }
        return result
    }

    /// Collects the regular files under `folder` (names relative to the top), reading each folder once with
    /// `readdir`: its entry types say which are files, folders and links without a `stat` per file.
    private static func walk(_ folder: String, relative: String, into found: inout [String]) throws {
        guard let handle = opendir(folder) else {
            throw CLIError("cannot read the folder \(folder): \(String(cString: strerror(errno)))")
        }
        defer { closedir(handle) }
        var folders: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }
            var type = entry.pointee.d_type
            if type == UInt8(DT_UNKNOWN) {
                var status = stat()
                guard lstat(folder + "/" + name, &status) == 0 else { continue }
                type =
                    status.st_mode & S_IFMT == S_IFDIR
                    ? UInt8(DT_DIR) : status.st_mode & S_IFMT == S_IFREG ? UInt8(DT_REG) : 0
            }
            let path = relative.isEmpty ? name : relative + "/" + name
            if type == UInt8(DT_REG) {
                found.append(path)
            } else if type == UInt8(DT_DIR) {
                folders.append(name)
            }
        }
        for name in folders {
            try walk(folder + "/" + name, relative: relative.isEmpty ? name : relative + "/" + name, into: &found)
        }
    }

    func run() async throws {
        keepFreedMemoryForReuse()
        try await runReportingErrors {
            let urls = try Self.expand(files)
            let library = try await openLibraryForChange(global, noWait: noWait, runsDownloads: !noWait)
            defer { library.close() }
            let target = try album.map { try AlbumNames.album($0, in: library) }
            let ids = try await library.performChanges { changes in
                let created = urls.map { url in
                    changes.createAsset(fromFileAt: url, options: AssetCreationOptions(movesFile: move))
                }
                if let target { changes.addAssets(created, to: target) }
            }
            // The results (`-q` keeps them): "<id>\t<key>" with the key the catalog holds when they are printed.
            let printResults = {
                let keys = Dictionary(
                    try library.fetchAssets(withLocalIdentifiers: ids).map { ($0.localIdentifier, $0.key) }
                ) { first, _ in first }
                let output = BufferedOutput()
                for id in ids { output.write("\(id)\t\(TextEscape.cStyle(keys[id] ?? ""))\n") }
                output.flush()
            }
            guard !noWait else { return try printResults() }
            guard sendsNow(library, noWait: noWait) else {
                noteOfflineChange()
                return try printResults()
            }
            let quiet = global.quiet
            do {
                try await withInterrupt { try await waitForUploads(of: library, quiet: quiet, ids: ids) }
            } catch {
                // Imported all the same (a failed or interrupted upload is tried again by the next sync): their
                // lines are printed, with the planned key where the upload did not finish.
                try? printResults()
                throw error
            }
            // After the uploads: an upload that found another object at the key stored the original under a new
            // one, and the key printed is that one.
            try printResults()
        }
    }
}
