import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// `waitForUploads()` reports what did not go up, so an app need not inspect `uploads` itself.
@Suite("Library: waiting for uploads reports failures", .heavy)
struct UploadReportTests {
    @Test("imports into a missing bucket: waitForUploads returns each failure with its key and reason")
    func waitForUploadsReportsFailures() async throws {
        try await withHarness { harness in
            var configuration = harness.quietConfiguration()
            configuration.bucket = "no-such-bucket"
            let library = try await harness.open(configuration)
            let ids = try await harness.importAll(try harness.sourceFiles(2, prefix: "fail", seed: 70), into: library)
            let status = await library.waitForUploads()
            #expect(status.failed == 2)
            #expect(Set(status.failures.map(\.localIdentifier)) == Set(ids))
            let keys = try library.fetchAssets(withLocalIdentifiers: ids).map(\.key)
            #expect(Set(status.failures.map(\.key)) == Set(keys))
            #expect(status.failures.allSatisfy { $0.reason.lowercased().contains("bucket") }, "\(status.failures)")
            // The originals stay: nothing was lost.
            #expect(try library.fetchAssets(withLocalIdentifiers: ids).allSatisfy { $0.availability == .full })
        }
    }

    @Test("uploads that all went up: nothing failed")
    func waitForUploadsReportsNothingWhenAllWentUp() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            _ = try await harness.importAll(try harness.sourceFiles(2, prefix: "ok", seed: 80), into: library)
            let status = await library.waitForUploads()
            #expect(status.failed == 0 && status.failures.isEmpty && status.isEmpty)
        }
    }

    @Test("two libraries on one folder in one process share it, as init documents")
    func twoOpensInOneProcessShareTheFolder() async throws {
        try await withHarness { harness in
            let first = try await harness.open(harness.quietConfiguration())
            let second = try await harness.open(harness.quietConfiguration())
            var reader = ChangeReader(observing: second)
            let ids = try await harness.importAll(try harness.sourceFiles(1, prefix: "shared", seed: 90), into: first)
            _ = try await reader.next { !$0.insertedIdentifiers.isEmpty }
            #expect(try second.asset(withLocalIdentifier: ids[0]) != nil)
        }
    }
}
