import AssetStore
import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import CloudAssets

/// An asset to create: few distinct values, so sort ties and predicate flips are common.
struct AssetSpec: Sendable, CustomStringConvertible {
    var day: Int
    var favorite: Bool
    var hidden: Bool
    var size: Int64
    var description: String { "(d\(day) f\(favorite ? 1 : 0) h\(hidden ? 1 : 0) s\(size))" }
}

/// One operation of a random transaction; `pick` chooses an existing asset modulo the count.
enum Operation: Sendable, CustomStringConvertible {
    case insert(AssetSpec)
    case delete(pick: Int)
    case setDay(pick: Int, day: Int)
    case setFavorite(pick: Int, Bool)
    case setHidden(pick: Int, Bool)
    case setSize(pick: Int, Int64)
    case setETag(pick: Int)

    var description: String {
        switch self {
        case .insert(let spec): "insert\(spec)"
        case .delete(let pick): "delete#\(pick)"
        case .setDay(let pick, let day): "day#\(pick)=\(day)"
        case .setFavorite(let pick, let value): "fav#\(pick)=\(value)"
        case .setHidden(let pick, let value): "hidden#\(pick)=\(value)"
        case .setSize(let pick, let value): "size#\(pick)=\(value)"
        case .setETag(let pick): "etag#\(pick)"
        }
    }
}

enum Generators {
    static let spec = zip(Gen.int(in: 0...6), Gen.bool, Gen.int(in: 0...9), Gen.int(in: 0...4)).map {
        AssetSpec(day: $0, favorite: $1, hidden: $2 == 0, size: Int64($3))
    }
    static let operation = Gen.oneOf(
        spec.map { Operation.insert($0) },
        Gen.int(in: 0...99).map { Operation.delete(pick: $0) },
        zip(Gen.int(in: 0...99), Gen.int(in: 0...6)).map { Operation.setDay(pick: $0, day: $1) },
        zip(Gen.int(in: 0...99), Gen.bool).map { Operation.setFavorite(pick: $0, $1) },
        zip(Gen.int(in: 0...99), Gen.bool).map { Operation.setHidden(pick: $0, $1) },
        zip(Gen.int(in: 0...99), Gen.int(in: 0...4)).map { Operation.setSize(pick: $0, Int64($1)) },
        Gen.int(in: 0...99).map { Operation.setETag(pick: $0) }
    )
    static let options = zip(Gen.int(in: 0...4), Gen.int(in: 0...7), Gen.int(in: 0...4), Gen.bool).map {
        predicateChoice, sortChoice, limitChoice, includeHidden in
        let predicates: [AssetPredicate] = [
            .all, .isFavorite(true), .not(.isFavorite(true)),
            .or([.isFavorite(true), .creationDate(Date(timeIntervalSinceReferenceDate: 0)..<day(3))]),
            .addedSince(day(3)),
        ]
        let sorts: [[AssetSortDescriptor]] = [
            [], [.creationDate()], [.creationDate(ascending: false)], [.size(), .creationDate(ascending: false)],
            [.key(ascending: false)], [.pixelCount(), .size(ascending: false)], [.size(ascending: false)],
            [.addedDate(ascending: false)],
        ]
        let limits: [Int?] = [nil, nil, 1, 4, 9]
        return FetchOptions(
            predicate: predicates[predicateChoice], sortBy: sorts[sortChoice], limit: limits[limitChoice],
            includeHiddenAssets: includeHidden)
    }
}

func day(_ value: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(value) * 86_400) }

/// Applies PhotoKit's documented convention (see `FetchResultChangeDetails`) to the before identifiers.
func applyPhotoKitConvention(_ before: [Int64], _ details: FetchResultChangeDetails) -> [Int64] {
    var list = before
    for index in (details.removedIndexes ?? []).reversed() { list.remove(at: index) }
    let after = Array(details.fetchResultAfterChanges.identifiers)
    for index in details.insertedIndexes ?? [] { list.insert(after[index], at: index) }
    // Moves, all at once: moved objects at toIndex, inserted objects at their index, the rest in order.
    var result = [Int64?](repeating: nil, count: list.count)
    for index in details.insertedIndexes ?? [] { result[index] = list[index] }
    for move in details.moves { result[move.toIndex] = list[move.fromIndex] }
    let fixed = Set(details.insertedIndexes ?? []).union(details.moves.map(\.fromIndex))
    var slot = 0
    for (index, id) in list.enumerated() where !fixed.contains(index) {
        while result[slot] != nil { slot += 1 }
        result[slot] = id
    }
    return result.map { $0! }
}

/// Length of a longest common subsequence (plain O(n·m) dynamic programming, independent of the library's LIS).
func longestCommonSubsequence(_ a: [Int64], _ b: [Int64]) -> Int {
    guard !a.isEmpty, !b.isEmpty else { return 0 }
    var previous = [Int](repeating: 0, count: b.count + 1)
    for x in a {
        var current = [Int](repeating: 0, count: b.count + 1)
        for (j, y) in b.enumerated() { current[j + 1] = x == y ? previous[j] + 1 : max(previous[j + 1], current[j]) }
        previous = current
    }
    return previous[b.count]
}

