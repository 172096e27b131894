/// What one change did to one asset (PhotoKit's `PHObjectChangeDetails`).
public struct ObjectChangeDetails: Sendable {
    /// The asset before the change (for a change read from the history: the value you passed in).
    public let objectBeforeChanges: Asset
    /// The asset after the change; `nil` when it was deleted.
    public let objectAfterChanges: Asset?
    /// `true` when what the asset shows changed — the original's bytes (ETag or size) or its content edit (a new
    /// edit, a revert) — so cached renditions are stale; `false` when only metadata or availability changed.
    public let assetContentChanged: Bool
    /// `true` when the asset was deleted.
    public var objectWasDeleted: Bool { objectAfterChanges == nil }
}
