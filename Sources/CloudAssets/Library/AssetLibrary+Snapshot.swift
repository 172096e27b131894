public import AssetStore
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fetch result together with the token of the last change it reflects: the starting point of a live view.
public struct LibrarySnapshot: Sendable {
    /// The assets matching the options, in their order, as of ``token``.
    public let fetchResult: FetchResult
    /// The last change the fetch result reflects: every change with this token or an earlier one is in it, no
    /// change with a later token is.
    public let token: ChangeToken
}

extension AssetLibrary {
    /// Fetches `options` and reads the token of the last committed change in the same read transaction (commits
    /// of other libraries and processes on this folder included), so the two agree exactly.
    ///
    /// To keep a view live without missing or repeating a change: take a ``changes`` stream (or register an
    /// observer) first, then the snapshot, then apply ``LibraryChange/details(for:)-(FetchResult)`` of every
    /// delivered change whose token is greater than ``LibrarySnapshot/token``, in delivery order, each to the
    /// previous change's ``FetchResultChangeDetails/fetchResultAfterChanges``; skip the others (already in the
    /// snapshot). Local only.
    /// - Throws: ``CloudAssetsError/Code/libraryClosed``, or a catalog error.
    public func snapshot(_ options: FetchOptions = FetchOptions()) throws -> LibrarySnapshot {
        try entry { try catalog.snapshot(options) }
    }

    /// ``fetchAssets(in:options:)`` with the token of the last change it reflects, both read at once (see
    /// ``snapshot(_:)``): register an observer first, take the snapshot, then apply only the changes after its
    /// token. Local only.
    /// - Throws: ``CloudAssetsError/Code/noSuchCollection`` when the album was deleted.
    public func snapshot(in collection: AssetCollection, options: FetchOptions? = nil) throws -> LibrarySnapshot {
        try entry { try catalog.snapshot(in: collection, options: options) }
    }

    /// The bytes of the asset's local thumbnail, or `nil` when the library has none on disk. Never uses the
    /// network.
    ///
    /// The file is found by local identifier only — never by a path or a bucket key — inside the library's
    /// `thumbnails/` folder, and neither the folder nor the file is followed through a symbolic link: a link
    /// placed there (to anything, inside the library or not), or a `thumbnails` folder replaced by a link, reads
    /// as no thumbnail. Only regular files up to 16 MiB are read. With `version` `.current` (the default) an edited
    /// asset's thumbnail is its edit's (in `edits/`, read the same way); `.original` and `.unadjusted` give the
    /// original's.
    /// - Throws: ``CloudAssetsError/Code/libraryClosed``.
    public func localThumbnailData(forLocalIdentifier identifier: String, version: AssetVersion = .current) throws
        -> Data?
    {
        try entry {
            guard let id = Int64(identifier), id > 0, String(id) == identifier else { return nil }
            return try cache.localThumbnailData(of: id, version: version)
        }
    }
}

extension FetchResult {
    /// The local identifiers of the result, in order, without reading any asset (O(n), no database access).
    public var localIdentifiers: [String] {
        var result: [String] = []
        result.reserveCapacity(count)
        sorted.forEachRun(in: 0..<count) { chunk, positions, _ in
            for id in chunk.ids[positions] { result.append(String(id)) }
        }
        return result
    }
}
