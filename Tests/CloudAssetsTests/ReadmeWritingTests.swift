import FakeS3
import Foundation
import Images
import TestSupport
import Testing

@testable import CloudAssets

// The README's Writing and Editing examples, compiled and run against the fake server. Keep them in step: the
// lines between the markers, less their indentation, are the README's.

/// "Writing": with what it names (`library`, `photoURL`, `someAsset`, `oldAsset`) as parameters.
private func readmeWritingExample(library: AssetLibrary, photoURL: URL, someAsset: Asset, oldAsset: Asset)
    async throws -> (ids: [String], status: UploadStatus)
{
    // --- README writing: begin ---
    let ids = try await library.performChanges { changes in
        changes.createAsset(fromFileAt: photoURL)  // copied; AssetCreationOptions(movesFile: true) takes it
        changes.setFavorite(true, for: [someAsset])
        changes.deleteAssets([oldAsset])  // to the trash
    }
    let status = await library.waitForUploads()  // or let them run in the background (try library.uploads)
    for failure in status.failures {  // each kept in the library; the next sync tries again
        print("not uploaded: \(failure.key): \(failure.reason)")
    }
    // --- README writing: end ---
    return (ids, status)
}

/// "Editing": an editor of format `com.me.filter` whose `render` paints the image one colour.
private func readmeEditingExample(library: AssetLibrary, asset: Asset, settings: Data) async throws {
    func render(_ input: URL, to output: URL) throws {
        let image = try ImageDecoder.decode(
            data: [UInt8](try Data(contentsOf: input)),
            request: DecodeRequest(targetWidth: 1, targetHeight: 1, resizeMode: .none)
        ).image
        try Data(try ImageEncoder.jpeg(RGBAImage(width: image.width, height: image.height, fill: (9, 99, 199, 255))))
            .write(to: output)
    }
    // --- README editing: begin ---
    let options = ContentEditingInputRequestOptions(canHandleAdjustmentData: {
        $0.formatIdentifier == "com.me.filter"
    })
    let input = try await library.requestContentEditingInput(for: asset, options: options)
    // input.adjustmentData != nil: resume from the original (input.fullSizeImageURL) with those settings;
    // nil: the asset's current rendering (or unedited original) — the new edit stacks on it.
    var output = ContentEditingOutput(contentEditingInput: input)
    output.adjustmentData = AdjustmentData(formatIdentifier: "com.me.filter", formatVersion: "1", data: settings)
    try render(input.fullSizeImageURL, to: output.renderedContentURL)  // a JPEG, upright
    try await library.performChanges { $0.setContentEditingOutput(output, for: asset) }
    try await library.performChanges { $0.revertAssetContentToOriginal(asset) }  // the original again, everywhere
    // --- README editing: end ---
}

/// The built-in editor's example.
private func readmeBasicEditExample(library: AssetLibrary, asset: Asset) async throws -> Asset {
    // --- README basic edit: begin ---
    // The built-in editor in one call: asks for the input, renders, commits (one change), and the edit goes up.
    let edited = try await library.applyBasicEdit(to: asset) { edit in
        try edit.setRotation(degrees: 90)
        edit.exposure = 0.5
    }
    // resume: true continues the basic edit from the original instead of stacking on the current rendering.
    // --- README basic edit: end ---
    return edited
}

@Suite("README: the Writing and Editing examples", .heavy)
struct ReadmeWritingTests {
    @Test("the README shows exactly the code these tests run", arguments: ["writing", "editing", "basic edit"])
    func theReadmeShowsThisCodeVerbatim(name: String) throws {
        try ReadmeSample.expectVerbatim(name)
    }

    @Test("the Writing example imports, favourites and trashes in one change, and its uploads go up")
    func writingExampleRuns() async throws {
        try await withHarness { harness in
            let library = try await harness.open(harness.quietConfiguration())
            let existing = try await harness.importAll(
                try harness.sourceFiles(2, prefix: "old", seed: 3), into: library)
            let assets = try library.fetchAssets(withLocalIdentifiers: existing)
            let photoURL = try harness.sourceFile("IMG_0001.JPG", try solidJPEG(width: 40, height: 30, (5, 6, 7)))
            let (ids, status) = try await readmeWritingExample(
                library: library, photoURL: photoURL, someAsset: assets[0], oldAsset: assets[1])
            #expect(ids.count == 1 && status.failed == 0 && status.isEmpty)
            #expect(try library.current(assets[0]).isFavorite)
            #expect(try library.current(assets[1]).isTrashed)
            #expect(try library.asset(withLocalIdentifier: ids[0])?.uploadState == .uploaded)
        }
    }

    @Test("the Editing examples edit and revert (a custom editor), and rotate (the built-in one)")
    func editingExamplesRun() async throws {
        try await withHarness { harness in
            let (library, asset, original) = try await harness.libraryWithPhoto("a")
            _ = try await library.data(for: asset, options: AssetLibrary.networkOptions())
            try await readmeEditingExample(library: library, asset: asset, settings: Data("blue".utf8))
            let reverted = try library.current(asset)
            #expect(!reverted.hasAdjustments)
            #expect(try await library.data(for: reverted, options: AssetLibrary.networkOptions()) == original)
            let edited = try await readmeBasicEditExample(library: library, asset: reverted)
            #expect(edited.hasAdjustments)
            // A landscape photo turned a quarter: drawn portrait.
            #expect(reverted.pixelWidth > reverted.pixelHeight && edited.pixelWidth < edited.pixelHeight)
        }
    }
}
