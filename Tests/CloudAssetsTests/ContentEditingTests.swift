import CloudAssets
import FakeS3
import Foundation
import Hashing
import Images
import TestSupport
import Testing

/// A JPEG of one colour (what a test editor renders).
func solidJPEG(width: Int, height: Int, _ color: (UInt8, UInt8, UInt8)) throws -> Data {
    Data(try ImageEncoder.jpeg(RGBAImage(width: width, height: height, fill: (color.0, color.1, color.2, 255))))
}

func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

extension LibraryHarness {
    /// An editor of format `format`: asks for an input (resuming only its own format), renders one colour at the
    /// input's size, and commits it. Returns the input it started from.
    @discardableResult
    func edit(
        _ asset: Asset, in library: AssetLibrary, format: String, color: (UInt8, UInt8, UInt8),
        settings: String = "v1"
    ) async throws -> ContentEditingInput {
        let options = ContentEditingInputRequestOptions(canHandleAdjustmentData: { $0.formatIdentifier == format })
        let input = try await library.requestContentEditingInput(for: asset, options: options)
        var output = ContentEditingOutput(contentEditingInput: input)
        output.adjustmentData = AdjustmentData(formatIdentifier: format, formatVersion: "1", data: Data(settings.utf8))
        try solidJPEG(width: 40, height: 30, color).write(to: output.renderedContentURL)
        try await library.performChanges { $0.setContentEditingOutput(output, for: asset) }
        return input
    }

    /// A library with one uploaded photo (a real JPEG, 64 × 48 grey), synced.
    func libraryWithPhoto(_ name: String, path: String = "edit/photo.jpg") async throws -> (AssetLibrary, Asset, Data) {
        let original = try solidJPEG(width: 64, height: 48, (128, 128, 128))
        if (try? server.objectData(bucket: Self.bucket, key: "originals/" + path)) ?? nil == nil {
            try put(path, data: original)
        }
        let library = try await journalLibrary(name)
        try await library.sync(fetchThumbnails: false)
        let asset = try #require(try library.asset(forKey: "originals/" + path))
        return (library, asset, try #require(try server.objectData(bucket: Self.bucket, key: "originals/" + path)))
    }

    func editObjects() -> [String] { server.keysOrEmpty(prefix: "edits/") }
}

@Suite("Library: non-destructive content edits", .heavy)
struct ContentEditingTests {
    static func current(_ library: AssetLibrary, _ asset: Asset) throws -> Asset {
        try #require(try library.asset(withLocalIdentifier: asset.localIdentifier))
    }

    static func network(_ version: AssetVersion = .current) -> AssetRequestOptions {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        options.version = version
        return options
    }

    @Test("an editor that understands the format resumes from the original; one that does not stacks on the rendering")
    func resumeFromOriginalOrStackOnRendering() async throws {
        try await withHarness { harness in
            let (library, asset, original) = try await harness.libraryWithPhoto("a")
            let fresh = try await harness.edit(asset, in: library, format: "com.test.a", color: (255, 0, 0))
            #expect(fresh.adjustmentData == nil)
            #expect(try Data(contentsOf: fresh.fullSizeImageURL) == original)
            let edited = try Self.current(library, asset)
            #expect(edited.hasAdjustments && edited.availability == .full)
            let rendered = try await library.data(for: edited)
            #expect(rendered != original)

            // Editor A understands its own adjustments: it gets the original plus them.
            let resume = try await library.requestContentEditingInput(
                for: edited,
                options: ContentEditingInputRequestOptions(canHandleAdjustmentData: {
                    $0.formatIdentifier == "com.test.a"
                }))
            #expect(try Data(contentsOf: resume.fullSizeImageURL) == original)
            #expect(resume.adjustmentData?.formatIdentifier == "com.test.a")
            #expect(resume.adjustmentData?.data == Data("v1".utf8))
            #expect(!resume.displaySizeImage.isEmpty)

            // Editor B does not: it gets the rendering, without adjustments, and its edit stacks on it.
            let stacked = try await library.requestContentEditingInput(
                for: edited,
                options: ContentEditingInputRequestOptions(canHandleAdjustmentData: {
                    $0.formatIdentifier == "com.test.b"
                }))
            #expect(stacked.adjustmentData == nil)
            #expect(try Data(contentsOf: stacked.fullSizeImageURL) == rendered)
            #expect(stacked.fullSizeImageOrientation == 1)
            try await harness.edit(edited, in: library, format: "com.test.b", color: (0, 0, 255))
            let revisions = try library.contentRevisions(of: edited)
            #expect(revisions.count == 2 && revisions.last?.isCurrent == true)
            #expect(revisions.map { $0.adjustmentData?.formatIdentifier } == ["com.test.a", "com.test.b"])
            // The original is untouched, here and in the bucket.
            #expect(try await library.data(for: edited, options: Self.network(.original)) == original)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == original)
        }
    }

