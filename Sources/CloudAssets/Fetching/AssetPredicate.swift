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
    case isFavorite(Bool)
    case isHidden(Bool)
    /// Assets in the trash (`true`) or not. Trashed assets are only fetched with
    /// ``FetchOptions/includeTrashedAssets``.
    case isTrashed(Bool)
    /// Assets whose upload state is one of these.
    case uploadStates(Set<UploadState>)
    /// Assets whose bucket key starts with this prefix (case-sensitive).
    case keyPrefix(String)
    /// Assets with one of these local identifiers (``Asset/localIdentifier``; one that is malformed or unknown
    /// matches nothing).
    case identifiers(Set<String>)
    /// All of these hold (`and([])` matches everything).
    case and([AssetPredicate])
    /// At least one of these holds (`or([])` matches nothing).
    case or([AssetPredicate])
    case not(AssetPredicate)

    /// Assets of this media type.
    public static func mediaType(_ type: MediaType) -> AssetPredicate { .mediaTypes([type]) }

    /// Evaluates the predicate on one asset.
    public func matches(_ asset: Asset) -> Bool {
        switch self {
        case .all: true
        case .mediaTypes(let set): set.contains(asset.mediaType)
        case .creationDate(let range): range.contains(asset.creationDate)
        case .modificationDate(let range): range.contains(asset.modificationDate)
        case .availability(let set): set.contains(asset.availability)
        case .isFavorite(let value): asset.isFavorite == value
        case .isHidden(let value): asset.isHidden == value
        case .isTrashed(let value): asset.isTrashed == value
        case .uploadStates(let set): set.contains(asset.uploadState)
        case .keyPrefix(let prefix): asset.key.utf8.starts(with: prefix.utf8)
        case .identifiers(let ids): ids.contains(asset.localIdentifier)
        case .and(let list): list.allSatisfy { $0.matches(asset) }
        case .or(let list): list.contains { $0.matches(asset) }
        case .not(let inner): !inner.matches(asset)
        }
    }

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
        case .uploadStates(let set): .uploadState(Set(set.map(\.stored)))
        case .keyPrefix(let prefix): .keyPrefix(prefix)
        case .identifiers(let ids): .ids(Set(ids.compactMap { Int64($0) }))
        case .and(let list): .and(list.map(\.storePredicate))
        case .or(let list): .or(list.map(\.storePredicate))
        case .not(let inner): .not(inner.storePredicate)
        }
    }
}
