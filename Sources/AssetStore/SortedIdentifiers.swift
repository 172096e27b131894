/// An immutable stretch of identifiers with their sort key values, shared by every list that contains part of it.
package final class SortedChunk: Sendable {
    /// The identifiers, in query order.
    package let ids: ContiguousArray<Int64>
    /// One column per sort criterion: `keys[c][i]` is the value of criterion `c` for `ids[i]`.
    package let keys: [SortColumn]

    package init(ids: ContiguousArray<Int64>, keys: [SortColumn]) {
        self.ids = ids
        self.keys = keys
    }
}

/// Consecutive elements of one chunk: `chunk` positions `start..<start + count`.
package struct SortedRun: Sendable {
    package let chunk: SortedChunk
    package let start: Int
    package let count: Int

    package var end: Int { start + count }
}

/// Identifiers in query order with their sort key values, as a fetch result keeps them.
///
/// The list is a sequence of runs, each a stretch of an immutable ``SortedChunk``: a fetch is one run over one
/// chunk, and a list derived from another by a few edits shares the other's chunks (O(edits) runs, no copy of the
/// elements). Element access is O(1) for one run and O(log r) for r runs; ``flattened()`` copies into one chunk.
package struct SortedIdentifiers: Sendable {
    /// The runs, in order; the list is their concatenation. None is empty.
    package private(set) var runs: ContiguousArray<SortedRun> = []
    /// `runEnds[r]`: the list index just past run `r` (ascending; the last one is the count).
    package private(set) var runEnds: ContiguousArray<Int> = []
    /// An empty column per sort criterion, of the kind the criterion's values have.
    package let columnKinds: [SortColumn]

    /// One run over `ids` and `keys` (no copy).
    package init(ids: ContiguousArray<Int64> = [], keys: [SortColumn] = []) {
        columnKinds = keys.map(\.emptyOfSameKind)
        if !ids.isEmpty { append(SortedChunk(ids: ids, keys: keys), 0..<ids.count) }
    }

    /// An empty list with these (empty) sort columns, to append to.
    package init(columnKinds: [SortColumn]) {
        self.columnKinds = columnKinds.map(\.emptyOfSameKind)
    }

    package var count: Int { runEnds.last ?? 0 }
    package var isEmpty: Bool { runs.isEmpty }

    /// The list index of the first element of run `run`.
    @inline(__always)
    package func runStart(_ run: Int) -> Int { run == 0 ? 0 : runEnds[run - 1] }

    /// The run holding list index `index` (0 ≤ index < count).
    @inline(__always)
    package func run(containing index: Int) -> Int {
        if runs.count == 1 { return 0 }
        return runEnds.withUnsafeBufferPointer { ends in
            var low = 0
            var high = ends.count - 1
            while low < high {
                let mid = (low + high) / 2
                if ends[mid] <= index { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    /// The chunk and chunk position of list index `index`.
    @inline(__always)
    package func location(of index: Int) -> (chunk: SortedChunk, offset: Int) {
        let run = run(containing: index)
        return (runs[run].chunk, runs[run].start + index - runStart(run))
    }

    /// The identifier at list index `index`.
    @inline(__always)
    package func id(at index: Int) -> Int64 {
        let (chunk, offset) = location(of: index)
        return chunk.ids[offset]
    }

    /// The value of sort criterion `column` at list index `index`.
    package func key(_ column: Int, at index: Int) -> SortValue {
        let (chunk, offset) = location(of: index)
        return chunk.keys[column][offset]
    }

    /// `true` when the list is one whole chunk.
    private var isOneWholeChunk: Bool {
        runs.count == 1 && runs[0].start == 0 && runs[0].count == runs[0].chunk.ids.count
    }

    /// The identifiers, in order (no copy for a list of one whole chunk).
    package var ids: ContiguousArray<Int64> { isOneWholeChunk ? runs[0].chunk.ids : ids(in: 0..<count) }

    /// The sort columns, in order (no copy for a list of one whole chunk).
    package var keys: [SortColumn] {
        isOneWholeChunk ? runs[0].chunk.keys : flattened().runs.first?.chunk.keys ?? columnKinds
    }

    /// The identifiers at list indexes `range`, in order.
    package func ids(in range: Range<Int>) -> ContiguousArray<Int64> {
        var result = ContiguousArray<Int64>()
        result.reserveCapacity(range.count)
        forEachRun(in: range) { chunk, positions, _ in result.append(contentsOf: chunk.ids[positions]) }
        return result
    }

    /// Calls `body(chunk, chunk positions, list index of the first)` for the stretches making up `range`, in order.
    package func forEachRun(in range: Range<Int>, _ body: (SortedChunk, Range<Int>, Int) throws -> Void) rethrows {
        guard !range.isEmpty else { return }
        var run = run(containing: range.lowerBound)
        var index = range.lowerBound
        while index < range.upperBound {
            let start = runStart(run)
            let end = Swift.min(runEnds[run], range.upperBound)
            let offset = runs[run].start - start
            try body(runs[run].chunk, (index + offset)..<(end + offset), index)
            index = end
            run += 1
        }
    }

    /// The same list as one whole chunk (itself when it already is one; a new chunk otherwise).
    package func flattened() -> SortedIdentifiers {
        guard !runs.isEmpty, !isOneWholeChunk else { return self }
        var ids = ContiguousArray<Int64>()
        ids.reserveCapacity(count)
        var keys = columnKinds
        for column in keys.indices { keys[column].reserveCapacity(count) }
        for run in runs {
            ids.append(contentsOf: run.chunk.ids[run.start..<run.end])
            for column in keys.indices { keys[column].append(contentsOf: run.chunk.keys[column], run.start..<run.end) }
        }
        return SortedIdentifiers(ids: ids, keys: keys)
    }

    // MARK: Building

    /// Appends `chunk` positions `positions` (merged into the last run when it continues it).
    package mutating func append(_ chunk: SortedChunk, _ positions: Range<Int>) {
        guard !positions.isEmpty else { return }
        if let last = runs.last, last.chunk === chunk, last.end == positions.lowerBound {
            runs[runs.count - 1] = SortedRun(chunk: chunk, start: last.start, count: last.count + positions.count)
            runEnds[runEnds.count - 1] += positions.count
        } else {
            runs.append(SortedRun(chunk: chunk, start: positions.lowerBound, count: positions.count))
            runEnds.append(count + positions.count)
        }
    }

    /// Appends `other[range]` (sharing its chunks).
    package mutating func append(contentsOf other: SortedIdentifiers, _ range: Range<Int>) {
        other.forEachRun(in: range) { chunk, positions, _ in append(chunk, positions) }
    }

    /// Keeps the first `newCount` elements.
    package mutating func truncate(to newCount: Int) {
        guard newCount < count else { return }
        guard newCount > 0 else {
            runs.removeAll()
            runEnds.removeAll()
            return
        }
        let last = run(containing: newCount - 1)
        runs.removeSubrange((last + 1)...)
        runEnds.removeSubrange((last + 1)...)
        let dropped = runEnds[last] - newCount
        runs[last] = SortedRun(chunk: runs[last].chunk, start: runs[last].start, count: runs[last].count - dropped)
        runEnds[last] = newCount
    }
}

extension SortColumn {
    /// An empty column of the same kind.
    package var emptyOfSameKind: SortColumn {
        switch self {
        case .real: .real([])
        case .integer: .integer([])
        case .text: .text([])
        }
    }
}
