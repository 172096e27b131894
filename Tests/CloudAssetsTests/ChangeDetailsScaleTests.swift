import AssetStore
import Essentials
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// Change details on results of thousands of objects, derived from one another through chains of changes: small
/// changes (after lists sharing the before list's storage) and large ones (copied into one chunk) alternate.
@Suite(.heavy) struct ChangeDetailsScaleTests {
    /// Length of a longest strictly increasing subsequence (patience sorting; independent of the engine's).
    private func longestIncreasing(_ values: [Int]) -> Int {
        var tails: [Int] = []
        for value in values {
            var low = 0
            var high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if tails[mid] < value { low = mid + 1 } else { high = mid }
            }
            if low == tails.count { tails.append(value) } else { tails[low] = value }
        }
        return tails.count
    }

    private func record(_ id: Int64, date: Double, hidden: Bool = false) -> AssetRecord {
        var record = AssetRecord(
            key: "originals/\(id).jpg", size: 1, etag: "e\(id)", lastModified: Date(timeIntervalSinceReferenceDate: 0),
            creationDate: Date(timeIntervalSinceReferenceDate: date), mediaType: .image, pixelWidth: 1, pixelHeight: 1,
            isHidden: hidden)
        record.id = id
        return record
    }

    /// For each link of a chain of random changes (deletions, insertions, new dates, some equal to others' so
    /// identifiers break ties, objects hidden out of the result): the after list is the sorted truth, the PhotoKit
    /// convention turns the before list into it, removed/inserted/changed indexes are exact, and the moves are
    /// minimal. The largest changes (12,000 operations) are computed in two halves side by side.
    @Test(arguments: [(false, 3000, 400), (true, 3000, 400), (false, 12_000, 12_000), (true, 12_000, 12_000)])
    func chainedChangesTransformEachResultMinimally(descending: Bool, objects: Int, large: Int) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scale-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try AssetStore(folder: folder)
        var random = SplitMix64(seed: descending ? 7 : UInt64(objects))
        let options = FetchOptions(sortBy: [.creationDate(ascending: !descending)])
        func ordered(_ dates: [Int64: Double]) -> [Int64] {
            dates.map { ($0.value, $0.key) }.sorted { descending ? $0 > $1 : $0 < $1 }.map(\.1)
        }
        // Dates before the reference date too (negative), and many equal: identifiers break the ties.
        func dateOf(_ random: inout SplitMix64) -> Double { Double(random.next(below: 500)) * 10 - 2000 }

        var dates: [Int64: Double] = [:]
        for id in Int64(1)...Int64(objects) { dates[id] = dateOf(&random) }
        var ids = ordered(dates)
        let keys = ContiguousArray(ids.map { dates[$0]! })
        var result = FetchResult(
            store: store, options: options,
            sorted: SortedIdentifiers(ids: ContiguousArray(ids), keys: [.real(keys)]))
        var nextID = Int64(objects) + 1
        var sawRuns = false
        var sawFlat = false
        for link in 0..<(large > 1000 ? 4 : 12) {
            // Alternately a few changes (shared storage) and hundreds (a new chunk).
            let size = link % 3 == 2 ? large : Int(random.next(below: 6)) + 1
            var changes = StoreChangeSet(token: ChangeToken(rawValue: Int64(link + 1)))
            var after = dates
            for _ in 0..<size {
                switch random.next(below: 4) {
                case 0:
                    let id = ids[Int(random.next(below: UInt64(ids.count)))]
                    guard after[id] != nil, !changes.updated.contains(id) else { continue }
                    changes.deleted.insert(id)
                    changes.before[id] = record(id, date: dates[id]!)
                    after[id] = nil
                case 1:
                    let id = nextID
                    nextID += 1
                    changes.inserted.insert(id)
                    after[id] = dateOf(&random)
                    changes.after[id] = record(id, date: after[id]!)
                default:
                    let id = ids[Int(random.next(below: UInt64(ids.count)))]
                    guard after[id] != nil, !changes.updated.contains(id) else { continue }
                    let hide = random.next(below: 10) == 0
                    changes.updated.insert(id)
                    changes.before[id] = record(id, date: dates[id]!)
                    let date = random.next(below: 3) == 0 ? dates[id]! : dateOf(&random)
                    changes.after[id] = record(id, date: date, hidden: hide)
                    after[id] = hide ? nil : date
                }
            }
            let change = LibraryChange(changes: changes, store: store, maxIncrementalChangeCount: .max)
            let truth = ordered(after)
            guard let details = change.details(for: result) else {
                #expect(truth == ids)
                continue
            }
            let afterIDs = Array(details.fetchResultAfterChanges.identifiers)
            #expect(afterIDs == truth, "link \(link)")
            #expect(applyPhotoKitConvention(ids, details) == afterIDs, "link \(link)")
            let kept = Set(ids).intersection(afterIDs)
            #expect(Set((details.removedIndexes ?? []).map { ids[$0] }) == Set(ids).subtracting(afterIDs))
            #expect(Set((details.insertedIndexes ?? []).map { afterIDs[$0] }) == Set(afterIDs).subtracting(ids))
            #expect(Set((details.changedIndexes ?? []).map { afterIDs[$0] }) == kept.intersection(changes.updated))
            let afterIndex = Dictionary(uniqueKeysWithValues: afterIDs.enumerated().map { ($1, $0) })
            let keptOrder = ids.filter(kept.contains).map { afterIndex[$0]! }
            #expect(details.moves.count == kept.count - longestIncreasing(keptOrder), "link \(link)")
            for move in details.moves { #expect(ids[move.beforeIndex] == afterIDs[move.toIndex]) }
            let runs = details.fetchResultAfterChanges.sorted.runs.count
            if runs > 1 { sawRuns = true }
            if size == large { sawFlat = sawFlat || runs == 1 }
            // Random access on the derived result agrees with its identifiers.
            for _ in 0..<50 where !afterIDs.isEmpty {
                let index = Int(random.next(below: UInt64(afterIDs.count)))
                #expect(details.fetchResultAfterChanges.sorted.id(at: index) == afterIDs[index])
            }
            result = details.fetchResultAfterChanges
            ids = afterIDs
            dates = after
        }
        #expect(sawRuns)
        #expect(sawFlat)
    }

    /// The radix sort of large changes puts (date, identifier) pairs in the order comparisons give, and its
    /// images order doubles and integers as they compare — ties, -0, infinities and extremes included.
    @Test func radixSortOrdersAsComparisonsDo() {
        var random = SplitMix64(seed: 11)
        let specials: [Double] = [
            0, -0.0, 1, -1, .infinity, -.infinity, .leastNonzeroMagnitude,
            -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1e-300, -1e300,
        ]
        for _ in 0..<2000 {
            let a = Double(bitPattern: random.next())
            let b = random.next(below: 4) == 0 ? a : Double(bitPattern: random.next())
            guard !a.isNaN, !b.isNaN else { continue }
            #expect((a < b) == (orderedBits(a) < orderedBits(b)) && (a == b) == (orderedBits(a) == orderedBits(b)))
        }
        for a in specials {
            for b in specials {
                #expect((a < b) == (orderedBits(a) < orderedBits(b)) && (a == b) == (orderedBits(a) == orderedBits(b)))
            }
        }
        let integers: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        for a in integers {
            for b in integers { #expect((a < b) == (orderedBits(a) < orderedBits(b))) }
        }
        for (count, ascending) in [(5000, true), (5000, false), (3, true), (0, true)] {
            var pairs: [(date: Double, id: Int64)] = (0..<count).map { index in
                let date =
                    random.next(below: 8) == 0
                    ? specials[Int(random.next(below: 12))]
                    : Double(
                        Int64(random.next(below: 2000)) - 1000) / 4
                return (date, Int64(index) - 2500)
            }
            pairs.shuffle(using: &random)
            let expected = pairs.sorted {
                ascending ? ($0.date, $0.id) < ($1.date, $1.id) : ($0.date, $0.id) > ($1.date, $1.id)
            }
            radixSort(&pairs) { pair in
                let high = orderedBits(pair.date)
                let low = orderedBits(pair.id)
                return ascending ? (high, low) : (~high, ~low)
            }
            #expect(pairs.map(\.id) == expected.map(\.id))
        }
    }

    /// The heaviest increasing chain weighs as much as the best found by trying every subset (small inputs).
    @Test func heaviestIncreasingChainIsHeaviest() {
        var random = SplitMix64(seed: 3)
        for _ in 0..<300 {
            let count = Int(random.next(below: 9))
            var ranks = (0..<count).map { Int32($0) }
            for index in ranks.indices.reversed() {
                ranks.swapAt(index, Int(random.next(below: UInt64(index + 1))))
            }
            let weights = (0..<count).map { _ in Int(random.next(below: 5)) + 1 }
            let chain = heaviestIncreasingChain(ranks) { weights[$0] }
            let members = (0..<count).filter { chain[$0] }
            #expect(zip(members, members.dropFirst()).allSatisfy { ranks[$0] < ranks[$1] })
            var best = 0
            for mask in 0..<(1 << count) {
                let subset = (0..<count).filter { mask & (1 << $0) != 0 }
                guard zip(subset, subset.dropFirst()).allSatisfy({ ranks[$0] < ranks[$1] }) else { continue }
                best = max(best, subset.map { weights[$0] }.reduce(0, +))
            }
            #expect(members.map { weights[$0] }.reduce(0, +) == best)
        }
    }
}
