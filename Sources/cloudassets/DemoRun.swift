import CloudAssets
import Essentials
import FakeS3
import Foundation
import Video

/// `cloudassets demo`: the whole engine against the bundled fake S3 server, in under a minute.
struct DemoRun {
    let storePath: String?
    let assetCount: Int
    let quiet: Bool

    static let bucket = "photos"
    static let accessKey = "demo"
    static let secretKey = "demo-secret-key"

    /// The camera photo another tool uploaded.
    static let cameraKey = "originals/camera/DSC_0001.jpg"

    func say(_ line: String) { if !quiet { Terminal.shared.out(line) } }

    /// Runs the steps in order against a fresh server and library, then removes all it made.
    func run() async throws {
        let started = Date()
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("cloudassets-demo-\(getpid())")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        // try?: best-effort removal of the demo's own temp folder
        defer { try? FileManager.default.removeItem(at: temp) }

        let server = try await startServer(root: temp.appendingPathComponent("server"))
        do {
            let configuration = try libraryConfiguration(endpoint: server.endpoint, folder: temp)
            let library = try await AssetLibrary(configuration: configuration)
            defer { library.close() }
            let observer = try observe(library, storeURL: configuration.storeURL)
            try await sync(library, observer: observer)
            let samples = try Samples(library)
            await requestOffline(library, samples: samples)
            try await download(library, samples: samples, observer: observer)
            try await readRange(library, samples: samples, observer: observer)
            await requestOpportunistically(library, samples: samples, observer: observer)
            try await evict(library, samples: samples, observer: observer)
            try await resync(library, server: server, observer: observer)
            let imported = try await importPhoto(library, folder: temp, observer: observer)
            let second = try await openSecondLibrary(configuration, folder: temp)
            defer { second.close() }
            let received = try await receive(imported, on: second)
            try await favoriteFromSecond(
                received, second: second, library: library, imported: imported, observer: observer)
            try await showImages(library, server: server, storeURL: temp.appendingPathComponent("owner-device"))
            await observer.drain()
            try await showVideo(library, server: server, observer: observer)
            await observer.drain()
            try await showEdits(library, second: second, observer: observer)
            await observer.drain()
            try await showAlbums(library, second: second, observer: observer)
            await observer.drain()
            try summarize(library, server: server, observer: observer, started: started)
            library.unregister(observer)
        } catch {
            // try?: the demo is failing already; its error is the one thrown
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    // MARK: Steps

    /// The bundled fake S3 server, in-process, on a free port, with a seeded sample library.
    private func startServer(root: URL) async throws -> FakeS3Server {
        let server = try FakeS3Server(
            configuration: FakeS3Configuration(
                accessKeyID: Self.accessKey, secretAccessKey: Self.secretKey, storage: .disk(root: root)))
        try await server.start()
        let seeded = try SampleLibrary.seed(
            into: server, bucket: Self.bucket, assets: assetCount, large: 2, largeSize: 48 << 20)
        // A photograph uploaded by another tool (no `x-amz-meta-*` of ours): a camera's JPEG, held upright (EXIF
        // orientation 6), with GPS and an embedded EXIF thumbnail, and no thumbnail object in the bucket.
        let camera = try SampleLibrary.cameraPhoto(
            created: Date(timeIntervalSince1970: 1_719_835_200), latitude: 48.8584, longitude: 2.2945)
        try server.putObject(bucket: Self.bucket, key: Self.cameraKey, data: camera)
        say("== fake S3 server at \(server.endpoint) (bucket \(Self.bucket))")
        say(
            "   seeded \(seeded.originals) originals, \(seeded.thumbnails) thumbnails, "
                + "\(Format.bytes(seeded.bytes)); large originals are served at 40 MiB/s so you can watch them")
        _ = server.faults.add(
            FaultRule(keyPattern: "originals/large/*", method: "GET", fault: .bandwidthLimit(bytesPerSecond: 40 << 20)))
        return server
    }

    /// The library's configuration, its store in a temporary folder (or --store), created here.
    private func libraryConfiguration(endpoint: URL, folder: URL) throws -> AssetLibrary.Configuration {
        let storeURL = storePath.map { URL(fileURLWithPath: $0) } ?? folder.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: storeURL, withIntermediateDirectories: true)
        var configuration = AssetLibrary.Configuration(storeURL: storeURL)
        configuration.endpoint = endpoint
        configuration.bucket = Self.bucket
        configuration.credentials = .static(accessKeyID: Self.accessKey, secretAccessKey: Self.secretKey)
        configuration.cacheSizeLimit = 512 << 20
        return configuration
    }

    /// An observer of all assets, newest first, registered before fetching.
    private func observe(_ library: AssetLibrary, storeURL: URL) throws -> DemoObserver {
        let observer = DemoObserver(library: library, quiet: quiet)
        library.register(observer)
        try observer.fetch()
        say("== library at \(storeURL.path); observing all assets, newest first")
        return observer
    }

    /// Sync: list the bucket, HEAD new objects for metadata, fetch thumbnails.
    private func sync(_ library: AssetLibrary, observer: DemoObserver) async throws {
        let sync = try await library.sync()
        await observer.drain()
        say(
            "== sync: \(sync.listed) objects listed in \(sync.pages) pages, \(sync.inserted) assets inserted, "
                + "\(sync.headRequests) HEADs, \(sync.thumbnailsFetched) thumbnails fetched")
        say("   states: " + (try stateCounts(library)))
    }

    /// A request that may not use the network answers at once: the original is in the cloud.
    private func requestOffline(_ library: AssetLibrary, samples: Samples) async {
        guard let target = samples.noThumbnail ?? samples.small.first else { return }
        let answer = await firstAnswer(library, target, network: false)
        say(
            "== offline request for \(target.key): data \(answer.0 == nil ? "none" : "\(answer.0!.count) bytes"), "
                + "isInCloud=\(answer.1.isInCloud)  (\"in cloud\": no connection was made)")
    }

    /// Download a selection with live progress bars; each completion is a change notification.
    private func download(_ library: AssetLibrary, samples: Samples, observer: DemoObserver) async throws {
        let large = samples.large
        let selection = Array(large.prefix(2)) + Array(samples.small.prefix(8))
        say("== downloading \(selection.count) originals (\(large.prefix(2).count) large)")
        let board = ProgressBoard(quiet: quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for asset in selection {
                group.addTask {
                    var options = AssetRequestOptions()
                    options.isNetworkAccessAllowed = true
                    options.deliveryMode = .highQualityFormat
                    options.progressHandler = { _, _, _, progress in
                        board.update(name: asset.key, progress: progress)
                    }
                    _ = try await library.requestFile(for: asset, options: options)
                    board.finish(name: asset.key)
                }
            }
            try await group.waitForAll()
        }
        board.end()
        await observer.drain()
        say("   states: " + (try stateCounts(library)))
    }

    /// A ranged read: only the bytes asked for are fetched; the asset becomes `partial`.
    private func readRange(_ library: AssetLibrary, samples: Samples, observer: DemoObserver) async throws {
        guard let target = samples.small.dropFirst(8).first else { return }
        let bytes = try await library.read(target, range: 0..<4096)
        await observer.drain()
        let now = try library.asset(withLocalIdentifier: target.localIdentifier)
        say(
            "== ranged read of \(target.key): \(bytes.count) bytes (starting \(bytes.prefix(4).map { String(format: "%02x", $0) }.joined())), "
                + "state now \(now.map { "\($0.availability)" } ?? "?")")
    }

    /// Opportunistic delivery: the thumbnail first (degraded), then the original.
    private func requestOpportunistically(_ library: AssetLibrary, samples: Samples, observer: DemoObserver) async {
        guard let target = samples.small.dropFirst(9).first(where: { $0.hasThumbnail }) else { return }
        let answers = await allAnswers(library, target)
        say(
            "== opportunistic request for \(target.key): "
                + answers.map { "\($0.0) bytes\($0.1 ? " (degraded)" : "")" }.joined(separator: ", then "))
        await observer.drain()
    }

    /// Eviction: the original goes, the asset falls back to `thumbnail`.
    private func evict(_ library: AssetLibrary, samples: Samples, observer: DemoObserver) async throws {
        guard let target = samples.small.first,
            let current = try library.asset(withLocalIdentifier: target.localIdentifier)
        else { return }
        try library.evict([current])
        await observer.drain()
        let after = try library.asset(withLocalIdentifier: target.localIdentifier)
        say("== evicted \(target.key): state now \(after.map { "\($0.availability)" } ?? "?")")
    }

    /// A re-sync of the unchanged bucket reads only the journal (one request) and notifies no one.
    private func resync(_ library: AssetLibrary, server: FakeS3Server, observer: DemoObserver) async throws {
        let before = observer.count
        let requestsBefore = server.requestLog.entries().count
        let resync = try await library.sync()
        await observer.drain()
        say(
            "== re-sync (\(resync.mode == .incremental ? "incremental, from the journal" : "full listing")): "
                + "\(server.requestLog.entries().count - requestsBefore) request(s), "
                + "\(resync.transactions) transactions, \(observer.count - before) notifications")
    }

    /// A video another tool wrote (no fields of ours; 32 MiB, its `moov` after the media data, as phones write):
    /// the sync reads its length, size, date and place with a few ranged GETs; its poster frame is decoded from a
    /// few more; its playback URL serves the middle with one more, and the bytes stay in the cache.
    private func showVideo(_ library: AssetLibrary, server: FakeS3Server, observer: DemoObserver) async throws {
        let key = "originals/clips/harbour.mov"
        let movie = SyntheticMovie.make(
            duration: 95, width: 640, height: 360, frameRate: 30, mediaBytes: 32 << 20, movieLast: true,
            creationDate: "2024-07-14T21:30:00+0200", location: "+43.2965+005.3698/", rotated: true, decodable: true)
        try server.putObject(bucket: Self.bucket, key: key, data: Data(movie), contentType: "video/quicktime")
        server.requestLog.clear()
        _ = try await library.sync(mode: .full, fetchThumbnails: false)
        await observer.drain()
        let reads = server.requestLog.entries().filter { $0.key == key }
        guard let video = try library.asset(forKey: key) else { return }
        say(
            "== video \(key) (\(movie.count >> 20) MiB, another tool's): \(Int(video.duration)) s, "
                + "\(video.pixelWidth)×\(video.pixelHeight) (rotated), \(video.videoCodec ?? "?") at "
                + "\(Int(video.frameRate)) fps, taken \(video.creationDate) — read with \(reads.count) requests, "
                + "\(reads.reduce(0) { $0 + $1.bytesSent } >> 10) KiB, state \(video.availability)")
        server.requestLog.clear()
        if case .posterFrame(let bytesRead) = try await library.makeThumbnail(for: video) {
            let gets = server.requestLog.entries().filter { $0.key == key }
            say(
                "   poster frame: its first frame, upright, decoded from \(bytesRead >> 10) KiB read by range "
                    + "(\(gets.count) GETs: \(gets.compactMap(\.rangeHeader).joined(separator: ", "))); state "
                    + "\(try library.asset(forKey: key).map { "\($0.availability)" } ?? "?")")
        }
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        let url = try await library.requestPlaybackURL(for: video, options: options)
        let middle = Int64(movie.count / 2)
        server.requestLog.clear()
        // What a player asks of the URL after a seek: the bytes at the middle (the server reads them this way).
        let data = try await library.read(video, range: middle..<middle + 65_536)
        let seek = server.requestLog.entries().filter { $0.key == key }
        say(
            "   playback URL \(url.absoluteString); a seek to the middle: \(data.count) bytes, "
                + "GETs \(seek.compactMap(\.rangeHeader).joined(separator: ", ")) (the middle only: the head and "
                + "movie box, where the location the library blanks is, stayed in the cache); "
                + "state now \(try library.asset(forKey: key).map { "\($0.availability)" } ?? "?")")
    }

    /// The write path: an import is local at once and uploads in the background.
    private func importPhoto(_ library: AssetLibrary, folder: URL, observer: DemoObserver) async throws -> Imported {
        let photo = folder.appendingPathComponent("new-photo.png")
        try SampleLibrary.samplePNG(width: 320, height: 240, seed: 7).write(to: photo)
        let created = try await library.performChanges { $0.createAsset(fromFileAt: photo) }
        await observer.drain()
        let imported = try library.asset(withLocalIdentifier: created[0])
        say(
            "== imported \(photo.lastPathComponent) as \(imported?.key ?? "?"): "
                + "\(imported.map { "\($0.availability), \($0.uploadState)" } ?? "?")")
        await library.waitForUploads()
        say("   uploaded: \(try library.asset(withLocalIdentifier: created[0]).map { "\($0.uploadState)" } ?? "?")")
        return Imported(identifier: created[0], asset: imported)
    }

    /// A second library on the same bucket, as another device would open it.
    private func openSecondLibrary(_ configuration: AssetLibrary.Configuration, folder: URL) async throws
        -> AssetLibrary
    {
        var secondConfiguration = configuration
        secondConfiguration.storeURL = folder.appendingPathComponent("second-device")
        return try await AssetLibrary(configuration: secondConfiguration)
    }

    /// The second library syncs and receives the import as an insertion.
    private func receive(_ imported: Imported, on second: AssetLibrary) async throws -> Asset? {
        let secondSync = try await second.sync(fetchThumbnails: false)
        let received = try imported.asset.flatMap { try second.asset(forKey: $0.key) }
        say(
            "== a second library synced (\(secondSync.checkpointAssets > 0 ? "from the checkpoint the first wrote" : "by listing")): "
                + "\(secondSync.inserted) assets inserted, the import among them as "
                + "\(received.map { "\($0.availability)" } ?? "missing")")
        return received
    }

    /// A favourite set on the second library comes back to the first as a change.
    private func favoriteFromSecond(
        _ received: Asset?, second: AssetLibrary, library: AssetLibrary, imported: Imported, observer: DemoObserver
    ) async throws {
        guard let received else { return }
        try await second.performChanges { $0.setFavorite(true, for: [received]) }
        await second.waitForUploads()
        try await library.sync(fetchThumbnails: false)
        await observer.drain()
        say(
            "   favourite set there, after a sync here: isFavorite="
                + "\(try library.asset(withLocalIdentifier: imported.identifier)?.isFavorite ?? false)")
    }

    /// Images: a sized request turned upright, a thumbnail from the EXIF thumbnail, location kept private.
    private func showImages(_ library: AssetLibrary, server: FakeS3Server, storeURL: URL) async throws {
        guard let photo = try library.asset(forKey: Self.cameraKey) else { return }
        // The sync read the photo's first 64 KiB (one ranged GET): its capture date, size, orientation and GPS
        // came from its EXIF, and its thumbnail from the EXIF thumbnail in those bytes.
        let gets = server.requestLog.entries().filter { $0.method == "GET" && $0.key == photo.key }
        let read = gets.first.map { "\($0.bytesSent) bytes" } ?? "its head"
        let thumbnail =
            photo.hasThumbnail ? "made from its EXIF thumbnail (state \(photo.availability))" : "none"
        say(
            "== \(photo.key), uploaded by another tool (\(Format.bytes(photo.size)), no metadata of ours): the sync "
                + "read \(read) with \(gets.count) ranged GET and found: taken \(ISODate.string(photo.creationDate)), "
                + "\(photo.storedPixelWidth)×\(photo.storedPixelHeight) stored, orientation \(photo.orientation) "
                + "(drawn \(photo.pixelWidth)×\(photo.pixelHeight)), thumbnail "
                + thumbnail)
        var options = ImageRequestOptions()
        options.isNetworkAccessAllowed = true
        options.deliveryMode = .highQualityFormat
        options.resizeMode = .exact
        let (image, info) = await withCheckedContinuation { continuation in
            library.requestImage(for: photo, targetSize: CGSize(width: 512, height: 512), options: options) {
                continuation.resume(returning: ($0, $1))
            }
        }
        if let image {
            say(
                "   requestImage at 512 px: \(image.width)×\(image.height), upright (portrait: orientation applied); "
                    + "peak decode memory \(Format.bytes(Int64(info.peakDecodeBytes))) where full-size pixels "
                    + "would take \(Format.bytes(Int64(photo.storedPixelWidth * photo.storedPixelHeight * 4)))")
        } else {
            say("   requestImage: \(info.error.map { "\($0)" } ?? "no image")")
        }
        // This library keeps the default `locationAccess = .denied`; an owner's library may grant it.
        var granted = library.configuration
        granted.storeURL = storeURL
        granted.locationAccess = .granted
        let owner = try await AssetLibrary(configuration: granted)
        defer { owner.close() }
        try await owner.sync(fetchThumbnails: false)
        if let located = try owner.asset(forKey: Self.cameraKey), let where_ = located.location {
            var dataOptions = AssetRequestOptions()
            dataOptions.isNetworkAccessAllowed = true
            let theirs = try await owner.data(for: located, options: dataOptions)
            let ours = try await library.data(for: photo, options: dataOptions)
            say(
                "   location \(String(format: "%.4f, %.4f", where_.latitude, where_.longitude)) with access granted; "
                    + "here (denied) Asset.location is \(photo.location == nil ? "nil" : "set") and the bytes handed "
                    + "out have their GPS tags blanked: \(ours.count) bytes as the original's \(theirs.count), "
                    + "\(zip(ours, theirs).filter { $0 != $1 }.count) differ")
        }
    }

    /// Non-destructive edits: an edit, a resume from the original, what a second library sees, a revert.
    private func showEdits(_ library: AssetLibrary, second: AssetLibrary, observer: DemoObserver) async throws {
        guard let photo = try library.asset(forKey: Self.cameraKey) else { return }
        var network = AssetRequestOptions()
        network.isNetworkAccessAllowed = true
        network.version = .original
        let original = try await library.data(for: photo, options: network)
        let edited = try await library.applyBasicEdit(to: photo) { edit in
            try edit.setRotation(degrees: 90)
            edit.exposure = 0.5
        }
        await library.waitForUploads()
        await observer.drain()
        let revisions = try library.contentRevisions(of: edited)
        say(
            "== edited \(photo.key) with the built-in editor (rotate 90, exposure +0.5): hasAdjustments="
                + "\(edited.hasAdjustments), state \(edited.availability); rendered version and "
                + "\(revisions.last?.adjustmentData?.data.count ?? 0) bytes of adjustment data uploaded beside the "
                + "original (edits/…), the original untouched")
        let resumed = try await library.applyBasicEdit(to: edited, resume: true) { edit in edit.saturation = -1 }
        await library.waitForUploads()
        await observer.drain()
        let settings = try library.contentRevisions(of: resumed).last?.adjustmentData.map {
            String(decoding: $0.data, as: UTF8.self)
        }
        say("   resumed from the original with saturation -1 added: \(settings ?? "?")")
        try await second.sync(fetchThumbnails: false)
        if let there = try second.asset(forKey: photo.key) {
            say(
                "   a second library after its sync: hasAdjustments=\(there.hasAdjustments), state "
                    + "\(there.availability) (the edit's thumbnail came with the change)")
        }
        try await library.performChanges { $0.revertAssetContentToOriginal(resumed) }
        await library.waitForUploads()
        await observer.drain()
        var current = AssetRequestOptions()
        current.isNetworkAccessAllowed = true
        let reverted = try await library.data(for: resumed, options: current)
        say(
            "   reverted: hasAdjustments=\(try library.asset(withLocalIdentifier: photo.localIdentifier)?.hasAdjustments ?? true), "
                + "current bytes \(reverted == original ? "identical to" : "DIFFERENT from") the original's")
    }

    /// An album made on this library, filled and reordered; the second library shows it after its sync.
    private func showAlbums(_ library: AssetLibrary, second: AssetLibrary, observer: DemoObserver) async throws {
        let photos = try library.fetchAssets(FetchOptions(predicate: .mediaType(.image), sortBy: [.key()], limit: 4))
        guard photos.count == 4 else { return }
        var album: CollectionPlaceholder!
        try await library.performChanges { changes in
            let trips = changes.createFolder(title: "Trips")
            album = changes.createAlbum(title: "Rome", in: trips)
            changes.addAssets(Array(photos.prefix(3)), to: album)
        }
        guard let rome = try library.collection(withLocalIdentifier: album.localIdentifier) else { return }
        let before = try library.fetchAssets(in: rome)
        let token = library.currentChangeToken
        try await library.performChanges { changes in
            changes.moveAssets(in: rome, at: IndexSet([2]), to: 0)
            changes.insertAssets([photos[3]], into: rome, at: 1)
        }
        await library.waitForUploads()
        await observer.drain()
        let names = { (result: FetchResult) in result.map { ($0.key as NSString).lastPathComponent } }
        let details = try library.changes(since: token).first?.details(for: before)
        say(
            "== album Trips/Rome made here: \(names(before).joined(separator: ", ")); reordered and one inserted: "
                + "\(names(try library.fetchAssets(in: rome)).joined(separator: ", ")) (change details: inserted "
                + "\(Array(details?.insertedIndexes ?? [])), moves \(details?.moves.count ?? 0))")
        let summary = try await second.sync(fetchThumbnails: false)
        if let there = try second.collection(withLocalIdentifier: album.localIdentifier),
            let folder = try second.fetchFolders().first(where: { $0.localIdentifier == there.folderIdentifier })
        {
            say(
                "   a second library after its sync (\(summary.collectionsRead) album documents read): "
                    + "\(folder.title)/\(there.title): \(names(try second.fetchAssets(in: there)).joined(separator: ", "))"
            )
        }
    }

    /// The summary: assets, states, cache, notifications, requests and time.
    private func summarize(_ library: AssetLibrary, server: FakeS3Server, observer: DemoObserver, started: Date)
        throws
    {
        let usage = try library.cacheUsage()
        say("")
        say("== summary")
        say("   assets:        \(try library.fetchAssets().count)")
        say("   states:        " + (try stateCounts(library)))
        say(
            "   cache:         \(Format.bytes(usage.bytes)) in \(usage.fullAssets) full + \(usage.partialAssets) partial"
        )
        say("   notifications: \(observer.count) (removed/inserted/changed/moved shown above)")
        say("   requests:      \(server.requestLog.entries().count) HTTP requests served by the fake server")
        say(String(format: "   time:          %.1f s", Date().timeIntervalSince(started)))
    }

    /// The synced assets the steps pick their targets from.
    private struct Samples {
        /// A cloud-only asset without a thumbnail, if there is one.
        var noThumbnail: Asset?
        /// The large originals (served at 40 MiB/s).
        var large: [Asset]
        /// The other images.
        var small: [Asset]

        init(_ library: AssetLibrary) throws {
            let all = Array(try library.fetchAssets())
            noThumbnail = all.first { !$0.hasThumbnail && $0.availability == .cloudOnly }
            large = all.filter { $0.key.hasPrefix("originals/large/") }
            small = all.filter { !$0.key.hasPrefix("originals/large/") && $0.mediaType == .image }
        }
    }

    /// The imported photo: its local identifier, and the asset as it was right after the import.
    private struct Imported {
        var identifier: String
        var asset: Asset?
    }

    // MARK: Helpers

    private func stateCounts(_ library: AssetLibrary) throws -> String {
        var counts: [AssetAvailability: Int] = [:]
        for a in try library.fetchAssets() { counts[a.availability, default: 0] += 1 }
        return AssetAvailability.allCases.map { "\($0.name) \(counts[$0] ?? 0)" }.joined(separator: " · ")
    }

    private func firstAnswer(_ library: AssetLibrary, _ asset: Asset, network: Bool) async -> (Data?, AssetRequestInfo)
    {
        await withCheckedContinuation { continuation in
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = network
            options.deliveryMode = .highQualityFormat
            library.requestData(for: asset, options: options) { data, info in
                continuation.resume(returning: (data, info))
            }
        }
    }

    private func allAnswers(_ library: AssetLibrary, _ asset: Asset) async -> [(Int, Bool)] {
        let stream = AsyncStream<(Int, Bool, Bool)> { continuation in
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = true
            options.deliveryMode = .opportunistic
            library.requestData(for: asset, options: options) { data, info in
                continuation.yield((data?.count ?? 0, info.isDegraded, info.isFinal))
                if info.isFinal { continuation.finish() }
            }
        }
        var answers: [(Int, Bool)] = []
        for await answer in stream { answers.append((answer.0, answer.1)) }
        return answers
    }
}

/// Keeps the fetch result on screen up to date from change details, as an app would, and prints each change.
final class DemoObserver: LibraryChangeObserver, Sendable {
    private let library: AssetLibrary
    private let quiet: Bool
    /// The fetch result on screen and the number of changes seen.
    private let state = LockedBox<(result: FetchResult?, count: Int)>((nil, 0))
    var count: Int { state.withLock { $0.count } }

