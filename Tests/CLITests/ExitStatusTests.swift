import FakeS3
import Foundation
import TestSupport
import Testing

/// Every exit status of the table in docs/cli.md, each produced end to end by the built `cloudassets` (3, 4, 5, 6
/// and 130 are proved in ErrorReportingTests and InterruptResumeTests).
@Suite("cloudassets exit statuses", .heavy)
struct ExitStatusTests {
    static let cliDocument = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/cli.md")

    @Test func documentedExitCodeTableIsTheTableTheToolPrints() async throws {
        try await withFixture(assets: 0) { fixture in
            let printed = try await fixture.run("exit-codes", globals: [])
            expectSuccess(printed)
            let document = try String(contentsOf: Self.cliDocument, encoding: .utf8)
            let section = try #require(document.range(of: "## Exit codes"), "docs/cli.md has an Exit codes section")
            let table = document[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
                .drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.joined(separator: "\n")
            #expect(table == printed.stdout.trimmingCharacters(in: .newlines))
            for code in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 130] {
                #expect(table.contains("| \(code) | "), "code \(code) is documented")
            }
        }
    }

    @Test(arguments: [
        ["ls", "--no-such-flag"], ["get"], ["ls", "--limit", "many"], ["no-such-command"],
        ["watch", "--interval", "-1"],
    ])
    func aCommandLineThatDoesNotParseExitsTwoWithOneErrorLine(arguments: [String]) async throws {
        try await withFixture(assets: 0) { fixture in
            let result = try await fixture.run(arguments[0], Array(arguments.dropFirst()), globals: [])
            expectUserError(result, status: 2, mentioning: "help")
        }
    }

    @Test func helpExitsZero() async throws {
        try await withFixture(assets: 0) { fixture in
            let result = try await fixture.run("ls", ["--help"], globals: [])
            expectSuccess(result)
            #expect(result.stdout.contains("--sort"))
        }
    }

