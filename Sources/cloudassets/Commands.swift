import ArgumentParser
import CloudAssets
import Foundation

/// Runs a command body, turning any error into one line on stderr and a non-zero exit.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch is CancellationError {
        Terminal.shared.err("error: cancelled")
        throw ExitStatus.interrupted.exitCode
    } catch {
        Terminal.shared.endLive()
        Terminal.shared.err("error: \(UserMessage.describe(error))")
        throw ExitStatus.of(error).exitCode
    }
}

/// Finds assets by local identifier or key (with or without the originals prefix); assets in the trash only
/// when `includingTrash`.
func resolveAssets(_ names: [String], in library: AssetLibrary, includingTrash: Bool = false) throws -> [Asset] {
    try names.map { name in
        if let asset = try library.asset(withLocalIdentifier: name), includingTrash || !asset.isTrashed { return asset }
        for key in [name, library.configuration.layout.originalsPrefix + name] {
            if let asset = try library.asset(forKey: key), includingTrash || !asset.isTrashed { return asset }
        }
        throw CLIError("unknown asset \(name): no asset has that id or key (run `cloudassets sync` first?)")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bucket and update the catalog.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Do not fetch thumbnails after listing.") var noThumbnails = false
    @Flag(
        name: .long,
        help: "Move the library to this endpoint/bucket (it refuses another one otherwise); matching files stay.")
    var rebind = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false, rebind: rebind)
            defer { library.close() }
            if !global.quiet {
                // On a terminal, a line that says what the command is waiting for (replaced by the summary).
                Terminal.shared.live([
                    "syncing s3://\(library.configuration.bucket) at "
                        + "\(library.configuration.endpoint?.absoluteString ?? "AWS")…"
                ])
            }
            let summary = try await withInterrupt { try await library.sync(fetchThumbnails: !noThumbnails) }
            Terminal.shared.endLive()
            for skipped in summary.skipped {
                Terminal.shared.err("skipped \(skipped.key): \(skipped.reason)")
            }
            if !global.quiet {
                Terminal.shared.out(
                    "synced: \(summary.listed) listed, \(summary.inserted) new, \(summary.contentChanged) changed, "
                        + "\(summary.metadataChanged) metadata, \(summary.removed) removed, "
                        + "\(summary.thumbnailsFetched) thumbnails, \(summary.sidecarsRead) shared edits merged, "
                        + "\(summary.purged) purged from the trash")
            }
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List assets in the catalog.",
        discussion: """
            Text: a header line (ID STATE PINNED SIZE KEY; --no-header or --quiet drops it), then one line per \
            asset with those five tab-separated columns; in the key, a tab, newline, other control character or \
            backslash is written as a C escape (\\t, \\n, \\r, \\xHH, \\\\). JSON (--json): one array, one asset \
            object per line, with the fields creationDate, favorite, hasThumbnail, hidden, id, key, keywords, \
            mediaType, pinned, size, state, title, trashed, uploadState.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this state: cloudOnly, thumbnail, partial, full.") var state: String?
    @Option(help: "Only this media type: image, video, audio.") var type: String?
    @Option(help: "Only keys starting with this prefix.") var prefix: String?
    @Flag(help: "Only pinned assets.") var pinned = false
    @Flag(help: "Only favourites.") var favorite = false
    @Flag(help: "Only assets whose original is in the bucket.") var uploaded = false
    @Flag(help: "Only imports not in the bucket yet (pending, uploading or failed).") var notUploaded = false
    @Flag(help: "Only assets in the trash (left out otherwise).") var trashed = false
    // Unconditional: `--sort -date` takes `-date` as the value instead of reading it as a flag.
    @Option(parsing: .unconditional, help: "Sort by: date, key, size (prefix with - for descending).")
    var sort = "key"
    @Option(help: "At most this many assets.") var limit: Int?
    @Flag(help: "Print one JSON array (one asset object per line).") var json = false
    @Flag(name: .customLong("no-header"), help: "Leave out the header line of the text output.") var noHeader = false

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
            if let prefix { predicates.append(.keyPrefix(prefix)) }
            if favorite { predicates.append(.isFavorite(true)) }
            if uploaded { predicates.append(.uploadStates([.uploaded])) }
            if notUploaded { predicates.append(.uploadStates([.pendingUpload, .uploading, .uploadFailed])) }
            if trashed { predicates.append(.isTrashed(true)) }
            let descending = sort.hasPrefix("-")
            let sortKey: AssetSortDescriptor
            switch descending ? String(sort.dropFirst()) : sort {
            case "date": sortKey = .creationDate(ascending: !descending)
            case "key": sortKey = AssetSortDescriptor(.key, ascending: !descending)
            case "size": sortKey = AssetSortDescriptor(.size, ascending: !descending)
            default: throw CLIError("sort must be date, key or size (optionally with a leading -), not \(sort)")
            }
            var options = FetchOptions()
            options.predicate = predicates.isEmpty ? .all : .and(predicates)
            options.sortDescriptors = [sortKey]
            options.fetchLimit = limit
            options.includeHiddenAssets = true
            options.includeTrashedAssets = trashed
            let assets = try library.fetchAssets(options)
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
                        "\(a.id)\t\(a.availability.name)\t\(a.isPinned ? "pinned" : "-")\t\(a.size)\t"
                            + TextEscape.cStyle(a.key) + "\n")
                }
            }
            output.flush()
        }
    }
}

/// Standard output through a 64 KiB buffer: one `write(2)` per buffer instead of one per line.
final class BufferedOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        Terminal.shared.endLive()
        buffer.withUnsafeBytes { FileHandle.standardOutput.write(Data($0)) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// C-style escapes for a text column: `\\`, `\t`, `\n`, `\r`, and `\xHH` for any other control character
/// (below U+0020, and U+007F). Any other character is kept as is, so a plain key prints unchanged, and the
/// escaped text holds no tab or newline.
enum TextEscape {
    static func cStyle(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\x" + String(format: "%02X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// One asset in `ls --json`, written by hand (keys in sorted order, as `JSONEncoder`'s `.sortedKeys` did):
/// JSON-encoding 20,000 rows through `JSONEncoder` and an `ISO8601DateFormatter` per row cost 8× the text form.
enum AssetJSON {
    static func write(_ a: Asset, to output: BufferedOutput) {
        output.write(
            "{\"creationDate\":\"\(ISODate.string(a.creationDate))\",\"favorite\":\(a.isFavorite),"
                + "\"hasThumbnail\":\(a.hasThumbnail),\"hidden\":\(a.isHidden),"
                + "\"id\":\"\(a.localIdentifier)\",\"key\":\(JSONText.string(a.key)),"
                + "\"keywords\":[\(a.keywords.map(JSONText.string).joined(separator: ","))],"
                + "\"mediaType\":\"\(a.mediaType.name)\",\"pinned\":\(a.isPinned),\"size\":\(a.size),"
                + "\"state\":\"\(a.availability.name)\",\"title\":\(a.title.map(JSONText.string) ?? "null"),"
                + "\"trashed\":\(a.isTrashed),\"uploadState\":\"\(a.uploadState.name)\"}")
    }
}

/// JSON string literals: quotes, backslashes and control characters escaped, everything else kept.
enum JSONText {
    static func string(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
        else { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += "\\u" + String(format: "%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Dates as ISO 8601 in UTC to the second (`2024-05-01T12:00:00Z`, as `ISO8601DateFormatter` writes them),
/// without a formatter object.
enum ISODate {
    static func string(_ date: Date) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}

extension AssetAvailability {
    var name: String {
        switch self {
        case .cloudOnly: "cloudOnly"
        case .thumbnail: "thumbnail"
        case .partial: "partial"
        case .full: "full"
        }
    }

    init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = match
    }
}

extension UploadState {
    var name: String {
        switch self {
        case .uploaded: "uploaded"
        case .pendingUpload: "pending"
        case .uploading: "uploading"
        case .uploadFailed: "failed"
        }
    }
}

extension MediaType {
    var name: String {
        switch self {
        case .image: "image"
        case .video: "video"
        case .audio: "audio"
        case .unknown: "unknown"
        }
    }

    init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = match
    }
}
