import AssetStore

/// One sort criterion for ``FetchOptions``. A fetch always appends the local identifier as a final tie-break (in
/// the direction of the last criterion, ascending when there is none), so every order is total and repeatable.
public struct AssetSortDescriptor: Sendable, Hashable {
    /// A property assets can be sorted by.
    public enum Key: Sendable, Hashable, CaseIterable {
        /// ``Asset/creationDate``: when the photo or video was taken.
        case creationDate
        /// ``Asset/modificationDate``: when the content last changed.
        case modificationDate
        /// The bucket key, compared byte-wise (UTF-8), case-sensitive.
        case key
        /// ``Asset/size``: the original's size in bytes.
        case size
        /// The original's pixel count, ``Asset/storedPixelWidth`` × ``Asset/storedPixelHeight`` (the catalog's
        /// indexed column). Orientation does not change it, so it is ``Asset/pixelWidth`` × ``Asset/pixelHeight``
        /// too — except for an edit that changes the pixel count (a crop): an edited asset sorts by its original's
        /// size, as fetches and change details both order it.
        case pixelCount
        /// The ``UploadState`` (uploaded first, then pending, uploading, failed).
        case uploadState
        /// ``Asset/addedDate``: when the original was added to the bucket; assets not listed yet (just added) come
        /// after every dated one.
        case addedDate
        /// ``Asset/duration``: a video's length (every other asset has 0).
        case duration
    }

    /// The property compared.
    public var key: Key
    /// `true` for smallest (earliest) first, `false` for largest (latest) first.
    public var ascending: Bool

    /// Sorts by `key`, ascending unless `ascending` is `false`.
    public init(_ key: Key, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// Sorts by creation date, ascending unless `ascending` is `false`.
    public static func creationDate(ascending: Bool = true) -> Self { .init(.creationDate, ascending: ascending) }
    /// Sorts by modification date, ascending unless `ascending` is `false`.
    public static func modificationDate(ascending: Bool = true) -> Self {
        .init(.modificationDate, ascending: ascending)
    }
    /// Sorts by bucket key, ascending unless `ascending` is `false`.
    public static func key(ascending: Bool = true) -> Self { .init(.key, ascending: ascending) }
    /// Sorts by size, ascending unless `ascending` is `false`.
    public static func size(ascending: Bool = true) -> Self { .init(.size, ascending: ascending) }
    /// Sorts by pixel count, ascending unless `ascending` is `false`.
    public static func pixelCount(ascending: Bool = true) -> Self { .init(.pixelCount, ascending: ascending) }
    /// Sorts by upload state, ascending unless `ascending` is `false`.
    public static func uploadState(ascending: Bool = true) -> Self { .init(.uploadState, ascending: ascending) }
    /// Sorts by date added, ascending unless `ascending` is `false`.
    public static func addedDate(ascending: Bool = true) -> Self { .init(.addedDate, ascending: ascending) }
    /// Sorts by duration, ascending unless `ascending` is `false`.
    public static func duration(ascending: Bool = true) -> Self { .init(.duration, ascending: ascending) }

    var storeSort: StoreSort {
        let storeKey: StoreSortKey =
            switch key {
            case .creationDate: .creationDate
            case .modificationDate: .modificationDate
            case .key: .key
            case .size: .size
            case .pixelCount: .pixelCount
            case .uploadState: .uploadState
            case .addedDate: .addedDate
            case .duration: .duration
            }
        return StoreSort(storeKey, ascending: ascending)
    }
}