@Suite(.heavy) struct ChangeDetailsPropertyTests {
    /// For random libraries, fetch options and transactions: the derived after result equals a fresh fetch;
    /// applying removals, insertions, then moves to the before list yields the after list; changed indexes point
    /// exactly at the updated objects present in both; moves are minimal; the list-UI steps give the same result;
    /// and a change read back from the history describes the same thing.
    @Test func detailsTransformBeforeIntoAfterMinimally() async throws {
        let folder = LibraryFolder()
        defer { folder.cleanup() }
        let library = try await AssetLibrary(configuration: folder.configuration())
        let store = library.catalog.store
        var serial = 0
        func record(_ spec: AssetSpec) -> AssetRecord {
            serial += 1
            var record = testRecord(
                "k\(serial % 7)-\(serial)", day: spec.day, favorite: spec.favorite, hidden: spec.hidden,
                size: spec.size)
            // Added to the bucket on a day of its own, or not listed yet (added last).
            record.lastModified = spec.size == 0 ? AssetRecord.notListedYet : day(spec.day + Int(spec.size))
            return record
        }

        await propertyCheck(
            count: 300, input: Generators.spec.array(of: 0...25), Generators.options,
            Generators.operation.array(of: 0...10)
        ) { population, options, operations in
            // Reset the library to the population.
            _ = try store.write { tx in
                for id in try store.fetchIDs(StoreQuery()) { try tx.delete(id) }
                for spec in population { try tx.insert(record(spec)) }
            }
            let before = try library.fetchAssets(options)
            let (_, changeSet) = try store.write { tx in
                var ids = try store.fetchIDs(StoreQuery())
                for operation in operations {
                    func pick(_ n: Int) -> Int64? { ids.isEmpty ? nil : ids[n % ids.count] }
                    switch operation {
                    case .insert(let spec): ids.append(try tx.insert(record(spec)))
                    case .delete(let n):
                        if let id = pick(n) {
                            try tx.delete(id)
                            ids.removeAll { $0 == id }
                        }
                    case .setDay(let n, let value):
                        if let id = pick(n) { try tx.update(id) { $0.creationDate = day(value) } }
                    case .setFavorite(let n, let value):
                        if let id = pick(n) { try tx.update(id) { $0.isFavorite = value } }
                    case .setHidden(let n, let value):
                        if let id = pick(n) { try tx.update(id) { $0.isHidden = value } }
                    case .setSize(let n, let value):
                        if let id = pick(n) { try tx.update(id) { $0.size = value } }
                    case .setETag(let n):
                        // Replaced in the bucket: a new version, added last.
                        if let id = pick(n) {
                            try tx.update(id) {
                                $0.etag += "'"
                                $0.lastModified = day(12)
                            }
                        }
                    }
                }
            }
            let truth = Array(try library.fetchAssets(options).identifiers)
            let beforeIDs = Array(before.identifiers)
            let live = LibraryChange(changes: changeSet, store: store, maxIncrementalChangeCount: .max)
            guard let details = live.details(for: before) else {
                // Nil only when nothing visible happened.
                #expect(truth == beforeIDs)
                #expect(Set(truth).isDisjoint(with: changeSet.updated))
                return
            }
            let afterIDs = Array(details.fetchResultAfterChanges.identifiers)
            #expect(afterIDs == truth)
            #expect(applyPhotoKitConvention(beforeIDs, details) == afterIDs)

            let kept = Set(beforeIDs).intersection(afterIDs)
            let expectedChanged = kept.intersection(changeSet.updated)
            #expect(Set((details.changedIndexes ?? []).map { afterIDs[$0] }) == expectedChanged)
            #expect(details.changedIndexes?.count == expectedChanged.count)
            #expect(Set((details.removedIndexes ?? []).map { beforeIDs[$0] }) == Set(beforeIDs).subtracting(afterIDs))
            #expect(Set((details.insertedIndexes ?? []).map { afterIDs[$0] }) == Set(afterIDs).subtracting(beforeIDs))

            // Minimal moves: everything kept except a longest order-preserving subsequence.
            let keptBefore = beforeIDs.filter(kept.contains)
            let keptAfter = afterIDs.filter(kept.contains)
            #expect(details.moves.count == kept.count - longestCommonSubsequence(keptBefore, keptAfter))
            #expect(details.hasMoves == !details.moves.isEmpty)
            for move in details.moves { #expect(beforeIDs[move.beforeIndex] == afterIDs[move.toIndex]) }

            // The list-UI steps produce the after list too.
            var rows = beforeIDs
            ListUpdate(details).apply(to: &rows, afterCount: afterIDs.count) { afterIDs[$0] }
            #expect(rows == afterIDs)

            // The same change read from the history describes the same transformation.
            let historical = try #require(
                try library.changes(since: ChangeToken(rawValue: changeSet.token.rawValue - 1)).first)
            let replayed = try #require(historical.details(for: before))
            #expect(Array(replayed.fetchResultAfterChanges.identifiers) == afterIDs)
            #expect(replayed.removedIndexes == details.removedIndexes)
            #expect(replayed.insertedIndexes == details.insertedIndexes)
            #expect(replayed.changedIndexes == details.changedIndexes)
            #expect(replayed.moves.count == details.moves.count)
        }
    }
}
