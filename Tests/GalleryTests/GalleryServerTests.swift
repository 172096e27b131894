import CloudAssets
import Foundation
import Gallery
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Gallery server", .heavy)
struct GalleryServerTests {
    @Test("every request needs the token: 403 without it or with a wrong one")
    func tokenRequired() async throws {
        try await withGallery { harness in
            for target in ["/", "/gallery.js", "/api/info", "/api/events", "/api/assets?ids=1", "/api/thumbnails/1"] {
                let bare = try await RawHTTP.send(port: harness.port, "GET \(target)")
                #expect(bare.status == 403, "\(target) without a token")
                #expect(try await harness.get(target, token: String(repeating: "0", count: 64)).status == 403)
                #expect(try await harness.get(target, token: String(harness.token.dropLast())).status == 403)
            }
            let page = try await harness.get("/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(page.text.contains("content=\"\(harness.token)\""))
            #expect(page.headers["referrer-policy"] == "no-referrer")
            #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
            let script = try await RawHTTP.send(
                port: harness.port, "GET /gallery.js", headers: ["X-CloudAssets-Token": harness.token])
            #expect(script.status == 200 && script.text.contains("EventSource"))
            #expect(harness.gallery.token.count == 64)
            #expect(harness.gallery.url.absoluteString == "http://127.0.0.1:\(harness.port)/?token=\(harness.token)")
        }
    }

    @Test("a port in use, an address not this machine's and a name that does not resolve are typed errors")
    func cannotListenIsATypedError() async throws {
        try await withGallery(count: 1) { harness in
            let taken = try GalleryServer(library: harness.library, port: harness.port)
            await #expect(
                throws: GalleryServerError.cannotListen(host: "127.0.0.1", port: harness.port, errno: EADDRINUSE)
            ) {
                try await taken.start()
            }
            #expect(
                GalleryServerError.cannotListen(host: "127.0.0.1", port: harness.port, errno: EADDRINUSE).description
                    .contains("already in use"))
            // 192.0.2.0/24 is reserved for documentation: never an address of this machine.
            let foreign = try GalleryServer(library: harness.library, host: "192.0.2.7")
            await #expect(throws: GalleryServerError.cannotListen(host: "192.0.2.7", port: 0, errno: EADDRNOTAVAIL)) {
                try await foreign.start()
            }
            let unknown = try GalleryServer(library: harness.library, host: "no-such-host.invalid")
            await #expect(throws: GalleryServerError.unknownHost("no-such-host.invalid")) { try await unknown.start() }
            // The running server still answers.
            #expect(try await harness.get("/api/info").status == 200)
        }
    }

    @Test("a POST needs the token in its header: the query or a cookie alone changes nothing")
    func postNeedsHeader() async throws {
        try await withGallery { harness in
            let asset = try harness.asset(named: "img1.png")
            let path = "/api/assets/\(asset.localIdentifier)/favorite"
            let byQuery = try await RawHTTP.send(port: harness.port, "POST \(path)?token=\(harness.token)")
            #expect(byQuery.status == 403)
            let byCookie = try await RawHTTP.send(
                port: harness.port, "POST \(path)", headers: ["Cookie": "token=\(harness.token)"])
            #expect(byCookie.status == 403)
            #expect(try harness.library.asset(withLocalIdentifier: asset.localIdentifier)?.isFavorite == false)
            let byHeader = try await RawHTTP.send(
                port: harness.port, "POST \(path)", headers: ["X-CloudAssets-Token": harness.token])
            #expect(byHeader.status == 200, "\(byHeader.text)")
            #expect(try harness.library.asset(withLocalIdentifier: asset.localIdentifier)?.isFavorite == true)
            // Other methods are refused outright.
            let put = try await RawHTTP.send(
                port: harness.port, "PUT \(path)", headers: ["X-CloudAssets-Token": harness.token])
            #expect(put.status == 405)
        }
    }

    @Test("the Host header must name this server (no DNS rebinding)")
    func hostChecked() async throws {
        try await withGallery { harness in
            let target = "GET /api/info?token=\(harness.token)"
            for host in ["evil.example", "evil.example:\(harness.port)", "127.0.0.1.evil.example", "localhost.evil:80"]
            {
                let status = try await RawHTTP.send(port: harness.port, target, headers: ["Host": host]).status
                #expect(status == 403, "\(host)")
            }
            let hostless = try await RawHTTP.send(port: harness.port, target, headers: ["Host": nil]).status
            #expect(hostless == 403)
            for host in [
                "127.0.0.1:\(harness.port)", "localhost:\(harness.port)", "localhost", "[::1]:\(harness.port)",
            ] {
                let status = try await RawHTTP.send(port: harness.port, target, headers: ["Host": host]).status
                #expect(status == 200, "\(host)")
            }
        }
    }

    @Test("hostile paths never reach a file: traversal, encoded dots, absolute paths, links out of the library")
    func hostilePaths() async throws {
        try await withGallery { harness in
            let secret = harness.folder.appendingPathComponent("secret.txt")
            try Data("TOP-SECRET".utf8).write(to: secret)
            let withThumbnail = try harness.asset(named: "img0.png")
            #expect(withThumbnail.hasThumbnail)
            let id = withThumbnail.localIdentifier
            #expect(try await harness.get("/api/thumbnails/\(id)").status == 200)

            // A thumbnail replaced by a link to a file outside the library is not followed.
            let thumbnail = harness.storeURL.appendingPathComponent("thumbnails/\(id).jpg")
            try FileManager.default.removeItem(at: thumbnail)
            try FileManager.default.createSymbolicLink(at: thumbnail, withDestinationURL: secret)
            let linked = try await harness.get("/api/thumbnails/\(id)")
            #expect(linked.status == 404)
            #expect(!linked.text.contains("TOP-SECRET"))

            let hostile = [
                "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/api/thumbnails/..%2F..%2Fsecret.txt",
                "/api/thumbnails/%2e%2e", "/api/thumbnails/../../library.sqlite", "//etc/passwd",
                "/api/thumbnails/%2Fetc%2Fpasswd", "/api/thumbnails//etc/passwd", "/api/originals/..%2Flibrary.sqlite",
                "/library.sqlite", "/thumbnails/\(id).jpg", "/Resources/gallery.js", "/api/thumbnails/\(id)%00",
                "/api/thumbnails/-1", "/api/thumbnails/0\(id)", "/api/thumbnails/\(id).jpg", "/.%2e/secret.txt",
                "/gallery.js/..", "/api/thumbnails/%5C..%5Csecret.txt",
            ]
            for path in hostile {
                let answer = try await harness.get(path)
                #expect([403, 404].contains(answer.status), "\(path) answered \(answer.status)")
                #expect(!answer.text.contains("TOP-SECRET") && !answer.text.contains("root:"), "\(path)")
            }
            for target in ["http://evil.example/", "/etc/passwd", "*"] {
                let answer = try await RawHTTP.send(
                    port: harness.port, "GET \(target)", headers: ["X-CloudAssets-Token": harness.token])
                #expect([400, 403, 404].contains(answer.status), "\(target) answered \(answer.status)")
            }
            // An original that is not local is not served (it would have to be downloaded with `open`).
            #expect(try await harness.get("/api/originals/\(id)").status == 404)

            // The thumbnails folder itself replaced by a link to a folder outside holding `<id>.jpg`: not followed.
            let outside = harness.folder.appendingPathComponent("outside", isDirectory: true)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("TOP-SECRET".utf8).write(to: outside.appendingPathComponent("\(id).jpg"))
            let thumbnails = harness.storeURL.appendingPathComponent("thumbnails")
            try FileManager.default.moveItem(at: thumbnails, to: harness.folder.appendingPathComponent("moved"))
            try FileManager.default.createSymbolicLink(at: thumbnails, withDestinationURL: outside)
            let throughLink = try await harness.get("/api/thumbnails/\(id)")
            #expect(throughLink.status == 404)
            #expect(!throughLink.text.contains("TOP-SECRET"))
        }
    }

    @Test("the JSON endpoints describe the library")
    func jsonEndpoints() async throws {
        try await withGallery { harness in
            let infoText = try await harness.get("/api/info").text
            let info = try jsonObject(infoText)
            #expect(info["count"] as? Int == 6)
            #expect(info["network"] as? String == "allowed")
            let one = try harness.asset(named: "img0.png")
            let two = try harness.asset(named: "img1.png")
            let answer = try await harness.get("/api/assets?ids=\(one.localIdentifier),\(two.localIdentifier),999999,x")
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
            let assets = try #require(try jsonObject(answer.text)["assets"] as? [[String: Any]])
            #expect(assets.map { $0["id"] as? String } == [one.localIdentifier, two.localIdentifier])
            #expect(assets[0]["name"] as? String == "img0.png")
            #expect(assets[0]["badge"] as? String == "thumbnail")
            #expect(assets[1]["badge"] as? String == "cloud")
            #expect(assets[0]["thumbnail"] as? Bool == true)
            let thumbnail = try await harness.get("/api/thumbnails/\(one.localIdentifier)")
            #expect(thumbnail.status == 200 && thumbnail.text == "jpeg img0.png")
            #expect(try await harness.get("/api/thumbnails/\(two.localIdentifier)").status == 404)

            // Offline: opening a cloud-only original answers "in cloud" without touching the network.
            let offline = try await RawHTTP.send(
                port: harness.port, "POST /api/network", headers: ["X-CloudAssets-Token": harness.token],
                body: Data(#"{"policy":"offline"}"#.utf8))
            #expect(offline.status == 200)
            #expect(harness.library.networkPolicy == .offline)
            let open = try await RawHTTP.send(
                port: harness.port, "POST /api/assets/\(two.localIdentifier)/open",
                headers: ["X-CloudAssets-Token": harness.token])
            #expect(try jsonObject(open.text)["state"] as? String == "inCloud")
        }
    }

    @Test("the event stream sends the fetch, then change details of another library's sync")
    func eventsAfterSync() async throws {
        try await withGallery { harness in
            let events = try EventStreamReader(
                port: harness.port, path: "/api/events?token=\(harness.token)&sort=newest")
            let resetText = try await events.next("reset")
            let reset = try jsonObject(resetText)
            let ids = try #require(reset["ids"] as? [String])
            let byName = try (0..<6).map { try harness.asset(named: "img\($0).png").localIdentifier }
            #expect(ids == byName.reversed(), "newest first")

            // Another library on the same folder (as another process would) syncs: one new asset, newest of all,
            // one deleted, one re-dated to be the oldest.
            try GalleryHarness.put(harness.s3, "new.png", day: 10, thumbnail: false)
            try harness.s3.deleteObject(bucket: GalleryHarness.bucket, key: "originals/img4.png")
            try GalleryHarness.put(harness.s3, "img3.png", day: -5, thumbnail: false)
            let other = try await AssetLibrary(
                configuration: GalleryHarness.configuration(store: harness.storeURL, endpoint: harness.s3.endpoint))
            defer { other.close() }
            try await other.sync()

            let changeText = try await events.next("change")
            let change = try jsonObject(changeText)
            #expect(change["count"] as? Int == 6)
            #expect(change["removed"] as? [Int] == [1], "img4 was at index 1")
            #expect(change["inserted"] as? [Int] == [0])
            let inserted = try #require(change["insertedAssets"] as? [[String: Any]])
            #expect(inserted.map { $0["name"] as? String } == ["new.png"])
            let changed = try #require(change["changedAssets"] as? [[String: Any]])
            #expect(changed.map { $0["name"] as? String } == ["img3.png"])
            #expect(change["changed"] as? [Int] == [5])
            let moves = try #require(change["moves"] as? [[Int]])
            #expect(moves.count == 1 && moves[0][1] == 5, "img3 moved to the end: \(moves)")
        }
    }

    @Test("actions act through the library: pin, unpin, evict, favourite, delete; unknown ones are 404")
    func actions() async throws {
        try await withGallery { harness in
            let asset = try harness.asset(named: "img2.png")
            let id = asset.localIdentifier
            func post(_ action: String, _ target: String? = nil) async throws -> Int {
                try await RawHTTP.send(
                    port: harness.port, "POST /api/assets/\(target ?? id)/\(action)",
                    headers: ["X-CloudAssets-Token": harness.token]
                ).status
            }
            func current() throws -> Asset { try #require(try harness.library.asset(withLocalIdentifier: id)) }
            #expect(try await post("pin") == 200)
            #expect(try current().isPinned)
            #expect(try await post("evict") == 409, "a pinned asset is not evicted")
            #expect(try await post("unpin") == 200)
            #expect(try !current().isPinned)
            _ = try await harness.library.data(
                for: asset,
                options: {
                    var options = AssetRequestOptions()
                    options.isNetworkAccessAllowed = true
                    return options
                }())
            #expect(try current().availability == .full)
            let original = try await harness.get("/api/originals/\(id)")
            #expect(original.status == 200 && original.text == "original img2.png 2")
            #expect(try await post("evict") == 200)
            #expect(try current().availability != .full)
            #expect(try await post("favorite") == 200)
            #expect(try current().isFavorite)
            #expect(try await post("unfavorite") == 200)
            #expect(try !current().isFavorite)
            #expect(try await post("delete") == 200)
            #expect(try current().isTrashed)
            #expect(try await post("explode") == 404)
            #expect(try await post("pin", "999999") == 404)
            #expect(try await post("pin", "..") == 404)
        }
    }

    @Test("an original is served whole or by Range: 206 with Content-Range, 416 outside it")
    func originalRanges() async throws {
        try await withGallery(count: 2) { harness in
            let asset = try harness.asset(named: "img1.png")
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            _ = try await harness.library.requestFile(for: asset, options: options)
            let original = Data("original img1.png 1".utf8)  // what the harness put: 19 bytes
            let target = "GET /api/originals/\(asset.localIdentifier)?token=\(harness.token)"
            func get(_ range: String?) async throws -> RawHTTP.Response {
                try await RawHTTP.send(port: harness.port, target, headers: ["Range": range])
            }

            let whole = try await get(nil)
            #expect(whole.status == 200 && whole.body == original)
            #expect(whole.headers["accept-ranges"] == "bytes")
            #expect(whole.headers["content-length"] == "19")
            for (range, expected, contentRange) in [
                ("bytes=2-5", original[2...5], "bytes 2-5/19"), ("bytes=15-", original[15...], "bytes 15-18/19"),
                ("bytes=-4", original[15...], "bytes 15-18/19"), ("bytes=10-1000", original[10...], "bytes 10-18/19"),
                ("bytes=0-0", original[0...0], "bytes 0-0/19"),
            ] {
                let part = try await get(range)
                #expect(part.status == 206, "\(range)")
                #expect(part.body == Data(expected), "\(range): \(part.text)")
                #expect(part.headers["content-range"] == contentRange, "\(range)")
                #expect(part.headers["content-length"] == String(expected.count), "\(range)")
            }
            for range in ["bytes=19-", "bytes=100-200", "bytes=-0"] {
                let outside = try await get(range)
                #expect(outside.status == 416, "\(range)")
                #expect(outside.headers["content-range"] == "bytes */19", "\(range)")
                #expect(outside.body.isEmpty)
            }
            // Several ranges, another unit or a header that does not parse: the whole original.
            for range in ["bytes=0-1,4-5", "items=0-3", "bytes=5-2", "bytes=x-"] {
                let answer = try await get(range)
                #expect(answer.status == 200 && answer.body == original, "\(range)")
            }
        }
    }

    @Test("an album that is deleted, unknown or a folder is a 404, never the whole library (the picker's too)")
    func unknownAlbumIsNotFound() async throws {
        try await withGallery { harness in
            let one = try harness.asset(named: "img1.png")
            var album: CollectionPlaceholder?
            var gone: CollectionPlaceholder?
            var folder: CollectionPlaceholder?
            try await harness.library.performChanges { requests in
                folder = requests.createFolder(title: "Trips")
                album = requests.createAlbum(title: "Rome", in: folder)
                requests.addAssets([one], to: album!)
                gone = requests.createAlbum(title: "Gone")
            }
            let deleted = try #require(try harness.library.collection(withLocalIdentifier: gone!.localIdentifier))
            try await harness.library.performChanges { requests in requests.deleteCollections([deleted]) }

            // The album that exists: its one asset.
            let events = try EventStreamReader(
                port: harness.port, path: "/api/events?token=\(harness.token)&album=\(album!.localIdentifier)")
            #expect(try jsonObject(try await events.next("reset"))["ids"] as? [String] == [one.localIdentifier])
            #expect(try await harness.get("/?album=\(album!.localIdentifier)").status == 200)

            for missing in [gone!.localIdentifier, folder!.localIdentifier, "no-such-album", "smart:nothing"] {
                for page in ["/", "/index.html", "/?pick=multiple"] {
                    let separator = page.contains("?") ? "&" : "?"
                    let answer = try await harness.get("\(page)\(separator)album=\(missing)")
                    #expect(answer.status == 404, "\(page) album=\(missing)")
                    #expect(answer.headers["content-type"]?.hasPrefix("text/html") == true)
                    #expect(answer.text.contains("No such album") && answer.text.contains(missing), "\(answer.text)")
                    #expect(!answer.text.contains("gallery.js"), "not the gallery page")
                }
                let stream = try await harness.get("/api/events?album=\(missing)&pick=multiple")
                #expect(stream.status == 404, "events album=\(missing)")
                let message = try #require(try jsonObject(stream.text)["error"] as? String)
                #expect(message.contains("no album \(missing)"), "\(message)")
            }
            // A title is escaped in the page, not run.
            let hostile = try await harness.get("/?album=%3Cscript%3E")
            #expect(
                hostile.status == 404 && !hostile.text.contains("<script>") && hostile.text.contains("&lt;script&gt;"))
        }
    }

    @Test("filters by state and media type, and sorts")
    func filters() async throws {
        try await withGallery { harness in
            func ids(_ query: String) async throws -> [String] {
                let events = try EventStreamReader(
                    port: harness.port, path: "/api/events?token=\(harness.token)&\(query)")
                let text = try await events.next("reset")
                return try #require(try jsonObject(text)["ids"] as? [String])
            }
            let names = try (0..<6).map { try harness.asset(named: "img\($0).png").localIdentifier }
            #expect(try await ids("sort=oldest") == names)
            #expect(try await ids("state=thumbnail") == [names[4], names[2], names[0]])
            #expect(try await ids("state=cloud&sort=oldest") == [names[1], names[3], names[5]])
            #expect(try await ids("state=cloud,thumbnail").count == 6)
            #expect(try await ids("state=full").isEmpty)
            #expect(try await ids("media=image").count == 6)
            #expect(try await ids("media=video").isEmpty)
        }
    }

    @Test("the picker hands the chosen identifiers to the app, and Cancel is told apart")
    func picker() async throws {
        try await withGallery { harness in
            let header = ["X-CloudAssets-Token": harness.token]
            let done = try await RawHTTP.send(
                port: harness.port, "POST /api/pick", headers: header,
                body: Data(#"{"identifiers":["3","1"]}"#.utf8))
            #expect(done.status == 200)
            let cancel = try await RawHTTP.send(port: harness.port, "POST /api/pick/cancel", headers: header)
            #expect(cancel.status == 200)
            #expect(harness.picks.all == [.picked(["3", "1"]), .cancelled])
            let bad = try await RawHTTP.send(
                port: harness.port, "POST /api/pick", headers: header, body: Data(#"{"ids":1}"#.utf8))
            #expect(bad.status == 400)
        }
    }

    @Test("the grid's width and height are the size drawn: a photo turned by its orientation is laid out turned")
    func assetSizesAreTheDrawnSize() async throws {
        try await withGallery(count: 1) { harness in
            try harness.s3.putObject(
                bucket: GalleryHarness.bucket, key: "originals/turned.jpg", data: Data("original turned".utf8),
                metadata: [
                    "creation-date": "2024-01-01T00:00:00Z", "pixel-width": "64", "pixel-height": "48",
                    "media-type": "image", "orientation": "6",
                ])
            try await harness.library.sync()
            let turned = try harness.asset(named: "turned.jpg")
            let plain = try harness.asset(named: "img0.png")
            let answer = try await harness.get("/api/assets?ids=\(turned.localIdentifier),\(plain.localIdentifier)")
            let assets = try #require(try jsonObject(answer.text)["assets"] as? [[String: Any]])
            let sizes = Dictionary(
                uniqueKeysWithValues: assets.map {
                    ($0["id"] as? String ?? "", [$0["width"] as? Int, $0["height"] as? Int])
                })
            #expect(sizes[turned.localIdentifier] == [48, 64])
            #expect(sizes[plain.localIdentifier] == [64, 48])
            #expect(turned.pixelWidth == 48 && turned.storedPixelWidth == 64)
        }
    }
}
