import AssetStore
import Foundation

extension ChangeDetailsComputation {
    func compute() throws -> ComputedDetails {
        let limit = query.limit
        // The result may have been cut by the limit: beyond its last element, the store knows more.
        var horizon: (key: Key, id: Int64)?
        if let limit, count >= limit, count > 0 {
            let (chunk, offset) = before.location(of: count - 1)
            horizon = (order.key(chunk, offset), chunk.ids[offset])
        }

        // Two independent halves, side by side when large: the before side finds the deleted and updated objects
        // in the before list, the after side reads the after-records (placing the inserted objects, which need
        // nothing from the before side). The updated objects are placed once both are done. An id can be both
        // inserted and updated only in a history entry; it is handled once, as inserted.
        let beforeSide: (skipped: [Int], updatedIndex: [Int64: Int], updatedCount: Int)
        let afterSide: Placement
        let pendingUpdated: [(id: Int64, key: Key?)]
        if engine.beforeRecords.count + engine.afterRecords.count < ChangeDetailsEngine.concurrencyThreshold {
            beforeSide = locateDeletedAndUpdated(horizon: horizon)
            (afterSide, pendingUpdated) = placeInserted(horizon: horizon)
        } else {
            let computation = SideBox(self)
            let start = SideBox(horizon)
            let beforeBox = SideBox((skipped: [Int](), updatedIndex: [Int64: Int](), updatedCount: 0))
            let afterBox = SideBox((placement: Placement(), pendingUpdated: [(id: Int64, key: Key?)]()))
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    beforeBox.value = computation.value.locateDeletedAndUpdated(horizon: start.value)
                } else {
                    afterBox.value = computation.value.placeInserted(horizon: start.value)
                }
            }
            beforeSide = beforeBox.value
            afterSide = afterBox.value.placement
            pendingUpdated = afterBox.value.pendingUpdated
        }
        var updated = Placement()
        updated.candidates.reserveCapacity(pendingUpdated.count)
        for (id, key) in pendingUpdated { updated.place(id, key, at: beforeSide.updatedIndex[id], in: before, order) }
        if pendingUpdated.count < beforeSide.updatedCount {
            for id in engine.updated where !engine.inserted.contains(id) && engine.afterRecords[id] == nil {
                updated.place(id, nil, at: beforeSide.updatedIndex[id], in: before, order)
            }
        }
        sortInOrder(&updated.candidates, key: { $0.key }, id: { $0.id })
        // Before indexes leaving their place (removed or re-placed), sorted below; updated objects kept where they
        // were; the objects to place, in the query's order.
        var skipped = beforeSide.skipped + afterSide.skipped + updated.skipped
        let changedInPlace = afterSide.changedInPlace + updated.changedInPlace
        var candidates = merged(afterSide.candidates, updated.candidates)
        var removedByLimit: [Int] = []
        skipped.sort()
        if skipped.count > 1 {  // an index leaves its place once
            var unique = 1
            for index in 1..<skipped.count where skipped[index] != skipped[unique - 1] {
                skipped[unique] = skipped[index]
                unique += 1
            }
            skipped.removeSubrange(unique...)
        }

        // Candidates past the horizon are not known to belong; they compete with the store's rows there.
        var beyond: [Candidate] = []
        if let horizon,
            let firstBeyond = candidates.firstIndex(where: { order.precedes(horizon.key, horizon.id, $0.key, $0.id) })
        {
            beyond = Array(candidates[firstBeyond...])
            candidates.removeSubrange(firstBeyond...)
        }

        // Merge the kept elements (in before order) with the placed candidates.
        let placedChunk = chunk(candidates)
        let flat = before.runs.count + skipped.count + 2 * candidates.count + 1 > ChangeDetailsEngine.maximumRuns
        var after = AfterList(
            order: order, columnKinds: query.sort.map { SortColumn(for: $0.key) }, flat: flat,
            capacity: count - skipped.count + candidates.count)
        var kept: [KeptStretch] = []

        func appendKept(_ range: Range<Int>) {
            guard !range.isEmpty else { return }
            kept.append(KeptStretch(before: range.lowerBound, after: after.count, count: range.count))
            after.append(before, range)
        }
        func appendCandidate(_ index: Int, from chunk: SortedChunk, at position: Int) {
            candidates[index].afterIndex = after.count
            after.append(candidates[index].id, candidates[index].key, at: position, of: chunk)
        }

        var next = 0
        var segmentStart = 0
        for boundary in skipped + [count] {
            var cursor = segmentStart
            while next < candidates.count {
                let insertion = lowerBound(
                    candidates[next].key, candidates[next].id, in: cursor..<boundary, galloping: true)
                if insertion == boundary { break }
                appendKept(cursor..<insertion)
                cursor = insertion
                appendCandidate(next, from: placedChunk, at: next)
                next += 1
            }
            appendKept(cursor..<boundary)
            segmentStart = boundary + 1
        }
        while next < candidates.count {
            appendCandidate(next, from: placedChunk, at: next)
            next += 1
        }

        // Limit: cut the tail, or fill from beyond the old end.
        if let limit {
            if after.count > limit {
                after.truncate(to: limit)
                while let last = kept.last, last.after + last.count > limit {
                    let remaining = Swift.max(0, limit - last.after)
                    removedByLimit.append(contentsOf: (last.before + remaining)..<(last.before + last.count))
                    if remaining > 0 {
                        kept[kept.count - 1].count = remaining
                        break
                    }
                    kept.removeLast()
                }
                for index in candidates.indices where candidates[index].afterIndex >= limit {
                    candidates[index].afterIndex = -1
                }
            }
            if let horizon, after.count < limit {
                let needed = limit - after.count
                let affected = engine.inserted.union(engine.updated).union(engine.deleted)
                let position = SortPosition(values: order.sortValues(horizon.key), id: horizon.id)
                let stored = try engine.fill(position, affected, needed).map {
                    Candidate(key: order.key(of: $0), id: $0.id ?? 0, beforeIndex: -1)
                }
                var merged = (stored + beyond).sorted(by: precedes)
                if merged.count > needed { merged.removeSubrange(needed...) }
                let filledChunk = chunk(merged)
                for (position, candidate) in merged.enumerated() {
                    candidates.append(candidate)
                    appendCandidate(candidates.count - 1, from: filledChunk, at: position)
                }
            }
            // Objects of the before result that went past the end and were not taken back are removed (they are
            // among the skipped indexes, as no placed candidate has their before index).
        }

        var details = ComputedDetails(after: after.finished())
        var replaced: [KeptStretch] = []  // re-placed objects, one each, in after order
        for candidate in candidates where candidate.afterIndex >= 0 {
            if candidate.beforeIndex >= 0 {
                replaced.append(KeptStretch(before: candidate.beforeIndex, after: candidate.afterIndex, count: 1))
                details.changed.append(candidate.afterIndex)
            } else {
                details.inserted.append(candidate.afterIndex)  // ascending: candidates are placed in order
            }
        }
        // Removed: the skipped indexes that were not placed again, and the kept ones cut by the limit.
        var replacedBefore = replaced.map(\.before)
        replacedBefore.sort()
        details.removed.reserveCapacity(skipped.count - replacedBefore.count + removedByLimit.count)
        var r = 0
        for index in skipped {
            while r < replacedBefore.count && replacedBefore[r] < index { r += 1 }
            if r < replacedBefore.count && replacedBefore[r] == index { continue }
            details.removed.append(index)
        }
        if !removedByLimit.isEmpty {
            details.removed += removedByLimit
            details.removed.sort()
        }
        for index in changedInPlace {
            if let afterIndex = afterIndex(ofKept: index, in: kept) { details.changed.append(afterIndex) }
        }
        details.changed.sort()
        details.moves = moves(kept: kept, replaced: replaced, inserted: details.inserted)
        return details
    }

    /// The after index of a kept before index, or `nil` when it is in no stretch (cut by the limit).
    func afterIndex(ofKept index: Int, in kept: [KeptStretch]) -> Int? {
        var low = 0
        var high = kept.count
        while low < high {  // the first stretch starting after `index`
            let mid = (low + high) / 2
            if kept[mid].before <= index { low = mid + 1 } else { high = mid }
        }
        guard low > 0, index < kept[low - 1].before + kept[low - 1].count else { return nil }
        return kept[low - 1].after + index - kept[low - 1].before
    }

    /// Minimal moves: every common object (in both lists) outside a longest chain of objects whose before and
    /// after orders agree moves. `from` is its index in the intermediate list, where common objects fill, in before
    /// order, the indexes not taken by insertions.
    ///
    /// The chain is found over items rather than objects: each kept stretch is one item weighing its length (its
    /// objects are consecutive in both lists, and every other common object is before or after all of them in
    /// each list, so a longest chain takes all of a stretch or none), each re-placed object one of weight 1.
    func moves(kept: [KeptStretch], replaced: [KeptStretch], inserted: [Int]) -> [ComputedMove] {
        guard !replaced.isEmpty else { return [] }  // kept objects keep their order
        // After ranks: kept stretches and re-placed objects are each in after order; merge them.
        var keptRank = [Int32](repeating: 0, count: kept.count)
        var replacedRank = [Int32](repeating: 0, count: replaced.count)
        var k = 0
        var r = 0
        var rank: Int32 = 0
        while k < kept.count || r < replaced.count {
            if r == replaced.count || (k < kept.count && kept[k].after < replaced[r].after) {
                keptRank[k] = rank
                k += 1
            } else {
                replacedRank[r] = rank
                r += 1
            }
            rank += 1
        }
        // Items in before order: kept stretches (already), re-placed objects sorted by before index.
        var replacedOrder = Array(replaced.indices)
        replacedOrder.sort { replaced[$0].before < replaced[$1].before }
        var items: [KeptStretch] = []
        var ranks: [Int32] = []
        items.reserveCapacity(kept.count + replaced.count)
        ranks.reserveCapacity(kept.count + replaced.count)
        k = 0
        r = 0
        while k < kept.count || r < replacedOrder.count {
            if r == replacedOrder.count || (k < kept.count && kept[k].before < replaced[replacedOrder[r]].before) {
                items.append(kept[k])
                ranks.append(keptRank[k])
                k += 1
            } else {
                items.append(replaced[replacedOrder[r]])
                ranks.append(replacedRank[replacedOrder[r]])
                r += 1
            }
        }
        let chain = heaviestIncreasingChain(ranks) { items[$0].count }

        var result: [ComputedMove] = []
        var common = 0  // common objects before the current one, in before order
        var insertedBelow = 0
        for (item, stretch) in items.enumerated() {
            if chain[item] {
                common += stretch.count
                continue
            }
            for offset in 0..<stretch.count {
                while insertedBelow < inserted.count && inserted[insertedBelow] <= common + insertedBelow {
                    insertedBelow += 1
                }
                result.append(
                    ComputedMove(
                        from: common + insertedBelow, beforeIndex: stretch.before + offset, to: stretch.after + offset))
                common += 1
            }
        }
        return result
    }
}
