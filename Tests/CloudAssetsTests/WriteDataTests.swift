import CloudAssets
import FakeS3
import Foundation
import Images
import TestSupport
import Testing

/// `writeData(for:toFile:options:)`: a copy out written once, verified, never replacing what is there (issue 41).
@Suite("Library: writing an asset's data to a file", .heavy, .timeLimit(.minutes(1)))
struct WriteDataTests {
    /// A fresh folder beside the library for the copies.
    static func outputs(_ harness: LibraryHarness) throws -> URL {
        let folder = harness.folder.appendingPathComponent("out-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func contents(_ folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    @Test("an original in the cloud is downloaded straight to the file, once, and not kept in the library")
    func cloudOriginalIsWrittenOnce() async throws {
        try await withHarness { harness in
            let data = testBytes(count: 3_000_000, seed: 411)
            let (library, asset) = try await harness.openSynced(with: "big.png", data: data)
            let folder = try Self.outputs(harness)
            let target = folder.appendingPathComponent("copy.png")
            harness.server.requestLog.clear()
            try await library.writeData(for: asset, toFile: target, options: AssetLibrary.networkOptions())
            #expect(try Data(contentsOf: target) == data)
            #expect(harness.gets(of: "big.png").count == 1)
            #expect(try library.current(asset).originalAvailability != .full, "the library keeps no copy")
            #expect(Self.contents(folder) == ["copy.png"], "no temporary file is left")

            // Local now? No: a second copy downloads again; a local original is copied without a request.
            _ = try await library.requestFile(for: asset, options: AssetLibrary.networkOptions())
            harness.server.requestLog.clear()
            let second = folder.appendingPathComponent("second.png")
            try await library.writeData(for: asset, toFile: second)
            #expect(try Data(contentsOf: second) == data)
            #expect(harness.gets(of: "big.png").isEmpty)
        }
    }

    @Test("a file at the path is never replaced, and a path inside the library is refused")
    func nothingIsReplaced() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(with: "a.png", data: testBytes(count: 5000, seed: 412))
            let folder = try Self.outputs(harness)
            let target = folder.appendingPathComponent("mine.txt")
            try Data("the user's own file".utf8).write(to: target)
            await #expect(throws: CloudAssetsError.self) {
                try await library.writeData(for: asset, toFile: target, options: AssetLibrary.networkOptions())
            }
            #expect(try String(contentsOf: target, encoding: .utf8) == "the user's own file")
            let inside = library.configuration.storeURL.appendingPathComponent("copy.png")
            let error = await #expect(throws: CloudAssetsError.self) {
                try await library.writeData(for: asset, toFile: inside, options: AssetLibrary.networkOptions())
            }
            #expect(error?.code == .localFileFailed)
            #expect(!FileManager.default.fileExists(atPath: inside.path))
            #expect(Self.contents(folder) == ["mine.txt"])
        }
    }

    @Test("a download that never verifies leaves no file at the path and nothing beside it")
    func failedDownloadLeavesNothing() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "f.png", data: testBytes(count: 200_000, seed: 413))
            harness.server.faults.add(.flipByte(atOffset: 1234), keyPattern: "originals/f.png", method: "GET")
            let folder = try Self.outputs(harness)
            let target = folder.appendingPathComponent("f.png")
            await #expect(throws: CloudAssetsError.self) {
                try await library.writeData(for: asset, toFile: target, options: AssetLibrary.networkOptions())
            }
            #expect(Self.contents(folder).isEmpty, "\(Self.contents(folder))")
        }
    }

    @Test("a cancelled copy leaves no file at the path and nothing beside it")
    func cancelledCopyLeavesNothing() async throws {
        try await withHarness { harness in
            let (library, asset) = try await harness.openSynced(
                with: "slow.png", data: testBytes(count: 4_000_000, seed: 414))
            harness.server.faults.add(
                .bandwidthLimit(bytesPerSecond: 256 << 10), keyPattern: "originals/slow.png", method: "GET")
            let folder = try Self.outputs(harness)
            let target = folder.appendingPathComponent("slow.png")
            let copy = Task {
                try await library.writeData(for: asset, toFile: target, options: AssetLibrary.networkOptions())
            }
            // Cancelled once bytes are on their way into the folder.
            while !Self.contents(folder).contains(where: { $0.hasSuffix(".part") }) { await Task.yield() }
            copy.cancel()
            await #expect(throws: (any Error).self) { try await copy.value }
            #expect(Self.contents(folder).isEmpty, "\(Self.contents(folder))")
        }
    }

    @Test("with location access denied, the written image carries no GPS")
    func locationIsRemoved() async throws {
        try await withHarness { harness in
            let jpeg = try QuadrantJPEG.make(width: 320, height: 240, location: ImageRequestTests.eiffel)
            try #require(try ImageRequestTests.metadata(jpeg)?.location != nil)
            try harness.put("gps.jpg", data: jpeg)
            var configuration = harness.configuration()
            configuration.locationAccess = .denied
            let library = try await harness.open(configuration)
            try await library.sync(fetchThumbnails: false)
            let asset = try library.asset(path: "gps.jpg")
            let folder = try Self.outputs(harness)
            let target = folder.appendingPathComponent("gps.jpg")
            try await library.writeData(for: asset, toFile: target, options: AssetLibrary.networkOptions())
            let written = try Data(contentsOf: target)
            #expect(written.count == jpeg.count)
            #expect(try ImageRequestTests.metadata(written)?.location == nil)
            // Granted, the same request writes the original as it is.
            var granting = configuration
            granting.locationAccess = .granted
            library.close()
            let revealing = try await harness.open(granting)
            let exact = folder.appendingPathComponent("exact.jpg")
            try await revealing.writeData(
                for: try revealing.asset(path: "gps.jpg"), toFile: exact, options: AssetLibrary.networkOptions())
            #expect(try Data(contentsOf: exact) == jpeg)
        }
    }
}