    @Test("an edit is one change: the asset's index is reported changed and it has adjustments")
    func editIsAnnouncedAsAChange() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await harness.libraryWithPhoto("a")
            _ = try await library.data(for: asset, options: Self.network(.original))  // the editor's input is local
            let before = try library.fetchAssets()
            var changes = ChangeReader(observing: library)
            try await harness.edit(asset, in: library, format: "com.test.a", color: (0, 255, 0))
            let change = try await changes.next()
            let details = try #require(change.details(for: before))
            #expect(details.changedIndexes == IndexSet(integer: 0))
            #expect(details.fetchResultAfterChanges[0].hasAdjustments)
            #expect(change.contentChangedIdentifiers == [asset.localIdentifier])
            #expect(change.details(for: asset)?.assetContentChanged == true)
        }
    }

    @Test("a revert made while the edit it supersedes is still going up deletes that edit's objects too")
    func revertDuringTheEditsUploadLeavesNothing() async throws {
        try await withHarness { harness in
            let (library, asset, original) = try await harness.libraryWithPhoto("a")
            try await harness.edit(asset, in: library, format: "com.test.a", color: (0, 0, 255))
            // The edit's rendering is stored at once, but its answer comes late: its upload is in flight while
            // the revert commits and a second round of sharing starts.
            harness.server.faults.add(.latency(milliseconds: 400), keyPattern: "edits/*", method: "PUT", times: 1)
            let first = Task { await library.waitForUploads() }
            let started = await waitUntilTrue { harness.editObjects().contains { $0.hasSuffix(".jpg") } }
            #expect(started)
            try await library.performChanges { $0.revertAssetContentToOriginal(try! Self.current(library, asset)) }
            async let second = library.waitForUploads()
            _ = await (first.value, second)
            await library.waitForUploads()
            let left = harness.editObjects()
            #expect(left.count == 1 && left.allSatisfy { $0.hasSuffix(".json") }, "only the revert's marker: \(left)")
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == original)
        }
    }

    @Test("revert restores the original's bytes exactly and deletes the edit's objects from the bucket")
    func revertRestoresTheOriginal() async throws {
        try await withHarness { harness in
            let (library, asset, original) = try await harness.libraryWithPhoto("a")
            try await harness.edit(asset, in: library, format: "com.test.a", color: (255, 0, 0))
            await library.waitForUploads()
            let objects = harness.editObjects()
            #expect(objects.filter { $0.hasSuffix(".json") }.count == 1)
            #expect(objects.contains { $0.hasSuffix(".thumb.jpg") })
            #expect(objects.count == 3)

            var changes = ChangeReader(observing: library)
            try await library.performChanges { $0.revertAssetContentToOriginal(try! Self.current(library, asset)) }
            _ = try await changes.next()
            let reverted = try Self.current(library, asset)
            #expect(!reverted.hasAdjustments)
            #expect(sha256(try await library.data(for: reverted, options: Self.network())) == sha256(original))
            await library.waitForUploads()
            // Only the revert's marker is left; the original is as it was.
            let left = harness.editObjects()
            #expect(left.count == 1 && left[0].hasSuffix(".json"))
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == original)
            #expect(try library.uploads.isEmpty)
        }
    }

    @Test("an edit made on one library reaches another at its next sync, as a change with the new thumbnail")
    func editReachesAnotherLibrary() async throws {
        try await withHarness { harness in
            let (writer, asset, original) = try await harness.libraryWithPhoto("a")
            let (reader, seen, _) = try await harness.libraryWithPhoto("b")
            let before = try reader.fetchAssets()
            try await harness.edit(asset, in: writer, format: "com.test.a", color: (255, 0, 0))
            await writer.waitForUploads()
            let rendered = try await writer.data(for: try Self.current(writer, asset))
            let thumbnail = try #require(try writer.localThumbnailData(forLocalIdentifier: asset.localIdentifier))

            var changes = ChangeReader(observing: reader)
            let summary = try await reader.sync(mode: .incremental, fetchThumbnails: false)
            #expect(summary.headRequests == 0)
            let change = try await changes.next()
            #expect(change.details(for: before)?.changedIndexes == IndexSet(integer: 0))
            let edited = try Self.current(reader, seen)
            #expect(edited.hasAdjustments && edited.availability == .thumbnail)
            #expect(try reader.localThumbnailData(forLocalIdentifier: seen.localIdentifier) == thumbnail)
            #expect(try reader.localThumbnailData(forLocalIdentifier: seen.localIdentifier, version: .original) == nil)
            #expect(try await reader.data(for: edited, options: Self.network()) == rendered)
            #expect(try Self.current(reader, seen).availability == .full)
            #expect(try await reader.data(for: edited, options: Self.network(.original)) == original)

            // A library that lists the bucket (its first sync) finds the edit too.
            let third = try await harness.journalLibrary("c")
            let full = try await third.sync(mode: .full, fetchThumbnails: false)
            #expect(full.editsRead == 1)
            #expect(try #require(try third.asset(forKey: asset.key)).hasAdjustments)
        }
    }

    @Test("edits made at once on two libraries keep both revisions: the later one shows, the other can be restored")
    func concurrentEditsKeepBothRevisions() async throws {
        try await withHarness { harness in
            let (first, asset, _) = try await harness.libraryWithPhoto("a")
            let (second, same, _) = try await harness.libraryWithPhoto("b")
            try await harness.edit(asset, in: first, format: "com.test.a", color: (255, 0, 0), settings: "first")
            try await harness.edit(same, in: second, format: "com.test.a", color: (0, 0, 255), settings: "second")
            await first.waitForUploads()
            await second.waitForUploads()
            try await first.sync(mode: .incremental, fetchThumbnails: false)
            try await second.sync(mode: .incremental, fetchThumbnails: false)
            for library in [first, second] {
                let revisions = try library.contentRevisions(of: asset)
                #expect(revisions.count == 2)
                #expect(
                    revisions.last?.isCurrent == true && revisions.last?.adjustmentData?.data == Data("second".utf8))
            }
            #expect(harness.editObjects().filter { $0.hasSuffix(".jpg") && !$0.hasSuffix(".thumb.jpg") }.count == 2)
            let secondData = try await first.data(for: try Self.current(first, asset), options: Self.network())

            // The first edit is not lost: restoring it makes it current everywhere.
            let older = try #require(try first.contentRevisions(of: asset).first)
            try await first.performChanges { $0.restoreContentRevision(older, for: try! Self.current(first, asset)) }
            await first.waitForUploads()
            try await second.sync(mode: .incremental, fetchThumbnails: false)
            let restored = try await second.data(for: try Self.current(second, same), options: Self.network())
            #expect(restored != secondData)
            #expect(try second.contentRevisions(of: same).last?.adjustmentData?.data == Data("first".utf8))
        }
    }

    @Test("purging an edited asset deletes its edits from the bucket and its files here; the others stay")
    func purgeDeletesTheEdits() async throws {
        try await withHarness { harness in
            try harness.put("edit/other.jpg", data: try solidJPEG(width: 64, height: 48, (10, 20, 30)))
            let (library, asset, _) = try await harness.libraryWithPhoto("a")
            try await harness.edit(asset, in: library, format: "com.test.a", color: (255, 0, 0))
            let kept = try #require(try library.asset(forKey: "originals/edit/other.jpg"))
            try await harness.edit(kept, in: library, format: "com.test.a", color: (0, 255, 0))
            await library.waitForUploads()
            #expect(harness.editObjects().count == 6)
            let edited = try Self.current(library, asset)
            let rendered = try await library.requestFile(for: edited)
            try await library.performChanges { $0.deleteAssets([edited]) }
            #expect(try await library.emptyTrash() == 1)
            let left = harness.editObjects()
            #expect(left.count == 3 && left.allSatisfy { $0.hasPrefix("edits/edit/other.jpg/") })
            #expect(!FileManager.default.fileExists(atPath: rendered.path))
            #expect(try library.contentRevisions(of: edited).isEmpty)
        }
    }

    @Test("resuming an edit in a version of the built-in format this editor cannot read is refused, not misapplied")
    func unknownFormatVersionIsRefused() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await harness.libraryWithPhoto("a")
            let input = try await library.requestContentEditingInput(for: asset)
            var output = ContentEditingOutput(contentEditingInput: input)
            output.adjustmentData = AdjustmentData(
                formatIdentifier: BasicEdit.formatIdentifier, formatVersion: "2", data: Data("{\"vignette\":1}".utf8))
            try solidJPEG(width: 40, height: 30, (9, 9, 9)).write(to: output.renderedContentURL)
            try await library.performChanges { $0.setContentEditingOutput(output, for: asset) }
            let edited = try Self.current(library, asset)
            let error = await expectError(.unsupportedAdjustments) {
                try await library.applyBasicEdit(to: edited, resume: true) { $0.exposure = 1 }
            }
            #expect(error?.description.contains("version 2") == true, "\(String(describing: error))")
            #expect(try library.contentRevisions(of: asset).count == 1)
            #expect(try Self.current(library, asset).editRevision == edited.editRevision)
            // Without resuming, the built-in editor stacks on the rendering instead.
            let stacked = try await library.applyBasicEdit(to: edited) { $0.exposure = 1 }
            #expect(stacked.editRevision != edited.editRevision)
        }
    }

    @Test("an output without adjustment data or without a rendered JPEG is refused and changes nothing")
    func incompleteOutputsAreRefused() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await harness.libraryWithPhoto("a")
            let input = try await library.requestContentEditingInput(for: asset)
            var output = ContentEditingOutput(contentEditingInput: input)
            try solidJPEG(width: 8, height: 8, (1, 2, 3)).write(to: output.renderedContentURL)
            await expectError(.cannotEdit) {
                try await library.performChanges { $0.setContentEditingOutput(output, for: asset) }
            }
            var missing = ContentEditingOutput(contentEditingInput: input)
            missing.adjustmentData = AdjustmentData(formatIdentifier: "x", formatVersion: "1", data: Data())
            await expectError(.cannotEdit) {
                try await library.performChanges { $0.setContentEditingOutput(missing, for: asset) }
            }
            output.adjustmentData = missing.adjustmentData
            try Data("not a jpeg".utf8).write(to: output.renderedContentURL)
            await expectError(.cannotEdit) {
                try await library.performChanges { $0.setContentEditingOutput(output, for: asset) }
            }
            #expect(try !Self.current(library, asset).hasAdjustments)
            #expect(try library.contentRevisions(of: asset).isEmpty)
        }
    }

    @Test("evicting an edited asset keeps its adjustment data and thumbnail; the rendered version comes back")
    func evictionKeepsTheEdit() async throws {
        try await withHarness { harness in
            let (library, asset, _) = try await harness.libraryWithPhoto("a")
            try await harness.edit(asset, in: library, format: "com.test.a", color: (255, 0, 0))
            await library.waitForUploads()
            let rendered = try await library.data(for: try Self.current(library, asset))
            try library.evict([try Self.current(library, asset)])
            let evicted = try Self.current(library, asset)
            #expect(evicted.hasAdjustments && evicted.availability == .thumbnail)
            #expect(try library.contentRevisions(of: asset).first?.adjustmentData != nil)
            await expectError(.networkNotAllowed) { _ = try await library.data(for: evicted) }
            #expect(try await library.data(for: evicted, options: Self.network()) == rendered)
        }
    }
}

