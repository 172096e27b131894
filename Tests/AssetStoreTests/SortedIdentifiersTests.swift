import Foundation
import Testing

@testable import AssetStore

@Suite struct SortedIdentifiersTests {
    /// A list built from stretches of several chunks (appended, merged when contiguous, truncated) reads back, by
    /// index, by range, by run and flattened, exactly as the plain arrays it models.
    @Test func listOfSharedStretchesReadsAsItsPlainArrays() {
        var random = SystemRandomNumberGenerator()
        let chunks = (0..<4).map { chunk in
            let count = Int.random(in: 1...40, using: &random)
            let ids = ContiguousArray((0..<count).map { Int64(chunk * 1000 + $0) })
            return SortedChunk(ids: ids, keys: [.real(ContiguousArray(ids.map { Double($0) / 2 }))])
        }
        for _ in 0..<200 {
            var list = SortedIdentifiers(columnKinds: [.real([])])
            var model: [Int64] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let chunk = chunks.randomElement(using: &random)!
                let start = Int.random(in: 0..<chunk.ids.count, using: &random)
                let end = Int.random(in: start...chunk.ids.count, using: &random)
                if Bool.random(using: &random) {
                    list.append(chunk, start..<end)
                } else {
                    // Through another list sharing the chunk: the same stretch, appended by list range.
                    let other = SortedIdentifiers(ids: chunk.ids, keys: chunk.keys)
                    list.append(contentsOf: other, start..<end)
                }
                model += chunk.ids[start..<end]
            }
            if Bool.random(using: &random), !model.isEmpty {
                let kept = Int.random(in: 0...model.count, using: &random)
                list.truncate(to: kept)
                model.removeSubrange(kept...)
            }
            #expect(list.count == model.count)
            #expect(Array(list.ids) == model)
            #expect((0..<model.count).map { list.id(at: $0) } == model)
            #expect((0..<model.count).map { list.key(0, at: $0) } == model.map { .real(Double($0) / 2) })
            #expect(list.runs.allSatisfy { $0.count > 0 })
            if !model.isEmpty {
                let low = Int.random(in: 0..<model.count, using: &random)
                let high = Int.random(in: low...model.count, using: &random)
                #expect(Array(list.ids(in: low..<high)) == Array(model[low..<high]))
                var visited: [Int64] = []
                var next = low
                list.forEachRun(in: low..<high) { chunk, positions, start in
                    #expect(start == next)
                    next += positions.count
                    visited += chunk.ids[positions]
                }
                #expect(visited == Array(model[low..<high]))
            }
            let flat = list.flattened()
            #expect(flat.runs.count <= 1)
            #expect(Array(flat.ids) == model)
            guard case .real(let keys)? = flat.keys.first else {
                Issue.record("the flattened list lost its sort column")
                continue
            }
            #expect(Array(keys) == model.map { Double($0) / 2 })
        }
    }

    /// A list of one whole chunk hands out the chunk's own arrays (no copy).
    @Test func oneWholeChunkIsItsOwnStorage() {
        let ids: ContiguousArray<Int64> = [3, 1, 2]
        let list = SortedIdentifiers(ids: ids, keys: [.integer([1, 2, 3])])
        #expect(list.runs.count == 1)
        list.ids.withUnsafeBufferPointer { mine in
            ids.withUnsafeBufferPointer { theirs in #expect(mine.baseAddress == theirs.baseAddress) }
        }
    }
}
