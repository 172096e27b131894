import CloudAssets
import Foundation

/// What a list on screen shows — the newest photos first — kept current from the library's changes. An actor: one
/// task at a time touches its state.
actor PhotoList {
    private(set) var photos: FetchResult
    private(set) var rows: [String]  // one line per photo, what the list draws
    private var token: ChangeToken  // the last change `photos` reflects

    static let options = FetchOptions(predicate: .mediaType(.image), sortBy: [.creationDate(ascending: false)])

    /// The list as the library is now. Take the library's `changes` stream before this, so no change falls between.
    init(library: AssetLibrary) throws {
        let snapshot = try library.snapshot(Self.options)
        photos = snapshot.fetchResult
        token = snapshot.token
        rows = photos.map(Self.row)
    }

    /// Applies every change, in commit order, until the library closes.
    func follow(_ changes: AsyncStream<LibraryChange>) async {
        for await change in changes { apply(change) }
    }

    func apply(_ change: LibraryChange) {
        guard change.token > token else { return }  // already in the snapshot
        token = change.token
        guard let details = change.details(for: photos) else { return }  // nil: the change missed this list
        let after = details.fetchResultAfterChanges
        photos = after
        // Deletes, inserts and moves in one batch, then reloads: what a list view applies.
        ListUpdate(details).apply(to: &rows, afterCount: after.count) { Self.row(after[$0]) }
    }

    static func row(_ asset: Asset) -> String {
        let state = asset.availability == .full ? "local" : "\(asset.availability)"
        return "\(asset.key) (\(state)\(asset.isFavorite ? ", favourite" : ""))"
    }
}