/// A real `kill -9` while an edit goes up: the child (`ca-test-child edit-until-killed`) commits an edit and uploads it; the server holds the
/// manifest's PUT, so the child is killed after the rendered file went up and before the edit is complete.
@Suite("Library: kill -9 during an edit's upload", .heavy, .timeLimit(.minutes(1)))
struct ContentEditCrashTests {
    static let marker = "EDIT-CHILD-COMMITTED"

    @Test("after kill -9 during an edit's upload the reopened library finishes it and another library sees it")
    func killDuringEditUploadThenResume() async throws {
        let executable = try CLIBinary.locate("ca-test-child")
        try await withHarness { harness in
            let (setup, asset, original) = try await harness.libraryWithPhoto("a")
            let store = setup.configuration.storeURL
            setup.close()
            harness.server.faults.add(
                .latency(milliseconds: 120_000), keyPattern: "edits/*.json", method: "PUT", times: 1)
            let child = try ChildProcess(
                executable: executable,
                arguments: ["edit-until-killed", store.path, harness.server.endpoint.absoluteString, asset.key],
                environment: LibraryCrashTests.childCredentials)
            #expect(await child.firstLine(containing: Self.marker) != nil, "the child ended before it edited")
            // Wait (on the server's own state, not a timer) until the rendered file is up and the manifest held.
            while !harness.editObjects().contains(where: { $0.hasSuffix(".thumb.jpg") }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            child.kill()
            #expect(await child.exitStatus() == SIGKILL)
            // The server stored the manifest and holds its answer: the child never learnt the edit was complete.

            let reopened = try await harness.journalLibrary("a")
            #expect(try reopened.uploads.unsharedContentEdits == 1)
            let journalBefore = harness.journalKeys.count
            let edited = try ContentEditingTests.current(reopened, asset)
            #expect(edited.hasAdjustments && edited.availability == .full)
            await reopened.waitForUploads()
            #expect(try reopened.uploads.unsharedContentEdits == 0)
            #expect(harness.editObjects().filter { $0.hasSuffix(".json") }.count == 1)
            #expect(harness.journalKeys.count == journalBefore + 1)
            let rendered = try await reopened.data(for: edited)

            let (other, seen, _) = try await harness.libraryWithPhoto("b")
            try await other.sync(mode: .incremental, fetchThumbnails: false)
            #expect(try ContentEditingTests.current(other, seen).hasAdjustments)
            #expect(try await other.data(for: seen, options: ContentEditingTests.network()) == rendered)
            #expect(try harness.server.objectData(bucket: LibraryHarness.bucket, key: asset.key) == original)
        }
    }
}

/// Waits until `condition` holds, checking it every few milliseconds (for state only the server's storage shows,
/// where there is no event to await), and gives up after 10 s.
func waitUntilTrue(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
