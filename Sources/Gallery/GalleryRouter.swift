import CloudAssets
import Essentials
import Foundation
import HTTPServerSupport
import NIOHTTP1

/// The HTTP request router: checks every request (host, token, path) and answers it from the library's public
/// API — the page's files, thumbnails, originals, asset actions, the network policy and the picker.
///
/// It owns the page's three files (the token written into the page), the token, the host check, the picker's
/// callback and the ``GalleryEventHub`` of open event streams (to which downloads and the network policy
/// broadcast); an `/api/events` request it hands to ``GalleryLiveFeed``. It has no thread or queue of its own:
/// ``respond(to:)`` runs in the task ``GalleryChannelHandler`` starts for each request (Swift concurrency's global
/// pool, off the connection's event loop), several at once, and its state is immutable or behind a lock.
package final class GalleryRouter: Sendable {
    let library: AssetLibrary
    let token: String
    let boundHost: String
    let boundPort = LockedBox(0)
    let onPick: (@Sendable (PickOutcome) -> Void)?
    let toolbar: [GalleryToolbarItem]
    let onToolbarAction: (@Sendable (GalleryToolbarAction) -> Void)?
    let files: [String: (contentType: String, body: Data)]
    /// Open event streams, which also carry the downloads' progress.
    let hub = GalleryEventHub()

    init(
        library: AssetLibrary, token: String, boundHost: String, onPick: (@Sendable (PickOutcome) -> Void)?,
        toolbar: [GalleryToolbarItem] = [], onToolbarAction: (@Sendable (GalleryToolbarAction) -> Void)? = nil
    ) throws {
        self.library = library
        self.token = token
        self.boundHost = boundHost.lowercased()
        self.onPick = onPick
        self.toolbar = toolbar
        self.onToolbarAction = onToolbarAction
        var files: [String: (String, Data)] = [:]
        for (name, type) in [
            ("index.html", "text/html; charset=utf-8"), ("gallery.js", "text/javascript; charset=utf-8"),
            ("gallery.css", "text/css; charset=utf-8"),
        ] {
            guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources") else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Resources/\(name)"])
            }
            var body = try LocalFile.read(url)
            if name == "index.html" {
                // The token goes into the page (for its own requests); it is hex, so it needs no escaping.
                body = Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "%TOKEN%", with: token).utf8)
            }
            files["/" + name] = (type, body)
        }
        files["/"] = files["/index.html"]
        self.files = files
    }

    /// Forgets every open event stream (the server closes their connections).
    func stop() { hub.closeAll() }

    // MARK: Checks

    /// Whether the `Host` header names this server: localhost, a loopback literal or the bound host (an IPv6
    /// literal in brackets), with or without a port of ASCII digits, in one header. Anything else (a DNS-rebound
    /// name, no header, two) is refused.
    func hostAllowed(_ headers: HTTPHeaders) -> Bool { Self.hostAllowed(headers, boundHost: boundHost) }

    /// ``hostAllowed(_:)`` for a server bound to `boundHost`. Read as bytes: `NAME` or `[NAME]`, then nothing or
    /// `:` and digits (a plain name ends at its first colon, so an unbracketed IPv6 literal names nothing).
    package static func hostAllowed(_ headers: HTTPHeaders, boundHost: String) -> Bool {
        let values = headers[canonicalForm: "host"]
        guard values.count == 1 else { return false }
        let host = Array(values[0].lowercased().utf8)
        let name: ArraySlice<UInt8>
        let port: ArraySlice<UInt8>
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return false }
            name = host[1..<close]
            port = host[(close + 1)...]
        } else if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
            name = host[..<colon]
            port = host[colon...]
        } else {
            name = host[...]
            port = []
        }
        let digits = port.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        guard port.isEmpty || (port.first == UInt8(ascii: ":") && digits) else { return false }
        return ["localhost", "127.0.0.1", "::1", boundHost.lowercased()].contains { name.elementsEqual($0.utf8) }
    }

    /// Compares in time independent of where the strings differ.
    package static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// The request's path, percent-decoded, and its query parameters; `nil` for a target that is not a plain
    /// absolute path (absolute URLs, `..` or `.` segments in any encoding, empty segments, backslashes, NUL).
    ///
    /// An escape of bytes that are not UTF-8 makes the path nil (a name or value of the query empty), on every
    /// platform. Checked as UTF-8 bytes, never as Characters: a combining mark after a `/` (`%CC%81`) makes one
    /// Character of the two, which a search for `/` does not find, and a `..` segment would hide behind it.
    package static func parseTarget(_ uri: String) -> (path: String, query: [String: String])? {
        let bytes = uri.utf8
        let question = bytes.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = String(Substring(bytes[..<(question ?? bytes.endIndex)]))
        guard rawPath.utf8.first == UInt8(ascii: "/"), let path = ASCII.percentDecoded(rawPath) else { return nil }
        let decoded = Array(path.utf8)
        guard !decoded.contains(UInt8(ascii: "\\")), !decoded.contains(0) else { return nil }
        if decoded != [UInt8(ascii: "/")] {
            let segments = decoded.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            guard segments.allSatisfy({ !$0.isEmpty && !$0.elementsEqual([0x2E]) && !$0.elementsEqual([0x2E, 0x2E]) })
            else { return nil }
        }
        var query: [String: String] = [:]
        if let question {
            func decode(_ text: Substring.UTF8View) -> String {
                ASCII.percentDecoded(Substring(text), plusAsSpace: true) ?? ""
            }
            for pair in bytes[bytes.index(after: question)...].split(separator: UInt8(ascii: "&")) {
                let kv = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                let name = decode(kv[0])
                let value = kv.count == 2 ? decode(kv[1]) : ""
                if query[name] == nil { query[name] = value }
            }
        }
        return (path, query)
    }

    /// The segments of a path `parseTarget(_:)` accepted, split at `/` bytes.
    static func segments(of path: String) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) }
    }

    // MARK: Routing

    func respond(to request: GalleryRequest) async -> GalleryResponse {
        guard hostAllowed(request.headers) else { return .error(.forbidden, "host not allowed") }
        let target = Self.parseTarget(request.uri)
        let headerToken = request.headers.first(name: "X-CloudAssets-Token")
        let presented: String?
        switch request.method {
        case .GET:
            // The query's token counts even when the path is refused, so that such a path answers 404, not 403.
            let query = String(Substring(request.uri.utf8.drop { $0 != UInt8(ascii: "?") }))
            presented = headerToken ?? (target ?? Self.parseTarget("/" + query))?.query["token"]
        case .POST: presented = headerToken  // a query or a cookie alone is not enough to change anything
        default: return .error(.methodNotAllowed, "method not allowed")
        }
        guard let presented, Self.constantTimeEqual(presented, token) else {
            return .error(.forbidden, "missing or wrong token")
        }
        guard let (path, query) = target else { return .error(.notFound, "not found") }
        do {
            return try await route(
                method: request.method, path: path, query: query, body: request.body,
                range: request.headers.first(name: "Range"))
        } catch let error as CloudAssetsError {
            return .error(Self.status(of: error), "\(error)")
        } catch {
            return .error(.internalServerError, "\(error)")
        }
    }

    static func status(of error: CloudAssetsError) -> HTTPResponseStatus {
        switch error.code {
        case .noSuchAsset, .assetDeleted: .notFound
        case .assetPinned: .conflict
        case .networkNotAllowed: .conflict
        case .libraryClosed: .serviceUnavailable
        default: .internalServerError
        }
    }

    private func route(method: HTTPMethod, path: String, query: [String: String], body: Data, range: String?)
        async throws -> GalleryResponse
    {
        let segments = Self.segments(of: path)
        switch (method, segments.first) {
        case (.GET, _):
            if let file = files[path] {
                if file.contentType.hasPrefix("text/html"), let missing = try missingAlbum(query) {
                    return missingAlbumPage(missing, query: query)
                }
                return .full(status: .ok, contentType: file.contentType, body: file.body)
            }
            switch segments.count == 2 ? (segments[0], segments[1]) : nil {
            case ("api", "info")?: return info()
            case ("api", "collections")?: return try collections()
            case ("api", "toolbar")?: return toolbarItems()
            case ("api", "events")?:
                if let missing = try missingAlbum(query) {
                    return .error(.notFound, Self.missingAlbumMessage(missing))
                }
                return GalleryLiveFeed.eventStream(query: query, library: library, hub: hub)
            case ("api", "assets")?: return try assets(query["ids"] ?? "")
            default: break
            }
            if segments.count == 3, segments[0] == "api", segments[1] == "thumbnails" {
                // `version=original`: an edited asset's original (the gallery's before/after toggle).
                let version: AssetVersion = query["version"] == "original" ? .original : .current
                guard let data = try library.localThumbnailData(forLocalIdentifier: segments[2], version: version)
                else {
                    return .error(.notFound, "no local thumbnail")
                }
                return .full(status: .ok, contentType: "image/jpeg", body: data)
            }
            if segments.count == 3, segments[0] == "api", segments[1] == "originals" {
                return try await original(segments[2], range: range)
            }
            if segments.count == 3, segments[0] == "api", segments[1] == "play" {
                return try await playback(segments[2])
            }
            return .error(.notFound, "not found")
        case (.POST, "api"):
            if segments.count == 4, segments[1] == "assets" { return try await action(segments[3], id: segments[2]) }
            if segments == ["api", "network"] { return network(body) }
            if segments == ["api", "pick"] { return pick(body) }
            if segments == ["api", "pick", "cancel"] { return cancelPick() }
            if segments.count == 3, segments[1] == "toolbar" { return try toolbarAction(segments[2], body) }
            return .error(.notFound, "not found")
        default:
            return .error(.notFound, "not found")
        }
    }

    // MARK: Albums

    /// The `album` a page or event stream asks for when this library has no album or smart album by that
    /// identifier (deleted, unknown, or a folder): never shown as the whole library. Nil when no album is asked
    /// for or it exists.
    func missingAlbum(_ query: [String: String]) throws -> String? {
        guard let album = query["album"], !album.isEmpty else { return nil }
        return try library.collection(withLocalIdentifier: album) == nil ? album : nil
    }

    static func missingAlbumMessage(_ album: String) -> String {
        "no album \(album): it was deleted, is a folder, or this library does not have it"
    }

    /// The page answered for a missing album: 404, the reason, and a link to the whole library (the picker's
    /// mode kept).
    private func missingAlbumPage(_ album: String, query: [String: String]) -> GalleryResponse {
        var link = "/?token=\(token)"
        if let pick = query["pick"], pick == "single" || pick == "multiple" { link += "&pick=\(pick)" }
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>No such album</title></head>
            <body><h1>No such album</h1><p id="error">\(Self.htmlEscaped(Self.missingAlbumMessage(album))).</p>
            <p><a href="\(link)">Show the whole library</a></p></body></html>

            """
        return .full(status: .notFound, contentType: "text/html; charset=utf-8", body: Data(page.utf8))
    }

    /// `text` with HTML's special characters as entities.
    static func htmlEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    private func info() -> GalleryResponse {
        // try?: an informational count: an unreadable catalog shows 0
        let count = (try? library.fetchAssets().count) ?? 0
        return .json(
            .ok,
            "{\"count\":\(count),\"network\":\"\(library.networkPolicy.galleryName)\",\"picker\":\(onPick != nil)}")
    }

    /// The sidebar: folders, albums and smart albums with their counts. `{"folders":[{"id","title","folder",
    /// "count"}],"albums":[{"id","title","folder","count"}],"smart":[{"id","title","count"}]}`, each by title.
    private func collections() throws -> GalleryResponse {
        func text(_ value: String?) -> String { value.map { JSONText.quoted($0) } ?? "null" }
        var folders: [CollectionList] = []
        var pending: [CollectionList?] = [nil]
        var seen = Set<String>()
        while let parent = pending.popLast() {
            for folder in try library.fetchFolders(in: parent) where seen.insert(folder.localIdentifier).inserted {
                folders.append(folder)
                pending.append(folder)
            }
        }
        let folderJSON = folders.map {
            "{\"id\":\(text($0.localIdentifier)),\"title\":\(text($0.title)),\"folder\":\(text($0.folderIdentifier)),"
                + "\"count\":\($0.count)}"
        }
        let albumJSON = try library.fetchAllAlbums().map {
            "{\"id\":\(text($0.localIdentifier)),\"title\":\(text($0.title)),\"folder\":\(text($0.folderIdentifier)),"
                + "\"count\":\($0.estimatedAssetCount)}"
        }
        let smartJSON = try library.fetchSmartAlbums().map {
            "{\"id\":\(text($0.localIdentifier)),\"title\":\(text($0.title)),\"count\":\($0.estimatedAssetCount)}"
        }
        return .json(
            .ok,
            "{\"folders\":[" + folderJSON.joined(separator: ",") + "],\"albums\":[" + albumJSON.joined(separator: ",")
                + "],\"smart\":[" + smartJSON.joined(separator: ",") + "]}")
    }

    /// Up to 1,000 assets by local identifier (unknown ones are left out).
    private func assets(_ list: String) throws -> GalleryResponse {
        let ids = list.split(separator: ",").prefix(1000).map(String.init)
        let result = try library.fetchAssets(withLocalIdentifiers: ids)
        return .json(.ok, "{\"assets\":[" + result.map(\.galleryJSON).joined(separator: ",") + "]}")
    }

    /// The local original (as it shows: an edit's rendering), never downloaded here (the page downloads with
    /// `open` first), streamed from its file in pieces, whole (200) or the one byte range a `Range` header asks
    /// for (206; 416 when it lies outside the file; several ranges or a header that does not parse: the whole).
    private func original(_ id: String, range: String?) async throws -> GalleryResponse {
        guard let asset = try library.asset(withLocalIdentifier: id), asset.availability == .full else {
            return .error(.notFound, "in cloud")
        }
        // Opened at once: an eviction during the answer removes the name, not the bytes being sent.
        let file = try OpenFile(path: try await library.requestFile(for: asset).path)
        let ext = asset.key.split(separator: ".").last.map { $0.lowercased() } ?? ""
        let types = [
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
            "heic": "image/heic", "mp4": "video/mp4", "mov": "video/quicktime",
        ]
        let type = types[ext] ?? "application/octet-stream"
        let whole = FileAnswer(status: .ok, contentType: type, file: file, range: 0..<file.size, totalSize: file.size)
        switch HTTPByteRange(header: range, size: file.size) {
        case .whole:
            return .file(whole)
        case .unsatisfiable:
            return .file(
                FileAnswer(
                    status: .rangeNotSatisfiable, contentType: type, file: nil, range: 0..<0, totalSize: file.size))
        case .part(let part):
            var answer = whole
            answer.status = .partialContent
            answer.range = part
            return .file(answer)
        }
    }

    private func action(_ name: String, id: String) async throws -> GalleryResponse {
        guard let asset = try library.asset(withLocalIdentifier: id) else {
            return .error(.notFound, "no such asset")
        }
        switch name {
        case "open": return open(asset)
        case "pin": try library.pin([asset])
        case "unpin": try library.unpin([asset])
        case "evict": try library.evict([asset])
        case "favorite": _ = try await library.performChanges { $0.setFavorite(true, for: [asset]) }
        case "unfavorite": _ = try await library.performChanges { $0.setFavorite(false, for: [asset]) }
        case "delete": _ = try await library.performChanges { $0.deleteAssets([asset]) }
        default: return .error(.notFound, "no such action")
        }
        return .json(.ok, "{\"ok\":true}")
    }

    /// Starts downloading the original (under the library's network policy). Its progress and end go to every
    /// event stream as `download` events; the answer says whether it started, was local already, or is in the
    /// cloud with the network not allowed.
    private func open(_ asset: Asset) -> GalleryResponse {
        if asset.availability == .full { return .json(.ok, "{\"state\":\"full\"}") }
        if library.networkPolicy == .offline { return .json(.ok, "{\"state\":\"inCloud\"}") }
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        options.deliveryMode = .highQualityFormat
        let hub = self.hub
        let id = JSONText.quoted(asset.localIdentifier)
        options.progressHandler = { fraction, _, _, _ in
            hub.broadcast("event: download\ndata: {\"id\":\(id),\"fraction\":\(fraction)}\n\n")
        }
        library.requestData(for: asset, options: options) { data, info in
            guard info.isFinal else { return }
            let state =
                data != nil ? "full" : info.isInCloud ? "inCloud" : info.isCancelled ? "cancelled" : "failed"
            let error = info.error.map { ",\"error\":\(JSONText.quoted("\($0)"))" } ?? ""
            hub.broadcast("event: download\ndata: {\"id\":\(id),\"state\":\"\(state)\"\(error)}\n\n")
        }
        return .json(.accepted, "{\"state\":\"downloading\"}")
    }

    private func network(_ body: Data) -> GalleryResponse {
        // try?: a body that is not JSON is answered 400 below
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        guard let name = object?["policy"] as? String, let policy = NetworkPolicy(galleryName: name) else {
            return .error(.badRequest, "policy must be allowed, offline or user")
        }
        library.networkPolicy = policy
        hub.broadcast("event: network\ndata: {\"network\":\"\(policy.galleryName)\"}\n\n")
        return .json(.ok, "{\"network\":\"\(policy.galleryName)\"}")
    }

    private func pick(_ body: Data) -> GalleryResponse {
        guard let onPick else { return .error(.notFound, "not a picker") }
        // try?: a body that is not JSON is answered 400 below
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        guard let ids = object?["identifiers"] as? [String] else {
            return .error(.badRequest, "expected {\"identifiers\": [...]}")
        }
        onPick(.picked(ids))
        return .json(.ok, "{\"ok\":true}")
    }

    /// `{"url":…}`: the library's playback URL of a video (loopback, by range, fetching what is missing from the
    /// bucket under the library's network policy): what the page's `<video>` plays, seekable while cloud-only.
    private func playback(_ id: String) async throws -> GalleryResponse {
        guard let asset = try library.asset(withLocalIdentifier: id) else { return .error(.notFound, "no such asset") }
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        let url = try await library.requestPlaybackURL(for: asset, options: options)
        return .json(.ok, "{\"url\":\(JSONText.quoted(url.absoluteString))}")
    }

    /// The app's toolbar: `{"items":[{"id","title","minimumSelection"}]}`, in the app's order.
    private func toolbarItems() -> GalleryResponse {
        let items = toolbar.map {
            "{\"id\":\(JSONText.quoted($0.identifier)),\"title\":\(JSONText.quoted($0.title)),"
                + "\"minimumSelection\":\($0.minimumSelection)}"
        }
        return .json(.ok, "{\"items\":[" + items.joined(separator: ",") + "]}")
    }

    /// The most identifiers one tap may carry.
    static let maximumSelection = 10_000

    /// A tap of toolbar item `identifier` with `{"identifiers":[…]}`: the app is called back with the selection's
    /// assets that exist (in the page's order). An unknown item is 404; a selection that is not a list of at most
    /// ``maximumSelection`` strings, or smaller than the item's minimum, is 400 and calls nothing.
    private func toolbarAction(_ identifier: String, _ body: Data) throws -> GalleryResponse {
        guard let item = toolbar.first(where: { $0.identifier == identifier }), let onToolbarAction else {
            return .error(.notFound, "no toolbar item \(identifier)")
        }
        // try?: a body that is not JSON is answered 400 below
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        guard let ids = object?["identifiers"] as? [String], ids.count <= Self.maximumSelection,
            ids.allSatisfy({ $0.utf8.count <= 64 })
        else {
            return .error(.badRequest, "expected {\"identifiers\": [...]} of at most \(Self.maximumSelection)")
        }
        var seen = Set<String>()
        let unique = ids.filter { seen.insert($0).inserted }
        let existing = Set(try library.fetchAssets(withLocalIdentifiers: unique).map(\.localIdentifier))
        let selection = unique.filter(existing.contains)
        guard selection.count >= item.minimumSelection else {
            return .error(.badRequest, "\(identifier) needs at least \(item.minimumSelection) selected assets")
        }
        onToolbarAction(GalleryToolbarAction(identifier: identifier, selection: selection))
        return .json(.ok, "{\"ok\":true,\"count\":\(selection.count)}")
    }

    private func cancelPick() -> GalleryResponse {
        guard let onPick else { return .error(.notFound, "not a picker") }
        onPick(.cancelled)
        return .json(.ok, "{\"ok\":true}")
    }
}
