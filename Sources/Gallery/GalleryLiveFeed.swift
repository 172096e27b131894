import CloudAssets
import Essentials
import Foundation

/// One page's live fetch, the `/api/events` server-sent event stream: a `reset` event with every identifier, then
/// one `change` event per library change that affects it (removed, inserted, changed indexes and moves, with the
/// inserted and changed assets), or a new `reset` when a change is too large to describe incrementally.
///
/// It owns the fetch result the page shows and the snapshot's token, and turns each ``LibraryChange`` into the
/// page's events. It runs on its own serial ``queue`` (one per stream, not the tasks' pool, which a busy process
/// may hold up): the library delivers changes there, and the snapshot is applied there; its state is touched
/// nowhere else. The task that answers the request only holds the connection until the client goes away (see
/// ``eventStream(query:library:hub:)``).
final class GalleryLiveFeed: LibraryChangeObserver, @unchecked Sendable {
    let queue = DispatchQueue(label: "CloudAssets gallery feed")
    private let library: AssetLibrary
    private let send: @Sendable (String) -> Void
    // Touched only on `queue`.
    private var current: FetchResult?
    private var snapshotToken = ChangeToken(rawValue: 0)
    private var early: [LibraryChange] = []

    init(library: AssetLibrary, send: @escaping @Sendable (String) -> Void) {
        self.library = library
        self.send = send
    }

    /// Sends the snapshot as a reset, then the changes that came before it and are not in it.
    func start(_ snapshot: LibrarySnapshot) {
        queue.async { [self] in
            current = snapshot.fetchResult
            snapshotToken = snapshot.token
            send(Self.resetEvent(snapshot.fetchResult, token: snapshot.token, library: library))
            let waiting = early
            early = []
            for change in waiting { apply(change) }
        }
    }

    func libraryDidChange(_ change: LibraryChange) {
        if current == nil {
            early.append(change)
        } else {
            apply(change)
        }
    }

    private func apply(_ change: LibraryChange) {
        guard change.token > snapshotToken, let before = current, let details = change.details(for: before) else {
            return
        }
        current = details.fetchResultAfterChanges
        if details.hasIncrementalChanges {
            send(Self.changeEvent(details, token: change.token))
        } else {
            send(Self.resetEvent(details.fetchResultAfterChanges, token: change.token, library: library))
        }
    }

    // MARK: The stream

    /// The answer to `/api/events`: a feed of the fetch `query` asks for (see ``fetchOptions(_:)``), also open in
    /// `hub` for the events every page hears, until the connection closes.
    static func eventStream(query: [String: String], library: AssetLibrary, hub: GalleryEventHub) -> GalleryResponse {
        let options = fetchOptions(query)
        return .events { send in
            let feed = GalleryLiveFeed(library: library, send: send)
            // Registered before the snapshot is taken: no change falls between them.
            library.register(feed, queue: feed.queue)
            let outbox = hub.open(send)
            defer {
                hub.close(outbox)
                library.unregister(feed)
            }
            // `album=ID`: an album's assets in its own order (a smart album's newest first), filtered as asked.
            // try?: an unknown album is none: the library's assets are sent
            let collection = query["album"].flatMap { try? library.collection(withLocalIdentifier: $0) }
            let snapshot: LibrarySnapshot?
            if let collection {
                var albumOptions = options
                if collection.kind == .album, query["sort"] == nil || query["sort"] == "album" {
                    albumOptions.sortDescriptors = []
                }
                // try?: no snapshot ends the feed; the page reconnects and asks again
                snapshot = try? library.snapshot(in: collection, options: albumOptions)
            } else {
                // try?: no snapshot ends the feed; the page reconnects and asks again
                snapshot = try? library.snapshot(options)
            }
            guard let snapshot else { return }
            feed.start(snapshot)
            // The feed runs on its own queue (not the tasks' pool, which a busy process may hold up); this task
            // only keeps the connection until the client goes away.
            let (closed, continuation) = AsyncStream.makeStream(of: Void.self)
            await withTaskCancellationHandler {
                for await _ in closed {}
            } onCancel: {
                continuation.finish()
            }
        }
    }

    /// The fetch options a page asks for: `sort` (newest, oldest, largest, smallest, name), `state` (cloud,
    /// thumbnail, partial, full, uploading; comma-separated) and `media` (image, video, audio).
    static func fetchOptions(_ query: [String: String]) -> FetchOptions {
        var options = FetchOptions()
        switch query["sort"] ?? "newest" {
        case "oldest": options.sortDescriptors = [.creationDate(ascending: true)]
        case "largest": options.sortDescriptors = [.size(ascending: false)]
        case "smallest": options.sortDescriptors = [.size(ascending: true)]
        case "name": options.sortDescriptors = [.key(ascending: true)]
        default: options.sortDescriptors = [.creationDate(ascending: false)]
        }
        var terms: [AssetPredicate] = []
        let states = (query["state"] ?? "").split(separator: ",").map(String.init)
        if !states.isEmpty {
            var alternatives: [AssetPredicate] = []
            let availability = Set(
                states.compactMap { name in AssetAvailability.allCases.first { $0.galleryName == name } })
            if !availability.isEmpty {
                alternatives.append(
                    .and([.availability(availability), .uploadStates([.uploaded, .uploadFailed])]))
            }
            if states.contains("uploading") { alternatives.append(.uploadStates([.pendingUpload, .uploading])) }
            terms.append(.or(alternatives))
        }
        let media = Set(
            (query["media"] ?? "").split(separator: ",").compactMap { name in
                MediaType.allCases.first { $0.galleryName == name }
            })
        if !media.isEmpty { terms.append(.mediaTypes(media)) }
        options.predicate = terms.isEmpty ? .all : terms.count == 1 ? terms[0] : .and(terms)
        return options
    }

    // MARK: Events

    static func resetEvent(_ result: FetchResult, token: ChangeToken, library: AssetLibrary) -> String {
        let ids = result.localIdentifiers
        return "event: reset\ndata: {\"token\":\(token.rawValue),\"count\":\(ids.count),\"ids\":"
            + JSONText.strings(ids) + ",\"network\":\"\(library.networkPolicy.galleryName)\"}\n\n"
    }

    static func changeEvent(_ details: FetchResultChangeDetails, token: ChangeToken) -> String {
        let inserted = details.insertedObjects.map(\.galleryJSON).joined(separator: ",")
        let changed = details.changedObjects.map(\.galleryJSON).joined(separator: ",")
        let moves = details.moves.map { "[\($0.fromIndex),\($0.toIndex)]" }.joined(separator: ",")
        let sent = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        return "event: change\ndata: {\"token\":\(token.rawValue),\"sent\":\(sent),"
            + "\"count\":\(details.fetchResultAfterChanges.count),"
            + "\"removed\":\(JSONText.integers(details.removedIndexes ?? IndexSet())),"
            + "\"inserted\":\(JSONText.integers(details.insertedIndexes ?? IndexSet())),\"insertedAssets\":[\(inserted)],"
            + "\"changed\":\(JSONText.integers(details.changedIndexes ?? IndexSet())),\"changedAssets\":[\(changed)],"
            + "\"moves\":[\(moves)]}\n\n"
    }
}
