import CloudAssets
import Foundation
import Gallery
import TestSupport
import Testing

/// The app's own toolbar items: listed for the page, a tap calls the app back with exactly the selection's
/// assets, and what cannot be shown or called is refused.
@Suite("Gallery: the app's toolbar", .heavy)
struct GalleryToolbarTests {
    static let items = [
        GalleryToolbarItem(identifier: "share", title: "Share…"),
        GalleryToolbarItem(identifier: "print.two", title: "Print two", minimumSelection: 2),
        GalleryToolbarItem(identifier: "refresh", title: "Refresh", minimumSelection: 0),
    ]

    @Test("the page reads the items in the app's order; a tap calls back with the existing selection, in order")
    func aTapCallsTheAppBackWithTheSelection() async throws {
        try await withGallery(count: 4) { harness in
            let actions = LockedList<GalleryToolbarAction>()
            let gallery = try GalleryServer(
                library: harness.library, toolbar: Self.items, onToolbarAction: { actions.append($0) })
            try await gallery.start()
            TestEnd.run { await gallery.stop() }
            let listed = try await RawHTTP.send(port: gallery.port, "GET /api/toolbar?token=\(gallery.token)")
            #expect(listed.status == 200)
            let items = try #require(try jsonObject(listed.text)["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? String } == ["share", "print.two", "refresh"])
            #expect(items.map { $0["minimumSelection"] as? Int } == [1, 2, 0])
            #expect(items.first?["title"] as? String == "Share…")

            let header = ["X-CloudAssets-Token": gallery.token]
            func tap(_ item: String, _ body: String) async throws -> Int {
                try await RawHTTP.send(
                    port: gallery.port, "POST /api/toolbar/\(item)", headers: header, body: Data(body.utf8)
                ).status
            }
            let ids = try harness.library.fetchAssets().map(\.localIdentifier)
            // A deleted or unknown asset and a repeat are left out; the order is the page's.
            #expect(
                try await tap("share", #"{"identifiers":["\#(ids[2])","999999","\#(ids[0])","\#(ids[2])"]}"#) == 200)
            #expect(try await tap("refresh", #"{"identifiers":[]}"#) == 200)
            // Refused, nothing called: below the minimum, an unknown item, a body that is not a selection.
            #expect(try await tap("print.two", #"{"identifiers":["\#(ids[1])"]}"#) == 400)
            #expect(try await tap("share", #"{"identifiers":[]}"#) == 400)
            #expect(try await tap("nope", #"{"identifiers":["\#(ids[1])"]}"#) == 404)
            #expect(try await tap("share", #"{"identifiers":"1"}"#) == 400)
            #expect(actions.all.map { [$0.identifier] + $0.selection } == [["share", ids[2], ids[0]], ["refresh"]])
            // Without the token: refused.
            #expect(try await RawHTTP.send(port: gallery.port, "POST /api/toolbar/share").status == 403)
        }
    }

    @Test(
        "an item that cannot be shown is refused when the server is made",
        arguments: [
            GalleryToolbarItem(identifier: "", title: "Empty"), GalleryToolbarItem(identifier: "a b", title: "Space"),
            GalleryToolbarItem(identifier: "ok", title: ""), GalleryToolbarItem(identifier: "ok", title: "bell\u{7}"),
            GalleryToolbarItem(identifier: String(repeating: "x", count: 65), title: "Long"),
            GalleryToolbarItem(identifier: "ok", title: "Negative", minimumSelection: -1),
        ])
    func anItemThatCannotBeShownIsRefused(item: GalleryToolbarItem) async throws {
        try await withGallery(count: 1) { harness in
            #expect(throws: GalleryServerError.self) {
                _ = try GalleryServer(library: harness.library, toolbar: [item])
            }
            #expect(throws: GalleryServerError.self) {
                _ = try GalleryServer(library: harness.library, toolbar: [Self.items[0], Self.items[0]])
            }
        }
    }
}
