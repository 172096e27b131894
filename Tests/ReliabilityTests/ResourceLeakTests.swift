import FakeS3
import Foundation
import TestSupport
import Testing

@testable import CloudAssets

/// A closed and released library gives back everything it held: the database files and the connections.
@Suite(.heavy, .serialized) struct ResourceLeakTests {
    @Test func aClosedAndReleasedLibraryHoldsNoFileAndNoConnection() async throws {
        let bucket = try await ReliabilityBucket.start()
        let folder = try ScratchFolder("leak")
        defer { folder.remove() }
        var rng = SeededGenerator(seed: 3)
        for i in 0..<3 { try bucket.put("originals/l\(i).bin", rng.bytes(10_000)) }
        var library: AssetLibrary? = try await AssetLibrary(configuration: bucket.configuration(folder: folder.url))
        weak let released = library
        try await library!.sync()
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true
        for asset in try library!.fetchAssets() { _ = try await library!.requestFile(for: asset, options: options) }
        library!.close()
        library = nil
        let deallocated = await waitUntil(timeout: 5) { released == nil }
        #expect(deallocated, "the library object is still alive after close() and release")
        let filesClosed = await waitUntil(timeout: 5) { ProcessResources.openFiles(under: folder.url).isEmpty }
        #expect(filesClosed, "open after close: \(Set(ProcessResources.openFiles(under: folder.url)))")
        let port = bucket.server.port
        let socketsClosed = await waitUntil(timeout: 5) { ProcessResources.openSockets(port: port) == 0 }
        #expect(socketsClosed, "\(ProcessResources.openSockets(port: port)) connections open after close")
        await bucket.stop()
    }
}
