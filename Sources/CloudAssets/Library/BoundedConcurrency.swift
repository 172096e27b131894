/// Runs `body` on every element, at most `limit` at a time (a new one starts as each ends), and hands each result
/// to `receive` as it finishes, in the calling task, one at a time. The first error thrown (by `body` or
/// `receive`) cancels the rest and is rethrown.
///
/// The one shape of the library's request fan-outs (journal entries, sidecars, manifests, HEADs, thumbnails): a
/// few connections kept busy, never one task per object.
func concurrentForEach<Element: Sendable, Result: Sendable>(
    _ elements: some Sequence<Element>, limit: Int, _ body: @escaping @Sendable (Element) async throws -> Result,
    receiving receive: (Result) async throws -> Void
) async throws {
    try await withThrowingTaskGroup(of: Result.self) { group in
        var iterator = elements.makeIterator()
        func addNext() -> Bool {
            guard let element = iterator.next() else { return false }
            group.addTask { try await body(element) }
            return true
        }
        for _ in 0..<max(1, limit) where !addNext() { break }
        while let result = try await group.next() {
            try await receive(result)
            _ = addNext()
        }
    }
}

/// ``concurrentForEach(_:limit:_:receiving:)`` collecting the results, in the order they finished.
func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: some Sequence<Element>, limit: Int, _ body: @escaping @Sendable (Element) async throws -> Result
) async throws -> [Result] {
    var results: [Result] = []
    try await concurrentForEach(elements, limit: limit, body) { results.append($0) }
    return results
}

/// ``concurrentForEach(_:limit:_:receiving:)`` for work that handles its own failures: nothing is thrown, nothing
/// collected.
func concurrentForEach<Element: Sendable>(
    _ elements: some Sequence<Element>, limit: Int, _ body: @escaping @Sendable (Element) async -> Void
) async {
    await withTaskGroup(of: Void.self) { group in
        var iterator = elements.makeIterator()
        func addNext() -> Bool {
            guard let element = iterator.next() else { return false }
            group.addTask { await body(element) }
            return true
        }
        for _ in 0..<max(1, limit) where !addNext() { break }
        while await group.next() != nil { _ = addNext() }
    }
}
