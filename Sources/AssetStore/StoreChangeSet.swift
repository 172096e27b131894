/// What one committed transaction did to the asset table.
///
/// A row inserted and then deleted in the same transaction appears nowhere; a row updated back to its original
/// values appears nowhere; several updates of one row collapse into one entry comparing the first and last state.
package struct StoreChangeSet: Sendable {
    /// The token the transaction committed as (the current token when the set is empty).
    package var token: ChangeToken
    /// Identifiers of rows the transaction inserted.
    package var inserted: Set<Int64>
    /// Identifiers of rows the transaction updated (present before and after, with different values).
    package var updated: Set<Int64>
    /// The subset of `updated` whose original changed (ETag or size).
    package var contentChanged: Set<Int64>
    /// Identifiers of rows the transaction deleted.
    package var deleted: Set<Int64>
    /// The subset of `updated` whose key changed (the folder counts follow it; see `maintainKeyFolders`).
    package var rekeyed: Set<Int64> = []
    /// Collections (albums, folders) the transaction created, renamed, moved or deleted, or whose assets it
    /// added, removed or reordered — an asset deleted from the library leaves every album it was in — by UUID.
    package var collections: Set<String> = []
    /// What the transaction did to each album's members (by the album's row identifier), when it can say it
    /// asset by asset (not kept in the history).
    package var memberDeltas: [Int64: MemberDelta] = [:]
    /// Rows as they were before the transaction, for every updated or deleted id.
    package var before: [Int64: AssetRecord]
    /// Rows as the transaction left them, for every inserted or updated id.
    package var after: [Int64: AssetRecord]

    package init(
        token: ChangeToken, inserted: Set<Int64> = [], updated: Set<Int64> = [], contentChanged: Set<Int64> = [],
        deleted: Set<Int64> = [], before: [Int64: AssetRecord] = [:], after: [Int64: AssetRecord] = [:]
    ) {
        self.token = token
        self.inserted = inserted
        self.updated = updated
        self.contentChanged = contentChanged
        self.deleted = deleted
        self.before = before
        self.after = after
    }

    /// `true` when the transaction changed nothing (no token was used, no history written).
    package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && collections.isEmpty }

    /// The number of rows touched.
    package var count: Int { inserted.count + updated.count + deleted.count }
}

/// One persisted entry of the change history: identifiers only (records are not kept).
package struct StoreHistoryEntry: Sendable, Hashable {
    package var token: ChangeToken
    package var inserted: Set<Int64>
    package var updated: Set<Int64>
    package var contentChanged: Set<Int64>
    package var deleted: Set<Int64>
    package var collections: Set<String> = []
}

/// What one transaction did to one album's members.
package struct MemberDelta: Sendable, Hashable {
    /// Members taken out (and not put back).
    package var removed: Set<Int64> = []
    /// Members put in, or put back at another place, with their positions.
    package var placed: [Int64: Int64] = [:]
    /// The whole album was rewritten (renumbered, merged from the bucket, deleted): no delta to apply.
    package var rebuilt = false

    package init() {}

    mutating func remove(_ id: Int64) {
        placed.removeValue(forKey: id)
        removed.insert(id)
    }

    mutating func place(_ id: Int64, at position: Int64) {
        removed.remove(id)
        placed[id] = position
    }
}
