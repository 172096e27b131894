import CloudAssets
import Foundation
import Synchronization

// The child side of the crash tests (LibraryCrashTests, ContentEditCrashTests): the parent starts this program
// with a role, a library folder, the fake server's endpoint and an object key (the credentials in its
// environment), waits for its marker line and kills it with
// SIGKILL. A role runs until it is killed; it asserts nothing (the parent checks what it left).
//
//     ca-test-child download-until-killed <store> <endpoint> <key>   marker "CRASH-CHILD-DOWNLOADING <bytes>"
//     ca-test-child edit-until-killed <store> <endpoint> <key>       marker "EDIT-CHILD-COMMITTED"
//     ca-test-child album-until-killed <store> <endpoint> <key>      marker "ALBUM-CHILD-COMMITTED <album id>"
//     ca-test-child album-ops-until-killed <store> <endpoint> <album id>:<seed>
//                                                 marker "ALBUM-OP <n> done" after each operation or sync

let arguments = CommandLine.arguments
guard arguments.count == 5, let endpoint = URL(string: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ca-test-child ROLE STORE ENDPOINT KEY\n".utf8))
    exit(2)
}
var configuration = AssetLibrary.Configuration(storeURL: URL(fileURLWithPath: arguments[2], isDirectory: true))
configuration.endpoint = endpoint
configuration.bucket = "photos"
configuration.credentials = .environment  // the parent sets AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
let key = arguments[4]

@Sendable func announce(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

switch arguments[1] {
case "download-until-killed":
    configuration.progressInterval = 0
    let library = try await AssetLibrary(configuration: configuration)
    guard let asset = try library.asset(forKey: key) else { exit(3) }
    var options = AssetRequestOptions()
    options.isNetworkAccessAllowed = true
    let chunk: Int64 = 1 << 20
    let announced = Announced()
    options.progressHandler = { _, _, _, progress in
        if progress.bytesReceived >= chunk, announced.first() {
            announce("CRASH-CHILD-DOWNLOADING \(progress.bytesReceived)")
        }
    }
    // The server stalls the body; the parent kills this process while it waits.
    _ = try? await library.data(for: asset, options: options)
case "edit-until-killed":
    configuration.startsBackgroundTransfers = false
    let library = try await AssetLibrary(configuration: configuration)
    guard let asset = try library.asset(forKey: key) else { exit(3) }
    try await library.applyBasicEdit(to: asset) { try $0.setRotation(degrees: 90) }
    announce("EDIT-CHILD-COMMITTED")
    // The server holds the manifest's PUT; the parent kills this process while it waits.
    await library.waitForUploads()
case "album-until-killed":
    configuration.startsBackgroundTransfers = false
    let library = try await AssetLibrary(configuration: configuration)
    guard let asset = try library.asset(forKey: key) else { exit(3) }
    var album: CollectionPlaceholder?
    try await library.performChanges { changes in
        album = changes.createAlbum(title: "Made before the crash")
        changes.addAssets([asset], to: album!)
    }
    announce("ALBUM-CHILD-COMMITTED \(album!.localIdentifier)")
    // The server holds the document's PUT; the parent kills this process while it waits.
    await library.waitForUploads()
case "album-ops-until-killed":
    // Random insertions, removals, moves and syncs on one album, forever: the parent kills it at some moment.
    configuration.startsBackgroundTransfers = false
    configuration.fullSyncInterval = 24 * 3600
    configuration.checkpointInterval = 0
    let parts = key.split(separator: ":")
    guard parts.count == 2, var state = UInt64(parts[1]) else { exit(2) }
    func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(max(1, bound)))
    }
    let library = try await AssetLibrary(configuration: configuration)
    let everything = Array(try library.fetchAssets())
    var count = 0
    while true {
        guard let album = try library.collection(withLocalIdentifier: String(parts[0])), !everything.isEmpty else {
            exit(4)
        }
        let members = try library.fetchAssets(in: album)
        let pick = everything[next(everything.count)]
        switch next(5) {
        case 0, 1:
            let index = next(members.count + 1)
            try await library.performChanges { $0.insertAssets([pick], into: album, at: index) }
        case 2: try await library.performChanges { $0.removeAssets([pick], from: album) }
        case 3 where members.count > 1:
            let (from, to) = (next(members.count), next(members.count))
            try await library.performChanges { $0.moveAssets(in: album, at: IndexSet([from]), to: to) }
        default: _ = try? await library.sync(fetchThumbnails: false)
        }
        count += 1
        announce("ALBUM-OP \(count) done")
    }
default:
    FileHandle.standardError.write(Data("unknown role \(arguments[1])\n".utf8))
    exit(2)
}

/// True once: whether this is the first call (progress handlers run on a serial queue, but say so anyway).
final class Announced: Sendable {
    private let done = Mutex(false)
    func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
