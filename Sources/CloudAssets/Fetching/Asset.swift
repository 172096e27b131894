import AssetStore
import Foundation

@_exported import struct AssetStore.ChangeToken
@_exported import enum AssetStore.MediaType

/// How much of an asset is on this machine (PhotoKit's "in cloud" vs local, with the steps in between).
public enum AssetAvailability: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Only the metadata is local; any data request needs the network.
    case cloudOnly = 0
    /// The thumbnail is local; the original is not.
    case thumbnail = 1
    /// Some verified byte ranges of the original are local (see ``Asset/partialRanges``).
    case partial = 2
    /// The whole original is local and verified.
    case full = 3

    public static func < (lhs: AssetAvailability, rhs: AssetAvailability) -> Bool { lhs.rawValue < rhs.rawValue }

    init(_ stored: StoredAvailability) { self = AssetAvailability(rawValue: stored.rawValue)! }
    var stored: StoredAvailability { StoredAvailability(rawValue: rawValue)! }
}

/// An immutable description of one asset at the moment it was read (PhotoKit's `PHAsset`).
///
/// Two values are equal when every property is equal, so a changed asset is not equal to its earlier value;
/// ``localIdentifier`` alone identifies the asset across changes.
public struct Asset: Sendable, Hashable, Identifiable {
    /// The stable local identifier (never reused, not derived from the bucket key).
    public let id: Int64
    /// Bucket key of the original.
    public let key: String
    /// Size of the original in bytes.
    public let size: Int64
    /// ETag of the original as the bucket last reported it.
    public let etag: String
    public let creationDate: Date
    public let modificationDate: Date
    public let mediaType: MediaType
    public let pixelWidth: Int
    public let pixelHeight: Int
    /// EXIF orientation, 1…8.
    public let orientation: Int
    public let isFavorite: Bool
    public let isHidden: Bool
    public let availability: AssetAvailability
    /// The verified byte ranges of the original on disk (empty unless ``availability`` is `partial`; the whole
    /// file when `full`).
    public let partialRanges: [Range<Int64>]
    /// `true` when a thumbnail is on disk.
    public let hasThumbnail: Bool
    /// `true` when the original is pinned (never evicted).
    public let isPinned: Bool
    public let lastAccessDate: Date?

    /// The identifier as a string, PhotoKit style (the decimal form of ``id``).
    public var localIdentifier: String { String(id) }

    /// `true` when the original is not fully local.
    public var isInCloud: Bool { availability != .full }

    init(_ record: AssetRecord) {
        id = record.id ?? 0
        key = record.key
        size = record.size
        etag = record.etag
        creationDate = record.creationDate
        modificationDate = record.modificationDate
        mediaType = record.mediaType
        pixelWidth = record.pixelWidth
        pixelHeight = record.pixelHeight
        orientation = record.orientation
        isFavorite = record.isFavorite
        isHidden = record.isHidden
        availability = AssetAvailability(record.availability)
        switch record.availability {
        case .full: partialRanges = [0..<record.size]
        case .partial: partialRanges = record.partialRanges.ranges
        case .cloudOnly, .thumbnail: partialRanges = []
        }
        hasThumbnail = record.thumbnailPresent
        isPinned = record.isPinned
        lastAccessDate = record.lastAccessDate
    }

    /// A stand-in for an asset deleted after the fetch result holding it was taken and never loaded before.
    static func deleted(id: Int64) -> Asset {
        var record = AssetRecord(
            key: "", size: 0, etag: "", lastModified: .distantPast, creationDate: .distantPast)
        record.id = id
        return Asset(record)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(etag)
        hasher.combine(modificationDate)
        hasher.combine(availability)
    }
}
