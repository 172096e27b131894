import AssetStore
import CloudAssets
import Essentials
import Foundation

/// Synthetic workloads for timing change details, built on the library's package-level initialisers.
enum ChangeDetailsBenchmark {
    /// A before fetch result and one change to it, built without timing.
    struct Scenario: Sendable {
        let change: LibraryChange
        /// What the change did, and the store it was made for.
        let changes: StoreChangeSet
        let store: AssetStore
        let before: FetchResult
        /// Identifiers before and after, for a comparison with a generic diff.
        public let beforeIDs: [Int64]
        public let afterIDs: [Int64]
        /// The store's temporary folder: the caller removes it when done with the scenario.
        public let folder: URL
    }

    /// A library-sized fetch result sorted by creation date (`count` assets), and a change that deletes `removed`,
    /// inserts `inserted`, moves `moved` (new creation date) and, when `moved` is 0 and the rest too, changes the
    /// date of one asset. Uses an empty store in a temporary folder (``Scenario/folder``, for the caller to remove).
    static func makeScenario(count: Int, removed: Int, inserted: Int, moved: Int, seed: UInt64 = 42)
        throws -> Scenario
    {
        var random = SplitMix64(seed: seed)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ca-bench-\(UUID().uuidString)")
        let store = try AssetStore(folder: folder)
        let options = FetchOptions(sortBy: [.creationDate()])
        // Before: ids 1...count with increasing dates 10, 20, 30, …
        let ids = ContiguousArray((1...Int64(count)))
        let dates = ContiguousArray(ids.map { Double($0) * 10 })
        let before = FetchResult(
            store: store, options: options, sorted: SortedIdentifiers(ids: ids, keys: [.real(dates)]))

        var positions = Array(0..<count)
        random.shuffle(&positions)
        var changes = StoreChangeSet(token: ChangeToken(rawValue: 1))
        var cursor = 0
        for _ in 0..<removed {
            let id = ids[positions[cursor]]
            cursor += 1
            changes.deleted.insert(id)
            changes.before[id] = record(id, date: dates[Int(id) - 1])
        }
        let movedCount = (removed == 0 && inserted == 0 && moved == 0) ? 1 : moved
        for _ in 0..<movedCount {
            let id = ids[positions[cursor]]
            cursor += 1
            changes.updated.insert(id)
            changes.before[id] = record(id, date: dates[Int(id) - 1])
            changes.after[id] = record(id, date: Double(random.next(below: UInt64(count) * 10)) + 5)
        }
        for index in 0..<inserted {
            let id = Int64(count + 1 + index)
            changes.inserted.insert(id)
            changes.after[id] = record(id, date: Double(random.next(below: UInt64(count) * 10)) + 5)
        }
        let change = LibraryChange(changes: changes, store: store, maxIncrementalChangeCount: .max)
        // The after order, computed naively for the comparison.
        var after: [(Double, Int64)] = []
        for (index, id) in ids.enumerated() where !changes.deleted.contains(id) && !changes.updated.contains(id) {
            after.append((dates[index], id))
        }
        for (id, record) in changes.after { after.append((record.creationDate.timeIntervalSinceReferenceDate, id)) }
        after.sort { $0 < $1 }
        return Scenario(
            change: change, changes: changes, store: store, before: before, beforeIDs: Array(ids),
            afterIDs: after.map(\.1), folder: folder)
    }

    /// A scenario of `makeScenario(count:removed: 0, inserted: 0, moved: 0)` whose result after its change is the
    /// before result of a second change, which gives one other asset a new creation date.
    static func makeChainedScenario(count: Int, seed: UInt64 = 43) throws -> Scenario {
        let first = try makeScenario(count: count, removed: 0, inserted: 0, moved: 0, seed: seed)
        guard let derived = first.change.details(for: first.before)?.fetchResultAfterChanges else {
            throw BenchError("the first change of the chained scenario changed nothing")
        }
        var random = SplitMix64(seed: seed &+ 1)
        var dates: [Int64: Double] = [:]
        for (id, record) in first.changes.after { dates[id] = record.creationDate.timeIntervalSinceReferenceDate }
        func date(_ id: Int64) -> Double { dates[id] ?? Double(id) * 10 }
        var id: Int64
        repeat { id = first.afterIDs[Int(random.next(below: UInt64(count)))] } while dates[id] != nil
        var changes = StoreChangeSet(token: ChangeToken(rawValue: 2))
        changes.updated.insert(id)
        changes.before[id] = record(id, date: date(id))
        let newDate = Double(random.next(below: UInt64(count) * 10)) + 5
        changes.after[id] = record(id, date: newDate)
        dates[id] = newDate
        let change = LibraryChange(changes: changes, store: first.store, maxIncrementalChangeCount: .max)
        let after = first.afterIDs.map { (date($0), $0) }.sorted { $0 < $1 }.map(\.1)
        return Scenario(
            change: change, changes: changes, store: first.store, before: derived, beforeIDs: first.afterIDs,
            afterIDs: after, folder: first.folder)
    }

    private static func record(_ id: Int64, date: Double) -> AssetRecord {
        var record = AssetRecord(
            key: "originals/\(id).jpg", size: 1000, etag: "e\(id)",
            lastModified: Date(timeIntervalSinceReferenceDate: 0),
            creationDate: Date(timeIntervalSinceReferenceDate: date), mediaType: .image, pixelWidth: 4, pixelHeight: 3)
        record.id = id
        return record
    }

    /// Computes the change details (the timed operation) and returns (removed, inserted, changed, moves) counts.
    static func computeDetails(_ scenario: Scenario) -> (removed: Int, inserted: Int, changed: Int, moves: Int) {
        guard let details = scenario.change.details(for: scenario.before) else { return (0, 0, 0, 0) }
        return (
            details.removedIndexes?.count ?? 0, details.insertedIndexes?.count ?? 0, details.changedIndexes?.count ?? 0,
            details.moves.count
        )
    }

    /// `true` when the computed after result equals the naively sorted one (checked outside the timings).
    static func verify(_ scenario: Scenario) -> Bool {
        scenario.change.details(for: scenario.before)?.fetchResultAfterChanges.identifiers.elementsEqual(
            scenario.afterIDs) ?? false
    }

    /// The standard library's diff with moves over the same identifiers; returns the number of changes.
    static func standardLibraryDiff(_ scenario: Scenario) -> Int {
        scenario.afterIDs.difference(from: scenario.beforeIDs).inferringMoves().count
    }
}
