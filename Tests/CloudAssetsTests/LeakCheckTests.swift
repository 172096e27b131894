import CloudAssets
import Essentials
import TestSupport
import Testing

/// The suite's leak check (``HeavyTestTrait``) itself: a test that leaves a library open fails, naming what it left.
/// Not a heavy suite: it runs the trait's scope itself, as the test runner would around a heavy test.
@Suite struct LeakCheckTests {
    @Test("a test that leaves a library open fails the leak check, which names the library and its threads")
    func aLibraryLeftOpenFailsTheCheck() async throws {
        try await withHarness { harness in
            let test = try #require(Test.current)
            let left = LockedBox<AssetLibrary?>(nil)
            // The test body opens a library and returns without closing it; a short wait stands for the 60 s one
            // (nothing closes the library meanwhile, so the wait only bounds how long the check looks).
            try await withKnownIssue {
                try await HeavyTestTrait(closeLimit: .milliseconds(300)).provideScope(for: test, testCase: nil) {
                    let library = try await AssetLibrary(configuration: harness.configuration())
                    left.withLock { $0 = library }
                }
            } matching: { issue in
                let text = issue.comments.map(\.rawValue).joined(separator: " ")
                return text.contains("left open") && text.contains("library") && text.contains("HTTP engine thread")
                    && text.contains("catalog watcher")
            }
            // Closed and released, everything it held closes: the same check then finds nothing.
            left.withLock { $0 }?.close()
            left.withLock { $0 = nil }
            let stillOpen = await OpenResources.waitUntilClosed(ownedBy: "\(test.id)", limit: .seconds(60))
            #expect(stillOpen.isEmpty, "\(stillOpen)")
        }
    }
}