    init(library: AssetLibrary, quiet: Bool) {
        self.library = library
        self.quiet = quiet
    }

    func fetch() throws {
        var options = FetchOptions()
        options.sortDescriptors = [.creationDate(ascending: false)]
        let fetched = try library.fetchAssets(options)
        state.withLock { $0.result = fetched }
    }

    /// Waits until every change delivered so far has been printed (observers run on their own queue).
    func drain() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            library.notifyWhenChangesDelivered { done.resume() }
        }
    }

    func libraryDidChange(_ change: LibraryChange) {
        let (count, details) = state.withLock { state -> (Int, FetchResultChangeDetails?) in
            state.count += 1
            guard let current = state.result, let details = change.details(for: current) else {
                return (state.count, nil)
            }
            state.result = details.fetchResultAfterChanges
            return (state.count, details)
        }
        guard let details, !quiet else { return }
        let line: String
        if details.hasIncrementalChanges {
            line =
                "   change #\(count): removed \(details.removedIndexes?.count ?? 0), inserted \(details.insertedIndexes?.count ?? 0), "
                + "changed \(details.changedIndexes?.count ?? 0), moved \(details.moves.count) → \(details.fetchResultAfterChanges.count) assets"
        } else {
            line =
                "   change #\(count): \(details.fetchResultBeforeChanges.count) → \(details.fetchResultAfterChanges.count) assets (not incremental)"
        }
        Terminal.shared.out(line)
    }
}
