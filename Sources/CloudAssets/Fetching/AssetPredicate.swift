public import AssetStore
public import Foundation

/// A filter for ``FetchOptions``: a tree of conditions on asset properties.
///
/// It is compiled to SQL (values are bound, never spliced into the statement) and can also be evaluated in memory
/// with ``matches(_:)``; both give the same answer.
public indirect enum AssetPredicate: Sendable, Hashable {
    /// Every asset.
    case all
    /// Assets of one of these media types.
    case mediaTypes(Set<MediaType>)
    /// Assets created in the half-open interval.
    case creationDate(Range<Date>)
    /// Assets modified in the half-open interval.
    case modificationDate(Range<Date>)
    /// Assets whose availability is one of these.
    case availability(Set<AssetAvailability>)
    /// Favourites (`true`) or the other assets (`false`).
    case isFavorite(Bool)
    /// Hidden assets (`true`) or the other assets (`false`). Hidden assets are only fetched with
    /// ``FetchOptions/includeHiddenAssets``.
    case isHidden(Bool)
    /// Assets in the trash (`true`) or not. Trashed assets are only fetched with
    /// ``FetchOptions/includeTrashedAssets``.
    case isTrashed(Bool)
    /// Assets whose ``Asset/duration`` (seconds) is in the half-open interval: `.duration(60..<.infinity)` is
    /// every video of a minute or more. Photos and videos whose length is not known yet have 0.
    case duration(Range<TimeInterval>)
    /// Assets with a content edit (`true`, ``Asset/hasAdjustments``) or without one (`false`). What the Edited
    /// smart album shows.
    case hasAdjustments(Bool)
    /// Assets whose upload state is one of these.
    case uploadStates(Set<UploadState>)
    /// Assets whose bucket key starts with this prefix (case-sensitive).
    case keyPrefix(String)
    /// Assets whose bucket key is directly in this folder of keys (which ends with `/`): it starts with the
    /// folder and has no `/` after it — `originals/Trips/Rome/a.jpg` is directly in `originals/Trips/Rome/`, not
    /// in `originals/Trips/`. What a folder-of-keys album shows
    /// (``AssetLibrary/Configuration/keyFoldersAsAlbums``).
    case keyFolder(String)
    /// Assets added to the bucket at or after the date (``Asset/addedDate``), and every asset not listed yet (its
    /// date added is `nil`: it has just come). What Recently Added shows, with the date 30 days back.
    case addedSince(Date)
    /// Assets with one of these local identifiers (``Asset/localIdentifier``; one that is malformed or unknown
    /// matches nothing).
    case identifiers(Set<String>)
    /// All of these hold (`and([])` matches everything).
    case and([AssetPredicate])
    /// At least one of these holds (`or([])` matches nothing).
    case or([AssetPredicate])
    /// The assets the predicate does not match.
    case not(AssetPredicate)

    /// Assets of this media type.
    public static func mediaType(_ type: MediaType) -> AssetPredicate { .mediaTypes([type]) }

    /// Evaluates the predicate on one asset: the store's in-memory test of the predicate on the asset's fields,
    /// the very definition its SQL is written beside, so it answers as a fetch does.
    public func matches(_ asset: Asset) -> Bool {
        storePredicate.matches(TestedFields(asset), key: asset.key)
    }

    /// The predicate on the catalog's records: what a fetch compiles to SQL and ``matches(_:)`` evaluates.
    /// ``availability(_:)`` is the current version's (``Asset/availability``); an identifier that is not a local
    /// identifier as ``Asset/localIdentifier`` writes it (`"+7"`, `"07"`) names no asset.
    var storePredicate: StorePredicate {
        switch self {
        case .all: .all
        case .mediaTypes(let set): .mediaType(set)
        case .creationDate(let range): .creationDate(range)
        case .modificationDate(let range): .modificationDate(range)
        case .availability(let set): .currentAvailability(Set(set.map(\.stored)))
        case .isFavorite(let value): .isFavorite(value)
        case .isHidden(let value): .isHidden(value)
        case .isTrashed(let value): .isTrashed(value)
        case .hasAdjustments(let value): .hasAdjustments(value)
        case .duration(let range): .field(.duration(range))
        case .uploadStates(let set): .uploadState(Set(set.map(\.stored)))
        case .keyPrefix(let prefix): .keyPrefix(prefix)
        case .keyFolder(let folder): .keyFolder(folder)
        case .addedSince(let date): .field(.addedSince(date))
        case .identifiers(let ids): .ids(Set(ids.compactMap(Asset.rowID(localIdentifier:))))
        case .and(let list): .and(list.map(\.storePredicate))
        case .or(let list): .or(list.map(\.storePredicate))
        case .not(let inner): .not(inner.storePredicate)
        }
    }
}

extension TestedFields {
    /// An asset's fields as its catalog row holds them: ``Asset/availability`` is the row's current availability
    /// and ``Asset/originalAvailability`` its original's.
    init(_ asset: Asset) {
        self.init(
            id: asset.rowID, mediaType: asset.mediaType, creationDate: asset.creationDate,
            modificationDate: asset.modificationDate, availability: asset.originalAvailability.stored,
            currentAvailability: asset.availability.stored, isFavorite: asset.isFavorite, isHidden: asset.isHidden,
            isTrashed: asset.isTrashed, hasAdjustments: asset.hasAdjustments, duration: asset.duration,
            uploadState: asset.uploadState.stored,
            addedKey: asset.addedDate?.timeIntervalSinceReferenceDate ?? AssetRecord.notListedAddedKey)
    }
}
