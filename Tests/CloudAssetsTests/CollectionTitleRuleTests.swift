import Foundation
import Testing

@testable import CloudAssets

/// The title rule is one rule (issue #53, item 3): a change request refuses exactly the titles (once trimmed) that
/// another library would refuse in the collection document it reads, with a typed error naming the reason.
@Suite struct CollectionTitleRuleTests {
    static let id = "0a1b2c3d-0000-4000-8000-0000000000aa"

    /// Whether a library reading a document of this title keeps it.
    static func bucketAccepts(_ title: String) -> Bool {
        let document = CollectionDocument(
            id: id, kind: .album, title: title, parent: nil, stamp: CollectionDocument.Stamp(time: 1, device: "d"))
        if case .success = BucketInput.collectionDocument(
            document.encoded, id: id, layout: BucketLayout(), now: Date(timeIntervalSince1970: 10))
        {
            return true
        }
        return false
    }

    /// A title to try, shown in the test's name by its first characters and length.
    struct Title: Sendable, CustomTestStringConvertible {
        var text: String
        var testDescription: String { "\(String(text.prefix(12)).debugDescription) (\(text.utf8.count) bytes)" }
    }

    static let titles: [Title] = [
        "Paris", "Paris\tFR", "Two\nLines", "Nul\u{0}", "Bell\u{7}", "Esc\u{1B}[31m", "Del\u{7F}", "", " ", "\t",
        "Élan · 東京 🏔", String(repeating: "a", count: 4096), String(repeating: "a", count: 4097),
        String(repeating: "é", count: 2048), String(repeating: "é", count: 2049), String(repeating: "a", count: 10_000),
        "\u{2028}Line separator", "Non\u{A0}breaking",
    ].map(Title.init)

    @Test("a request accepts a title exactly when the bucket's documents may carry it", arguments: titles)
    func theRequestRuleIsTheBucketRule(title: Title) throws {
        let title = title.text
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        let accepted = Result { try AssetChangeRequests.collectionTitle(title) }
        switch accepted {
        case .success(let kept):
            #expect(kept == trimmed)
            #expect(Self.bucketAccepts(kept), "\(title.debugDescription) is accepted here but not by other libraries")
        case .failure(let error):
            #expect(!Self.bucketAccepts(trimmed), "\(title.debugDescription) is refused here but not by the bucket")
            let library = try #require(error as? AssetLibraryError)
            guard case .cannotChangeCollection(let identifier, let reason) = library else {
                Issue.record("\(library)")
                return
            }
            #expect(identifier.isEmpty, "a collection to be created is not named")
            #expect(reason.hasPrefix("the title "), "\(reason)")
        }
    }

    @Test("a rename to a title with a tab is refused in performChanges, naming the album; nothing changes")
    func aRenameWithATabIsRefused() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "title-rule-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = try await AssetLibrary(configuration: AssetLibrary.Configuration(storeURL: folder))
        defer { library.close() }
        var created: CollectionPlaceholder?
        try await library.performChanges { created = $0.createAlbum(title: "Paris") }
        let id = try #require(created?.localIdentifier)
        let album = try #require(try library.collection(withLocalIdentifier: id))
        do {
            try await library.performChanges { $0.renameCollection(album, to: "Paris\tFR") }
            Issue.record("a title with a tab was accepted")
        } catch {
            let typed = try #require(error as? CloudAssetsError)
            #expect(typed.code == .cannotChangeCollection && typed.localIdentifier == id)
            #expect(typed.description.contains("control characters"), "\(typed)")
        }
        #expect(try library.collection(withLocalIdentifier: id)?.title == "Paris")
    }
}
