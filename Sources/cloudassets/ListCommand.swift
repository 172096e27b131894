import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets ls`: the catalog's assets, filtered and sorted, as tab-separated text or JSON.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List assets in the catalog.",
        discussion: """
            Hidden assets (`cloudassets hide`) and assets in the trash are left out unless asked for \
            (--include-hidden or --hidden; --trashed). Text: a header line (ID STATE PINNED SIZE KEY; --no-header or --quiet drops it), then one line per \
            asset with those five tab-separated columns; in the key, a tab, newline, other control character or \
            backslash is written as a C escape (\\t, \\n, \\r, \\xHH, \\\\). JSON (--json): one array, one asset \
            object per line, with the fields creationDate, favorite, hasThumbnail, hidden, id, key, keywords, \
            mediaType, pinned, size, state, title, trashed, uploadState.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this state: cloudOnly, thumbnail, partial, full.") var state: String?
    @Option(help: "Only this media type: image, video, audio.") var type: String?
    @Option(help: "Only keys starting with this prefix (the originals prefix may be left out).") var prefix: String?
    @Flag(help: "Only pinned assets.") var pinned = false
    @Flag(help: "Only favourites.") var favorite = false
    @Flag(help: "Only assets whose original is in the bucket.") var uploaded = false
    @Flag(help: "Only imports not in the bucket yet (pending, uploading or failed).") var notUploaded = false
    @Flag(help: "Only assets in the trash (left out otherwise).") var trashed = false
    @Flag(help: "Only hidden assets (left out otherwise).") var hidden = false
    @Flag(help: "Hidden assets too (left out otherwise).") var includeHidden = false
    // Unconditional: `--sort -date` takes `-date` as the value instead of reading it as a flag.
    @Option(
        parsing: .unconditional,
        help:
            "Sort by: date, added, key, size, duration (prefix with - for descending); default key, an album's own order with --album."
    )
    var sort: String?
    @Option(help: "Only the assets of this album or smart album (id, title or folder path), in its order.")
    var album: String?
    // Unconditional: `--limit -1` is read as a value (and refused by validate), not as a flag.
    @Option(parsing: .unconditional, help: "At most this many assets.") var limit: Int?
    @Flag(help: "Print one JSON array (one asset object per line).") var json = false
    @Flag(name: .customLong("no-header"), help: "Leave out the header line of the text output.") var noHeader = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, not \(limit)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
            defer { library.close() }
            var predicates: [AssetPredicate] = []
            if let state {
                guard let availability = AssetAvailability(name: state) else {
                    throw CLIError("state must be cloudOnly, thumbnail, partial or full, not \(state)")
                }
                predicates.append(.availability([availability]))
            }
            if let type {
                guard let media = MediaType(name: type) else {
                    throw CLIError("type must be image, video or audio, not \(type)")
                }
                predicates.append(.mediaTypes([media]))
            }
            if let prefix { predicates.append(.keyPrefix(AssetArguments.keyPrefix(prefix, in: library))) }
            if favorite { predicates.append(.isFavorite(true)) }
            if uploaded { predicates.append(.uploadStates([.uploaded])) }
            if notUploaded { predicates.append(.uploadStates([.pendingUpload, .uploading, .uploadFailed])) }
            if trashed { predicates.append(.isTrashed(true)) }
            if hidden { predicates.append(.isHidden(true)) }
            let sort = self.sort ?? "key"
            let descending = sort.hasPrefix("-")
            let sortKey: AssetSortDescriptor
            switch descending ? String(sort.dropFirst()) : sort {
            case "date": sortKey = .creationDate(ascending: !descending)
            case "key": sortKey = AssetSortDescriptor(.key, ascending: !descending)
            case "size": sortKey = AssetSortDescriptor(.size, ascending: !descending)
            case "added": sortKey = .addedDate(ascending: !descending)
            case "duration": sortKey = .duration(ascending: !descending)
            default:
                throw CLIError(
                    "sort must be date, added, key, size or duration (optionally with a leading -), not \(sort)")
            }
            var options = FetchOptions()
            options.predicate = predicates.isEmpty ? .all : .and(predicates)
            options.sortDescriptors = album != nil && self.sort == nil ? [] : [sortKey]
            options.fetchLimit = limit
            // As PhotoKit's default fetches: hidden assets only when asked for (`hide` says so too).
            options.includeHiddenAssets = hidden || includeHidden
            options.includeTrashedAssets = trashed
            let assets =
                try album.map { try library.fetchAssets(in: AlbumNames.album($0, in: library), options: options) }
                ?? library.fetchAssets(options)
            let output = BufferedOutput()
            if json {
                output.write("[")
                var first = true
                for a in assets where !pinned || a.isPinned {
                    output.write(first ? "\n" : ",\n")
                    first = false
                    AssetJSON.write(a, to: output)
                }
                output.write(first ? "]\n" : "\n]\n")
            } else {
                if !noHeader && !global.quiet { output.write("ID\tSTATE\tPINNED\tSIZE\tKEY\n") }
                for a in assets where !pinned || a.isPinned {
                    output.write(
                        "\(a.localIdentifier)\t\(a.availability.name)\t\(a.isPinned ? "pinned" : "-")\t\(a.size)\t"
                            + TextEscape.cStyle(a.key) + "\n")
                }
            }
            output.flush()
        }
    }
}
