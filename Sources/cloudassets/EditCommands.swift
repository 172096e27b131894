import ArgumentParser
import CloudAssets
import Foundation

/// Waits for the library's uploads, drawing one live line per upload in flight (on a terminal), then reports the
/// imports whose upload failed. A failure leaves the original in the library: the next sync tries again.
func waitForUploads(of library: AssetLibrary, quiet: Bool, ids: [String]? = nil) async throws {
    let drawing = Task {
        while !Task.isCancelled {
            if !quiet, let status = try? library.uploads, !status.inFlight.isEmpty {
                Terminal.shared.live(
                    status.inFlight.prefix(8).map { p in
                        let percent = p.totalBytes > 0 ? Int(Double(p.bytesSent) / Double(p.totalBytes) * 100) : 100
                        return "uploading \(p.localIdentifier)  \(percent)%  \(Format.bytes(p.bytesSent))"
                            + " of \(Format.bytes(p.totalBytes))"
                    } + (status.pending > 0 ? ["\(status.pending) waiting"] : []))
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
    await withTaskCancellationHandler {
        await library.waitForUploads()
    } onCancel: {
        library.close()
    }
    drawing.cancel()
    Terminal.shared.endLive()
    let failed = try library.fetchAssets(
        FetchOptions(predicate: .uploadStates([.uploadFailed]), includeHiddenAssets: true, includeTrashedAssets: true))
    let relevant = failed.filter { ids == nil || ids!.contains($0.localIdentifier) }
    for asset in relevant {
        Terminal.shared.err("upload failed: \(asset.key): \(asset.uploadError ?? "unknown error")")
    }
    if !relevant.isEmpty {
        throw CLIError(
            "\(relevant.count) upload(s) failed; the originals are kept in the library and `cloudassets sync` tries "
                + "again", status: .uploadFailed)
    }
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import files into the library and upload them.",
        discussion: """
            Each file becomes an asset at once (local, full); its upload runs with progress and the command waits \
            for it unless --no-wait (then the next sync, or any command that waits, uploads it). A file whose \
            bytes the library already holds adds nothing. A folder adds every regular file in it and its \
            subfolders (hidden ones and links left out), in name order. Prints "<id>\\t<key>" per file.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Files to import, or folders (every file in them, recursively).") var files: [String]
    @Flag(name: .long, help: "Take the files instead of copying them (removed once imported).") var move = false
    @Flag(name: .long, help: "Import only; do not wait for the uploads.") var noWait = false

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
        try await runReportingErrors {
            let urls = try Self.expand(files)
            let library = try await global.openLibrary(runsDownloads: !noWait)
            defer { library.close() }
            let ids = try await library.performChanges { changes in
                for url in urls {
                    changes.createAsset(fromFileAt: url, options: AssetCreationOptions(movesFile: move))
                }
            }
            if !global.quiet {
                let keys = Dictionary(
                    try library.fetchAssets(withLocalIdentifiers: ids).map { ($0.localIdentifier, $0.key) }
                ) { first, _ in first }
                let output = BufferedOutput()
                for id in ids { output.write("\(id)\t\(TextEscape.cStyle(keys[id] ?? ""))\n") }
                output.flush()
            }
            if !noWait {
                let quiet = global.quiet
                try await withInterrupt { try await waitForUploads(of: library, quiet: quiet, ids: ids) }
            }
        }
    }
}

/// The commands that change shared properties of assets named by id or key: one change, then the edits go to the
/// bucket (unless --no-wait). An edit that cannot reach the bucket now is kept and sent by the next sync (a note
/// says so; the command still succeeds: the change is made).
protocol EditCommand: AsyncParsableCommand {
    var global: GlobalOptions { get }
    var assets: [String] { get }
    var noWait: Bool { get }
    func record(_ assets: [Asset], in changes: AssetChangeRequests)
}

extension EditCommand {
    func runEdit() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            let targets = try resolveAssets(assets, in: library, includingTrash: true)
            try await library.performChanges { record(targets, in: $0) }
            guard !noWait && library.networkPolicy != .offline else { return }
            try await withInterrupt { await library.waitForUploads() }
            if try library.uploads.unsharedEdits > 0 {
                Terminal.shared.err(
                    "note: the change is recorded here but could not reach the bucket yet; the next sync sends it")
            }
        }
    }
}

struct Remove: EditCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Move assets to the trash (restore brings them back; empty-trash purges).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.deleteAssets(assets) }
    func run() async throws { try await runEdit() }
}

struct Restore: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Take assets out of the trash.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.restoreAssets(assets) }
    func run() async throws { try await runEdit() }
}

struct Favorite: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Mark assets as favourites.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setFavorite(true, for: assets) }
    func run() async throws { try await runEdit() }
}

struct Unfavorite: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Unmark assets as favourites.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setFavorite(false, for: assets) }
    func run() async throws { try await runEdit() }
}

struct Hide: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Hide assets (left out of default listings).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setHidden(true, for: assets) }
    func run() async throws { try await runEdit() }
}

struct Unhide: EditCommand {
    static let configuration = CommandConfiguration(abstract: "Show hidden assets again.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Asset ids or keys.") var assets: [String]
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
    func record(_ assets: [Asset], in changes: AssetChangeRequests) { changes.setHidden(false, for: assets) }
    func run() async throws { try await runEdit() }
}

struct EmptyTrash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "empty-trash", abstract: "Purge the trash: delete its assets' objects from the bucket.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false)
            defer { library.close() }
            let purged = try await withInterrupt { try await library.emptyTrash() }
            if !global.quiet { Terminal.shared.out("purged \(purged) asset(s)") }
        }
    }
}
