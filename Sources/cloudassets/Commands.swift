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
        Terminal.shared.err("cancelled")
        throw ExitCode(130)
    } catch {
        Terminal.shared.endLive()
        Terminal.shared.err("error: \(UserMessage.describe(error))")
        throw ExitCode(UserMessage.exitCode(for: error))
    }
}

/// Finds assets by local identifier or key (with or without the originals prefix).
func resolveAssets(_ names: [String], in library: AssetLibrary) throws -> [Asset] {
    try names.map { name in
        if let asset = try library.asset(withLocalIdentifier: name) { return asset }
        for key in [name, library.configuration.layout.originalsPrefix + name] {
            if let asset = try library.asset(forKey: key) { return asset }
        }
        throw CLIError("unknown asset \(name): no asset has that id or key (run `cloudassets sync` first?)")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bucket and update the catalog.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Do not fetch thumbnails after listing.") var noThumbnails = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(runsDownloads: false)
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
                        + "\(summary.thumbnailsFetched) thumbnails")
            }
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List assets in the catalog.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Only this state: cloudOnly, thumbnail, partial, full.") var state: String?
    @Option(help: "Only this media type: image, video, audio.") var type: String?
    @Option(help: "Only keys starting with this prefix.") var prefix: String?
    @Flag(help: "Only pinned assets.") var pinned = false
    @Option(help: "Sort by: date, key, size (prefix with - for descending).") var sort = "key"
    @Option(help: "At most this many assets.") var limit: Int?
    @Flag(help: "Print one JSON array.") var json = false

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
            let descending = sort.hasPrefix("-")
            let sortKey: AssetSortDescriptor
            switch sort.trimmingCharacters(in: CharacterSet(charactersIn: "-")) {
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
            var assets = Array(try library.fetchAssets(options))
            if pinned { assets = assets.filter(\.isPinned) }
            if json {
                let rows = assets.map(AssetJSON.init)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                Terminal.shared.out(String(decoding: try encoder.encode(rows), as: UTF8.self))
            } else {
                for a in assets {
                    Terminal.shared.out(
                        "\(a.id)\t\(a.availability.name)\t\(a.isPinned ? "pinned" : "-")\t\(a.size)\t\(a.key)")
                }
            }
        }
    }
}

/// One asset in `ls --json` and `watch`.
struct AssetJSON: Encodable {
    var id: String
    var key: String
    var size: Int64
    var state: String
    var pinned: Bool
    var mediaType: String
    var creationDate: String
    var hasThumbnail: Bool

    init(_ a: Asset) {
        id = a.localIdentifier
        key = a.key
        size = a.size
        state = a.availability.name
        pinned = a.isPinned
        mediaType = a.mediaType.name
        creationDate = ISO8601DateFormatter().string(from: a.creationDate)
        hasThumbnail = a.hasThumbnail
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
