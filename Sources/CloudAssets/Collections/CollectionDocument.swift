import AssetStore
package import Foundation

/// An album or folder as every library on a bucket shares it (`collections/<id>.json`), with the merge rule that
/// makes libraries converge whatever order they see each other's changes in.
///
/// **The rules.** Every value carries the stamp of its last change (milliseconds, device; ties broken by the device,
/// then by the value, so every library picks the same):
/// - title and folder: the last change wins;
/// - deletion: final — once any library deleted the collection, it is deleted everywhere, whatever was changed
///   meanwhile (the assets it held stay in every library); a deleted collection's state is its header alone;
/// - membership, per asset (by its key): the later of its last addition and its last removal wins — an asset added
///   on one library while another removes it ends as the later of the two did;
/// - order, per asset: its position is the one from the last change that placed it (an insertion or a move); the
///   album lists its assets by position, then key. Two libraries adding different assets to one album keep both;
///   two moving the same asset keep the later move; a move of one asset never undoes another library's change to
///   the others.
///
/// Merging is commutative, associative and idempotent (each field is a join of a total order). A library stamps
/// its changes when it sends them, later than any stamp it has seen on the same value.
package struct CollectionDocument: Sendable, Hashable {
    package typealias Stamp = SharedMetadata.Stamp

    /// One asset's membership and place.
    package struct Member: Sendable, Hashable {
        package var added: Stamp
        package var removed: Stamp?
        package var position: Int64
        package var placed: Stamp

        package init(added: Stamp, removed: Stamp?, position: Int64, placed: Stamp) {
            self.added = added
            self.removed = removed
            self.position = position
            self.placed = placed
        }

        package var isPresent: Bool { removed.map { $0 < added } ?? true }
    }

    package var id: String
    package var kind: StoredCollectionKind
    package var title: String
    package var titleStamp: Stamp
    /// The folder's identifier; `nil` at the top level.
    package var parent: String?
    package var parentStamp: Stamp
    package var deleted: Stamp?
    package var members: [String: Member] = [:]

    package init(id: String, kind: StoredCollectionKind, title: String, parent: String?, stamp: Stamp) {
        self.id = id
        self.kind = kind
        self.title = title
        self.titleStamp = stamp
        self.parent = parent
        self.parentStamp = stamp
    }

    /// The assets in the album, by position then key.
    package var orderedKeys: [String] {
        members.filter(\.value.isPresent).sorted {
            $0.value.position != $1.value.position
                ? $0.value.position < $1.value.position : $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
        }.map(\.key)
    }

    // MARK: Merge

    /// The later of two stamped values: by stamp, then by the value's text (a stranger may write equal stamps).
    private static func later<T: Comparable>(_ a: (T, Stamp), _ b: (T, Stamp)) -> (T, Stamp) {
        if a.1 != b.1 { return a.1 < b.1 ? b : a }
        return a.0 < b.0 ? b : a
    }

    private static func later(_ a: Stamp?, _ b: Stamp?) -> Stamp? {
        guard let a else { return b }
        guard let b else { return a }
        return a < b ? b : a
    }

    /// The merge of two states of the same collection (see the type's rules).
    package func merged(with other: CollectionDocument) -> CollectionDocument {
        var result = self
        (result.title, result.titleStamp) = Self.later((title, titleStamp), (other.title, other.titleStamp))
        let parents = Self.later((parent ?? "", parentStamp), (other.parent ?? "", other.parentStamp))
        (result.parent, result.parentStamp) = (parents.0.isEmpty ? nil : parents.0, parents.1)
        result.deleted = Self.later(deleted, other.deleted)
        // A deleted collection's members no longer matter (deletion is final): it keeps its header alone.
        if result.deleted != nil {
            result.members = [:]
            return result
        }
        // A kind two libraries disagree on (only a stranger writes that): the smaller, so both pick the same.
        result.kind = min(kind.rawValue, other.kind.rawValue) == kind.rawValue ? kind : other.kind
        for (key, theirs) in other.members {
            guard let mine = result.members[key] else {
                result.members[key] = theirs
                continue
            }
            var member = mine
            member.added = max(mine.added, theirs.added)
            member.removed = Self.later(mine.removed, theirs.removed)
            (member.position, member.placed) = Self.later(
                (mine.position, mine.placed), (theirs.position, theirs.placed))
            result.members[key] = member
        }
        return result
    }

    // MARK: Deltas

    /// The members whose state differs between this document and `other` (or that one of them lacks), and
    /// ``CollectionRecord/headerKey`` when the kind, title, folder or deletion does.
    package func differingKeys(from other: CollectionDocument?) -> Set<String> {
        guard let other else { return Set(members.keys).union([CollectionRecord.headerKey]) }
        var keys = Set<String>()
        if kind != other.kind || title != other.title || titleStamp != other.titleStamp || parent != other.parent
            || parentStamp != other.parentStamp || deleted != other.deleted
        {
            keys.insert(CollectionRecord.headerKey)
        }
        for (key, member) in members where other.members[key] != member { keys.insert(key) }
        for key in other.members.keys where members[key] == nil { keys.insert(key) }
        return keys
    }

    /// The keys (members, and ``CollectionRecord/headerKey`` for the kind, title, folder and deletion) whose state
    /// `other` holds exactly as this one does: what a delta or document `other` carries of this state.
    package func sameKeys(in other: CollectionDocument) -> Set<String> {
        var keys = Set<String>()
        if kind == other.kind && title == other.title && titleStamp == other.titleStamp && parent == other.parent
            && parentStamp == other.parentStamp && deleted == other.deleted
        {
            keys.insert(CollectionRecord.headerKey)
        }
        for (key, member) in members where other.members[key] == member { keys.insert(key) }
        return keys
    }

    /// A delta of this state: its kind, title, folder and deletion with their stamps, and only the members among
    /// `keys`. Merged into any state that holds what this one was made from, it gives this one's changes.
    package func restricted(to keys: Set<String>) -> CollectionDocument {
        var delta = self
        delta.members = members.filter { keys.contains($0.key) }
        return delta
    }

    // MARK: Local changes

    /// A stamp later than now and than `seen`.
    static func stamp(after seen: Stamp?, device: String, now: Date) -> Stamp {
        let millis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        return Stamp(time: max(millis, (seen?.time ?? Int64.min) + 1), device: device)
    }

    /// This state with the catalog's differences from it recorded as changes of `device` at `now`: the title, the
    /// folder, a deletion, and the album's members among `shareable` (the keys of assets in the bucket: an asset
    /// only this library has, or one it does not know, is left as the state says).
    package func folding(
        title: String, parent: String?, isDeleted: Bool, members catalog: [(key: String, position: Int64)],
        shareable: Set<String>, device: String, now: Date
    ) -> CollectionDocument {
        var result = self
        if isDeleted && deleted == nil { result.deleted = Self.stamp(after: nil, device: device, now: now) }
        if result.deleted != nil {
            result.members = [:]
            return result
        }
        if title != self.title {
            result.title = title
            result.titleStamp = Self.stamp(after: titleStamp, device: device, now: now)
        }
        if parent != self.parent {
            result.parent = parent
            result.parentStamp = Self.stamp(after: parentStamp, device: device, now: now)
        }
        var inCatalog = Set<String>()
        for (key, position) in catalog where shareable.contains(key) {
            inCatalog.insert(key)
            if var member = members[key] {
                if !member.isPresent {
                    member.added = Self.stamp(
                        after: max(member.added, member.removed ?? member.added), device: device, now: now)
                }
                if member.position != position || !member.isPresent {
                    member.position = position
                    member.placed = Self.stamp(after: member.placed, device: device, now: now)
                }
                result.members[key] = member
            } else {
                let stamp = Self.stamp(after: nil, device: device, now: now)
                result.members[key] = Member(added: stamp, removed: nil, position: position, placed: stamp)
            }
        }
        for (key, member) in members where member.isPresent && shareable.contains(key) && !inCatalog.contains(key) {
            var removed = member
            removed.removed = Self.stamp(after: member.added, device: device, now: now)
            result.members[key] = removed
        }
        return result
    }
}

extension CollectionDocument {
    /// This state with `pending` members (kept aside by the catalog) added where it has none of the key.
    func adding(_ pending: [String: PendingMember]) -> CollectionDocument {
        var result = self
        for (key, member) in pending where result.members[key] == nil { result.members[key] = Member(member) }
        return result
    }
}

extension CollectionDocument.Member {
    /// The member as the catalog keeps it while no asset has its key.
    init(_ pending: PendingMember) {
        self.init(
            added: CollectionDocument.Stamp(time: pending.addedTime, device: pending.addedDevice),
            removed: pending.removedTime.map {
                CollectionDocument.Stamp(time: $0, device: pending.removedDevice ?? "")
            },
            position: pending.position,
            placed: CollectionDocument.Stamp(time: pending.placedTime, device: pending.placedDevice))
    }

    var pending: PendingMember {
        PendingMember(
            addedTime: added.time, addedDevice: added.device, removedTime: removed?.time,
            removedDevice: removed?.device, position: position, placedTime: placed.time, placedDevice: placed.device)
    }
}