    @Test func aDamagedCatalogExitsOne() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let catalog = fixture.store.appendingPathComponent("library.sqlite")
            let handle = try FileHandle(forWritingTo: catalog)
            // Keep the SQLite header, destroy the pages after it: the file is ours but damaged.
            try handle.seek(toOffset: 100)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 64 << 10))
            try handle.close()
            for suffix in ["-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: catalog.path + suffix)
            }
            let result = try await fixture.run("ls")
            expectUserError(result, status: 1, mentioning: "library")
        }
    }

    @Test func aLibraryHeldExclusivelyByAnotherProcessExitsSeven() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            // What a library repairing the folder holds (briefly, in life): an exclusive lock on library.lock.
            let fd = open(fixture.store.appendingPathComponent("library.lock").path, O_RDWR)
            defer { close(fd) }
            #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
            let result = try await fixture.run("ls")
            expectUserError(result, status: 7, mentioning: "busy")
        }
    }

    @Test func readersAndRequestsShareALibraryWithARunningWatch() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync()
            let watch = try fixture.start("watch", ["--interval", "0"])
            #expect(await watch.stderr.wait { $0.contains("watching") }, "\(watch.stderr.text)")
            // Another process's download, listing and status while the watch holds the library.
            let get = try await fixture.run("get", ["1", "--network"])
            expectSuccess(get)
            expectSuccess(try await fixture.run("ls"))
            expectSuccess(try await fixture.run("status"))
            // The watch prints the other process's change (asset 1 became full) as it is committed.
            #expect(await watch.stdout.wait { $0.contains("\"changed\":[\"1\"]") }, "\(watch.stdout.text)")
            watch.interrupt()
            _ = await watch.finish()
        }
    }

    @Test(arguments: [
        (Fault.replaceObject(with: Data("another version".utf8)), "changed on the server"),
        (.deleteObject, "no longer exists"),
    ])
    func anObjectChangedOrDeletedDuringAGetExitsEight(fault: Fault, message: String) async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            let target = try #require(try await fixture.list().first)
            fixture.server.faults.add(FaultRule(keyPattern: target.key, method: "GET", times: 1, fault: fault))
            let result = try await fixture.run("get", [target.id, "--network"])
            expectUserError(result, status: 8, mentioning: message)
        }
    }

    @Test(.enabled(if: TmpfsMount.isPermitted, "needs the right to mount a tmpfs (root)"))
    func aFullDiskExitsNine() async throws {
        try await withFixture(assets: 1, large: 1, largeSize: 8 << 20) { fixture in
            let disk = try TmpfsMount(at: fixture.folder.appendingPathComponent("disk"), bytes: 2 << 20)
            defer { disk.unmount() }
            let store = disk.folder.appendingPathComponent("library").path
            let globals = [
                "--store", store, "--endpoint", fixture.server.endpoint.absoluteString, "--bucket", CLIFixture.bucket,
            ]
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: globals))
            let large = try await fixture.run("get", ["large/VID_L001.mov", "--network"], globals: globals)
            expectUserError(large, status: 9, mentioning: "space")
        }
    }

    @Test(arguments: [
        ["sync"], ["ls"], ["status"], ["add", "new.jpg"], ["favorite", "1"], ["rm", "1"], ["restore", "1"],
        ["empty-trash"], ["get", "1"], ["album ls"],
    ])
    func aCatalogWithNoRoomExitsNineWithOneLine(arguments: [String]) async throws {
        try await withFixture(assets: 3) { fixture in
            // A new library whose catalog cannot grow (the test hook of a full disk): its schema does not fit.
            let file = fixture.folder.appendingPathComponent("new.jpg")
            try Data(repeating: 7, count: 4096).write(to: file)
            var globals = fixture.globalArguments
            globals[1] = fixture.folder.appendingPathComponent("full").path
            let result = try await fixture.run(
                arguments[0], arguments.dropFirst().map { $0 == "new.jpg" ? file.path : $0 }, globals: globals,
                environment: ["CLOUDASSETS_TEST_CATALOG_PAGES_LEFT": "1"])
            expectUserError(result, status: 9, mentioning: "is full")
        }
    }

    @Test func aSyncThatFillsTheCatalogsDiskExitsNine() async throws {
        try await withFixture(assets: 3) { fixture in
            try await fixture.sync(["--no-thumbnails"])
            for index in 0..<400 {
                try fixture.server.putObject(
                    bucket: CLIFixture.bucket, key: "originals/more/\(index).jpg", data: Data("more \(index)".utf8))
            }
            let result = try await fixture.run(
                "sync", ["--no-thumbnails"], environment: ["CLOUDASSETS_TEST_CATALOG_PAGES_LEFT": "2"])
            expectUserError(result, status: 9, mentioning: "is full")
            #expect(!result.stderr.contains("SQLite"), "no raw SQLite error")
            // With room again, the sync completes.
            try await fixture.sync(["--no-thumbnails"])
            #expect(try await fixture.list().count == 403)
        }
    }

    @Test(.enabled(if: TmpfsMount.isPermitted, "needs the right to mount a tmpfs (root)"))
    func everyCommandOnAFullDiskExitsNine() async throws {
        try await withFixture(assets: 20) { fixture in
            let disk = try TmpfsMount(at: fixture.folder.appendingPathComponent("disk"), bytes: 2 << 20)
            defer { disk.unmount() }
            let store = disk.folder.appendingPathComponent("library")
            let globals = [
                "--store", store.path, "--endpoint", fixture.server.endpoint.absoluteString, "--bucket",
                CLIFixture.bucket,
            ]
            expectSuccess(try await fixture.run("sync", ["--no-thumbnails"], globals: globals))
            let file = fixture.folder.appendingPathComponent("new.jpg")
            // Fill the disk but for 512 KiB: the catalog opens, the import's copy of 1 MiB has no room.
            let fillerPath = disk.folder.appendingPathComponent("filler").path
            func fill() {
                let filler = open(fillerPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
                let chunk = [UInt8](repeating: 0, count: 16 << 10)
                while write(filler, chunk, chunk.count) > 0 {}
                close(filler)
            }
            fill()
            let filled = try #require(try FileManager.default.attributesOfItem(atPath: fillerPath)[.size] as? Int)
            #expect(truncate(fillerPath, off_t(max(0, filled - (512 << 10)))) == 0)
            try Data(repeating: 7, count: 1 << 20).write(to: file)
            let add = try await fixture.run("add", [file.path], globals: globals)
            expectUserError(add, status: 9, mentioning: "is full")
            #expect(add.stderr.contains("/library/originals is full"), "the import's copy: \(add.stderr)")
            // No room at all: a change's commit and a sync's.
            fill()
            var commands = [["favorite", "1"], ["sync", "--full"]]
            for arguments in commands {
                let result = try await fixture.run(arguments[0], Array(arguments.dropFirst()), globals: globals)
                expectUserError(result, status: 9, mentioning: "is full")
            }
            // Drop the catalog's shared-memory index (rebuilt from the log at the next open, which then cannot make
            // it: the "disk I/O error" of a log that filled the disk): even reading commands say the disk is full.
            try? FileManager.default.removeItem(atPath: store.appendingPathComponent("library.sqlite-shm").path)
            // Full again: the failed commands above may have freed room as they closed (a checkpoint that shortened
            // the log), and so does the index removed here.
            fill()
            commands = [["ls"], ["status"]]
            for arguments in commands {
                let result = try await fixture.run(arguments[0], Array(arguments.dropFirst()), globals: globals)
                expectUserError(result, status: 9, mentioning: "is full")
            }
            try FileManager.default.removeItem(at: disk.folder.appendingPathComponent("filler"))
            expectSuccess(try await fixture.run("ls", globals: globals))
        }
    }

    @Test func serverErrorsAfterRetriesExitTen() async throws {
        try await withFixture(assets: 2) { fixture in
            // Bucket requests (the listing) have the empty key.
            fixture.server.faults.add(FaultRule(keyPattern: "", method: "GET", fault: .internalError))
            let result = try await fixture.run("sync")
            expectUserError(result, status: 10, mentioning: "server error")
        }
    }

    @Test func aRangeOutsideTheOriginalExitsEleven() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            let range = "\(target.size + 10)-\(target.size + 20)"
            let result = try await fixture.run("get", [target.id, "--network", "--range", range])
            expectUserError(result, status: 11, mentioning: "not satisfiable")
        }
    }

    @Test func evictingAPinnedAssetExitsTwelve() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync()
            let target = try #require(try await fixture.list().first)
            expectSuccess(try await fixture.run("pin", [target.id]))
            let result = try await fixture.run("evict", [target.id])
            expectUserError(result, status: 12, mentioning: "pinned")
            #expect(try await fixture.rowsByID()[target.id]?.state == "full", "the pinned original is kept")
        }
    }

    @Test func aRegionOtherThanTheBucketsExitsThirteen() async throws {
        try await withFixture(assets: 2) { fixture in
            let result = try await fixture.run("sync", ["--region", "eu-west-3"])
            expectUserError(result, status: 13, mentioning: "region")
        }
    }

    @Test(arguments: [["--sort", "-date"], ["--sort=-date"]])
    func theReadmesDescendingSortParses(arguments: [String]) async throws {
        try await withFixture(assets: 8) { fixture in
            try await fixture.sync()
            let result = try await fixture.run("ls", arguments + ["--json"])
            expectSuccess(result)
            struct Row: Decodable { var creationDate: String }
            let dates = try JSONDecoder().decode([Row].self, from: Data(result.stdout.utf8)).map(\.creationDate)
            #expect(dates.count == 8)
            #expect(dates == dates.sorted(by: >), "newest first")
        }
    }
}
