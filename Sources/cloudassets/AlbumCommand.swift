import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets album`: albums and folders — list, create, rename, delete, add, remove and reorder assets.
struct Album: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List and change albums and folders.",
        discussion: """
            An album is named by its id, its title (when no other album has it), or its path of folders \
            ("Trips/Italy/Rome"); smart albums (Favorites, Recently Added, Videos, Edited, Hidden, Recently Deleted) by \
            title or id. A change is sent to the bucket before the command exits (unless --no-wait, or offline: then \
            with the next sync), and reaches the other libraries at their next sync. With CLOUDASSETS_KEY_FOLDERS=1 \
            (config key keyFolders) the bucket's folders of keys are listed too (kinds keyFolder and keyAlbum: \
            "originals/Trips/Rome/" is the album Trips/Rome); they follow the keys and cannot be changed.
            """,
        subcommands: [
            AlbumList.self, AlbumCreate.self, AlbumRename.self, AlbumRemove.self, AlbumAdd.self, AlbumTakeOut.self,
            AlbumMove.self,
        ])
}

/// Finds albums and folders by what a user types.
enum AlbumNames {
    /// Every album and folder with its path ("Trips/Italy/Rome").
    static func paths(in library: AssetLibrary) throws -> (
        albums: [(String, AssetCollection)], folders: [(String, CollectionList)]
    ) {
        var albums: [(String, AssetCollection)] = []
        var folders: [(String, CollectionList)] = []
        // Folders other libraries nested in a loop (each in the other) are shown once, on the first path met.
        var seen = Set<String>()
        func visit(_ folder: CollectionList?, prefix: String) throws {
            for album in try library.fetchAlbums(in: folder) { albums.append((prefix + album.title, album)) }
            for child in try library.fetchFolders(in: folder) where seen.insert(child.localIdentifier).inserted {
                folders.append((prefix + child.title, child))
                try visit(child, prefix: prefix + child.title + "/")
            }
        }
        try visit(nil, prefix: "")
        return (albums, folders)
    }

    /// The albums (or smart album) `name` names: the one of that id, the smart album of that title, else those of
    /// that path, else those of that title.
    private static func albums(_ name: String, in library: AssetLibrary) throws -> [AssetCollection] {
        if let collection = try library.collection(withLocalIdentifier: name) { return [collection] }
        let smart = try library.fetchSmartAlbums().first { $0.title == name }
        let all = try paths(in: library).albums
        let matches = all.filter { $0.0 == name }.map(\.1)
        let user = matches.isEmpty ? all.filter { $0.1.title == name }.map(\.1) : matches
        guard let smart else { return user }
        // A user album of a smart album's title: the name is the smart album's; the user album goes by its id.
        guard user.isEmpty else {
            let ids = user.map(\.localIdentifier).joined(separator: ", ")
            throw CLIError(
                "\(name) is the name of the smart album \(smart.localIdentifier); the user album \(name) is "
                    + "\(ids): name it by its id")
        }
        return [smart]
    }

    /// The folders `name` names: the one of that id or path, else those of that title.
    private static func folders(_ name: String, in library: AssetLibrary) throws -> [CollectionList] {
        let all = try paths(in: library).folders
        let matches = all.filter { $0.1.localIdentifier == name || $0.0 == name }.map(\.1)
        return matches.isEmpty ? all.filter { $0.1.title == name }.map(\.1) : matches
    }

    /// The error of a name that names several albums or folders: it lists their ids, by which each can be named.
    private static func ambiguous(_ name: String, _ what: String, ids: [String]) -> CLIError {
        CLIError(
            "\(ids.count) \(what) are named \(name) (\(ids.joined(separator: ", "))): name one by its id "
                + "(see 'cloudassets album ls')")
    }

    /// The album (or smart album) `name` names.
    static func album(_ name: String, in library: AssetLibrary) throws -> AssetCollection {
        let found = try albums(name, in: library)
        guard found.count <= 1 else { throw ambiguous(name, "albums", ids: found.map(\.localIdentifier)) }
        guard let album = found.first else { throw CLIError("no album \(name) (see 'cloudassets album ls')") }
        return album
    }

    /// The folder `name` names (id, path or unique title).
    static func folder(_ name: String, in library: AssetLibrary) throws -> CollectionList {
        let found = try folders(name, in: library)
        guard found.count <= 1 else { throw ambiguous(name, "folders", ids: found.map(\.localIdentifier)) }
        guard let folder = found.first else { throw CLIError("no folder \(name) (see 'cloudassets album ls')") }
        return folder
    }

    /// An album or a folder: `name` must name one alone — a name of both an album and a folder is refused, as a
    /// name of two albums is, with their ids.
    static func collection(_ name: String, in library: AssetLibrary) throws -> any CollectionIdentifying {
        let albums = try albums(name, in: library)
        let folders = try folders(name, in: library)
        let ids = albums.map(\.localIdentifier) + folders.map(\.localIdentifier)
        if let exact = ids.first(where: { $0 == name }) {
            return albums.first { $0.localIdentifier == exact } ?? folders.first { $0.localIdentifier == exact }!
        }
        guard ids.count <= 1 else {
            throw ambiguous(
                name, albums.isEmpty ? "folders" : folders.isEmpty ? "albums" : "albums and folders", ids: ids)
        }
        if let album = albums.first { return album }
        if let folder = folders.first { return folder }
        throw CLIError("no album or folder is named \(name) alone (see 'cloudassets album ls')")
    }
}

/// What every album change takes after its own arguments: `--no-wait`, as the other commands that change the
/// library do.
struct AlbumChangeOptions: ParsableArguments {
    @Flag(name: .long, help: "Record only; do not send the change to the bucket now.") var noWait = false
}

/// Opens the library, applies `body` in one change, prints `done` unless quiet, then sends the change to the
/// bucket before returning, as every change of the command line is sent (``sendChange(_:noWait:)``).
func runAlbumChange(
    _ global: GlobalOptions, _ options: AlbumChangeOptions,
    _ body: (AssetLibrary) throws -> (AssetChangeRequests) -> Void, done: String
) async throws {
    try await runReportingErrors {
        let library = try await openLibraryForChange(global, noWait: options.noWait)
        defer { library.close() }
        let record = try body(library)
        try await library.performChanges { record($0) }
        if !global.quiet { Terminal.shared.out(done) }
        try await sendChange(library, noWait: options.noWait)
    }
}

/// A title the user typed, as the album or folder will have it; one that other libraries would refuse (empty, too
/// long, with a control character) is a usage error (exit 2) in one line.
func checkedTitle(_ title: String, of collection: (any CollectionIdentifying)? = nil) throws -> String {
    do {
        return try AssetChangeRequests.collectionTitle(title, of: collection)
    } catch {
        throw CLIError(UserMessage.describe(error), status: .usage)
    }
}

struct AlbumList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List folders, albums and smart albums.",
        discussion: """
            Text: one line per folder, album and smart album: KIND ID COUNT PATH, tab-separated (a folder's count \
            is what is directly in it). JSON (--json): one array of objects with id, kind (folder, album, \
            smartAlbum; keyFolder and keyAlbum for folders of keys), title, path, count.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print one JSON array.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: false, runsDownloads: false)
            defer { library.close() }
            let (albums, folders) = try AlbumNames.paths(in: library)
            var rows: [(kind: String, id: String, count: Int, path: String, title: String)] = []
            rows += folders.map {
                ($0.1.isKeyFolder ? "keyFolder" : "folder", $0.1.localIdentifier, $0.1.count, $0.0, $0.1.title)
            }
            rows += albums.map {
                (
                    $0.1.subtype == .albumKeyFolder ? "keyAlbum" : "album", $0.1.localIdentifier,
                    $0.1.estimatedAssetCount, $0.0, $0.1.title
                )
            }
            rows.sort { $0.path < $1.path }
            rows += try library.fetchSmartAlbums().map {
                ("smartAlbum", $0.localIdentifier, $0.estimatedAssetCount, $0.title, $0.title)
            }
            let output = BufferedOutput()
            if json {
                output.write("[")
                for (index, row) in rows.enumerated() {
                    let fields: [String: Any] = [
                        "id": row.id, "kind": row.kind, "title": row.title, "path": row.path, "count": row.count,
                    ]
                    let data = try JSONSerialization.data(
                        withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
                    output.write((index == 0 ? "\n" : ",\n") + String(decoding: data, as: UTF8.self))
                }
                output.write(rows.isEmpty ? "]\n" : "\n]\n")
            } else {
                for row in rows {
                    output.write("\(row.kind)\t\(row.id)\t\(row.count)\t\(TextEscape.cStyle(row.path))\n")
                }
            }
            output.flush()
        }
    }
}

struct AlbumCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an album (or, with --folder, a folder); prints its id.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The title.") var title: String
    @Option(name: .customLong("in"), help: "The folder to create it in (id, path or title).") var parent: String?
    @Flag(help: "Create a folder instead of an album.") var folder = false
    @OptionGroup var change: AlbumChangeOptions

    func run() async throws {
        try await runReportingErrors {
            let title = try checkedTitle(title)
            let library = try await openLibraryForChange(global, noWait: change.noWait)
            defer { library.close() }
            let parentFolder = try parent.map { try AlbumNames.folder($0, in: library) }
            var created: CollectionPlaceholder?
            try await library.performChanges { requests in
                created =
                    folder
                    ? requests.createFolder(title: title, in: parentFolder)
                    : requests.createAlbum(title: title, in: parentFolder)
            }
            Terminal.shared.out(created?.localIdentifier ?? "")
            try await sendChange(library, noWait: change.noWait)
        }
    }
}

struct AlbumRename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename an album or folder.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The album or folder.") var name: String
    @Argument(help: "The new title.") var title: String
    @OptionGroup var change: AlbumChangeOptions

    func run() async throws {
        try await runAlbumChange(
            global, change,
            { library in
                let collection = try AlbumNames.collection(name, in: library)
                let title = try checkedTitle(title, of: collection)
                return { $0.renameCollection(collection, to: title) }
            }, done: "renamed 1 collection")
    }
}

struct AlbumRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete albums or folders (a folder with what is in it); assets stay.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Albums or folders.") var names: [String]
    @OptionGroup var change: AlbumChangeOptions

    func validate() throws { if names.isEmpty { throw ValidationError("name the albums or folders to delete") } }

    func run() async throws {
        try await runAlbumChange(
            global, change,
            { library in
                let collections = try names.map { try AlbumNames.collection($0, in: library) }
                return { $0.deleteCollections(collections) }
            }, done: "deleted \(names.count) collection(s)")
    }
}

struct AlbumAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add assets to an album (at the end, or at --at).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The album.") var album: String
    @OptionGroup var selection: AssetArguments
    @Option(parsing: .unconditional, help: "Insert at this position (0 is the first; at most the album's count).")
    var at: Int?
    @OptionGroup var change: AlbumChangeOptions

    func validate() throws { if let at, at < 0 { throw ValidationError("--at must be 0 or more, not \(at)") } }

    func run() async throws {
        try await runAlbumChange(
            global, change,
            { library in
                let collection = try AlbumNames.album(album, in: library)
                let assets = try selection.resolve(in: library)
                if let at {
                    // Past the end is refused, as `album move --to` refuses it (and PhotoKit an index out of range).
                    let count = try library.fetchAssets(
                        in: collection, options: FetchOptions(includeHiddenAssets: true, includeTrashedAssets: true)
                    ).count
                    guard at <= count else {
                        throw CLIError("--at \(at) is past the end of \(album): it takes 0…\(count)")
                    }
                    return { $0.insertAssets(assets, into: collection, at: at) }
                }
                return { $0.addAssets(assets, to: collection) }
            }, done: "added to \(album)")
    }
}

struct AlbumTakeOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Take assets out of an album (they stay in the library).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The album.") var album: String
    @OptionGroup var selection: AssetArguments
    @OptionGroup var change: AlbumChangeOptions

    func run() async throws {
        try await runAlbumChange(
            global, change,
            { library in
                let collection = try AlbumNames.album(album, in: library)
                let assets = try selection.resolve(in: library, includingTrash: true)
                return { $0.removeAssets(assets, from: collection) }
            }, done: "removed from \(album)")
    }
}

struct AlbumMove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Reorder an album: move assets to a position, or the album or folder into a folder.",
        discussion: """
            'album move ALBUM ASSETS… --to N' puts the assets at position N (0 is the first) of the order that \
            remains without them, in the album's order. 'album move NAME --into FOLDER' (or --top) moves an album \
            or folder.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The album (or, with --into/--top, album or folder).") var name: String
    @Argument(help: "Asset ids or keys to move within the album.") var assets: [String] = []
    @Option(parsing: .unconditional, help: "The position to move the assets to.") var to: Int?
    @Option(help: "The folder to move the album or folder into.") var into: String?
    @Flag(help: "Move the album or folder to the top level.") var top = false
    @OptionGroup var change: AlbumChangeOptions

    func validate() throws {
        let modes = [to != nil, into != nil, top].filter { $0 }.count
        if modes != 1 { throw ValidationError("give exactly one of --to, --into or --top") }
        if to != nil && assets.isEmpty { throw ValidationError("name the assets to move with --to") }
        if let to, to < 0 { throw ValidationError("--to must be 0 or more, not \(to)") }
    }

    func run() async throws {
        try await runAlbumChange(
            global, change,
            { library in
                if let to {
                    let album = try AlbumNames.album(name, in: library)
                    let members = try library.fetchAssets(
                        in: album, options: FetchOptions(includeHiddenAssets: true, includeTrashedAssets: true))
                    let wanted = Set(
                        try resolveAssets(assets, in: library, includingTrash: true).map(\.localIdentifier))
                    let indexes = IndexSet(members.indices.filter { wanted.contains(members[$0].localIdentifier) })
                    guard indexes.count == wanted.count else { throw CLIError("not every asset named is in \(name)") }
                    guard to <= members.count - indexes.count else {
                        throw CLIError(
                            "--to \(to) is past the end of \(name): it takes 0…\(members.count - indexes.count)")
                    }
                    return { $0.moveAssets(in: album, at: indexes, to: to) }
                }
                let collection = try AlbumNames.collection(name, in: library)
                let folder = try into.map { try AlbumNames.folder($0, in: library) }
                return { $0.moveCollection(collection, to: folder) }
            }, done: "moved")
    }
}
