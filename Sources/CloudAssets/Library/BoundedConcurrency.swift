/// Runs `body` on every element, at most `limit` at a time (a new one starts as each ends), and returns the
/// results in the order they finished. The first error thrown cancels the rest and is rethrown.
///
/// The one shape of the library's request fan-outs (journal entries, sidecars, manifests, HEADs): a few
/// connections kept busy, never one task per object.
func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: some Sequence<Element>, limit: Int, _ body: @escaping @Sendable (Element) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: Result.self) { group in
        var results: [Result] = []
        var iterator = elements.makeIterator()
        func addNext() -> Bool {
            guard let element = iterator.next() else { return false }
            group.addTask { try await body(element) }
            return true
        }
        for _ in 0..<max(1, limit) where !addNext() { break }
        while let result = try await group.next() {
            results.append(result)
            _ = addNext()
        }
        return results
    }
}
