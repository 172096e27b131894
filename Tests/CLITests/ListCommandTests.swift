import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("cloudassets sync and ls", .heavy)
struct ListCommandTests {
    @Test func syncThenListJSONPrintsOneArrayWithEveryObjectAndItsState() async throws {
        try await withFixture(assets: 20) { fixture in
            let sync = try await fixture.run("sync")
            expectSuccess(sync)
            #expect(sync.stdout.contains("20 listed"), "\(sync)")

            let result = try await fixture.run("ls", ["--json"])
            expectSuccess(result)
            let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
            let array = try #require(json as? [[String: Any]], "ls --json must print one JSON array of objects")
            #expect(array.count == 20)
            for object in array {
                #expect(object["id"] is String)
                #expect(object["key"] is String)
                #expect(object["size"] is Int)
                #expect(object["pinned"] is Bool)
                #expect(["cloudOnly", "thumbnail", "partial", "full"].contains(object["state"] as? String ?? ""))
            }

            let rows = try JSONDecoder().decode([AssetRow].self, from: Data(result.stdout.utf8))
            #expect(Set(rows.map(\.id)).count == rows.count, "ids are unique")
            for row in rows {
                let original = try fixture.objectData(row.key)
                #expect(row.size == Int64(original.count), "\(row.key)")
                #expect(!row.pinned)
                // sync fetches thumbnails: assets with one on the server are `thumbnail`, the others `cloudOnly`.
                let thumbnailKey = "thumbnails/" + row.key.dropFirst("originals/".count) + ".jpg"
                let hasThumbnail = try fixture.server.objectData(bucket: CLIFixture.bucket, key: thumbnailKey) != nil
                #expect(row.state == (hasThumbnail ? "thumbnail" : "cloudOnly"), "\(row.key)")
            }
            #expect(rows.contains { $0.state == "cloudOnly" } && rows.contains { $0.state == "thumbnail" })
        }
    }

    @Test func anIncrementalSyncSaysWhenTheLastFullListingRanAndHowToForceOne() async throws {
        try await withFixture(assets: 3) { fixture in
            // A day between automatic full listings, as a user has it (the fixture lists on every sync).
            let daily = ["CLOUDASSETS_FULL_SYNC_INTERVAL": "86400"]
            let first = try await fixture.run("sync", environment: daily)
            expectSuccess(first)
            #expect(first.stdout.contains("synced (full)"), "\(first)")
            #expect(!first.stdout.contains("last full listing"))
            let second = try await fixture.run("sync", environment: daily)
            expectSuccess(second)
            #expect(second.stdout.contains("synced (incremental)"), "\(second)")
            #expect(second.stdout.contains("last full listing: "), "\(second)")
            #expect(second.stdout.contains(" s ago"), "the first sync listed seconds ago: \(second)")
            #expect(second.stdout.contains("sync --full"), "\(second)")
        }
    }

    @Test func logLevelLogsTheLibrarysWorkToStandardError() async throws {
        try await withFixture(assets: 3) { fixture in
            let quiet = try await fixture.run("sync")
            expectSuccess(quiet)
            #expect(!quiet.stderr.contains("sync ended"), "no log unless asked: \(quiet)")
            let logged = try await fixture.run("sync", ["--log-level", "info"])
            expectSuccess(logged)
            #expect(logged.stderr.contains("sync ended"), "\(logged)")
            #expect(!logged.stderr.contains(CLIFixture.secretKey))
            // At debug, each request too: method, path, status, attempt; never a query or a signature.
            let debug = try await fixture.run("sync", ["--log-level", "debug"])
            expectSuccess(debug)
            let lines = debug.stderr.split(separator: "\n")
            #expect(lines.count > logged.stderr.split(separator: "\n").count, "\(debug)")
            #expect(
                lines.contains { $0.contains("method=GET") && $0.contains("status=200") && $0.contains("attempt=1") },
                "\(debug)")
            #expect(!debug.stderr.contains(CLIFixture.secretKey) && !debug.stderr.contains("?"), "\(debug)")
            let fromEnvironment = try await fixture.run("sync", environment: ["CLOUDASSETS_LOG_LEVEL": "info"])
            #expect(fromEnvironment.stderr.contains("sync ended"), "\(fromEnvironment)")
            let wrong = try await fixture.run("sync", ["--log-level", "loud"])
            #expect(wrong.status == 2, "\(wrong)")
            #expect(wrong.stderr.contains("--log-level loud"))
        }
    }

    @Test func listFiltersByStatePrefixAndLimit() async throws {
        try await withFixture(assets: 20) { fixture in
            try await fixture.sync()
            let all = try await fixture.list()

            let cloudOnly = try await fixture.list(["--state", "cloudOnly"])
            #expect(!cloudOnly.isEmpty)
            #expect(cloudOnly == all.filter { $0.state == "cloudOnly" })

            // A year prefix that selects some but not all assets.
            let years = Set(all.map { String($0.key.prefix("originals/2015".count)) })
            let prefix = try #require(years.sorted().first)
            let expected = all.filter { $0.key.hasPrefix(prefix) }
            #expect(!expected.isEmpty && expected.count < all.count)
            #expect(try await fixture.list(["--prefix", prefix]) == expected)

            #expect(try await fixture.list(["--limit", "5"]) == Array(all.prefix(5)))
            #expect(
                try await fixture.list(["--state", "thumbnail", "--limit", "3"])
                    == Array(all.filter { $0.state == "thumbnail" }.prefix(3)))
        }
    }

    @Test func listSortsByKeyByDefaultAndBySizeOnRequest() async throws {
        try await withFixture(assets: 10) { fixture in
            try await fixture.sync()
            let byKey = try await fixture.list()
            #expect(byKey.map(\.key) == byKey.map(\.key).sorted())

            let bySize = try await fixture.list(["--sort", "size"])
            #expect(bySize.map(\.size) == bySize.map(\.size).sorted())
            let bySizeDescending = try await fixture.list(["--sort=-size"])
            #expect(bySizeDescending.map(\.size) == bySize.map(\.size).reversed())
            #expect(Set(bySize.map(\.id)) == Set(byKey.map(\.id)))

            let byKeyDescending = try await fixture.list(["--sort=-key"])
            #expect(byKeyDescending == byKey.reversed())

            // Every listed asset has its date added (printed to the second), sorted by it.
            let byAdded = try await fixture.list(["--sort", "added"])
            #expect(byAdded.allSatisfy { $0.addedDate != nil })
            let order = byAdded.map { $0.addedDate ?? "" }
            #expect(order == order.sorted())
            #expect(try await fixture.list(["--sort=-added"]) == byAdded.reversed())
        }
    }

    @Test func listWithBadFilterValuesFailsWithUsageErrors() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync()
            expectUserError(try await fixture.run("ls", ["--state", "somewhere"]), status: 2, mentioning: "state")
            expectUserError(try await fixture.run("ls", ["--sort", "colour"]), status: 2, mentioning: "sort")
        }
    }

    @Test func listBeforeAnySyncIsAnEmptyArray() async throws {
        try await withFixture(assets: 3) { fixture in
            let rows = try await fixture.list()
            #expect(rows.isEmpty)
        }
    }

    @Test func lsTextHasAHeaderAndEscapesControlCharactersInKeysSoEachAssetIsOneLineOfFiveColumns() async throws {
        try await withFixture(assets: 2) { fixture in
            try await fixture.sync()
            let template = try fixture.objectData(try #require(try await fixture.list().first).key)
            let odd = "originals/odd\tname\nwith\\slash\u{1}.png"
            try fixture.server.putObject(
                bucket: CLIFixture.bucket, key: odd, data: template, contentType: "image/png",
                metadata: ["media-type": "image"])
            try await fixture.sync()
            let result = try await fixture.run("ls")
            expectSuccess(result)
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.first == "ID\tSTATE\tPINNED\tSIZE\tKEY", "\(result)")
            #expect(lines.count == 4, "a header and one line per asset: \(result)")
            #expect(lines.allSatisfy { $0.split(separator: "\t", omittingEmptySubsequences: false).count == 5 })
            #expect(lines.contains { $0.hasSuffix("\toriginals/odd\\tname\\nwith\\\\slash\\x01.png") }, "\(result)")

            let bare = try await fixture.run("ls", ["--no-header"])
            expectSuccess(bare)
            #expect(bare.stdout.split(separator: "\n").count == 3 && !bare.stdout.hasPrefix("ID"))
            let quiet = try await fixture.run("ls", ["--quiet"])
            #expect(quiet.stdout == bare.stdout)

            // JSON carries the key itself, exactly.
            #expect(try await fixture.list().contains { $0.key == odd })
        }
    }

    @Test func statusJSONListsAllFourStatesEvenWhenTheirCountIsZero() async throws {
        try await withFixture(assets: 3) { fixture in
            struct Status: Decodable { var states: [String: Int] }
            for step in 0..<2 {
                if step == 1 { try await fixture.sync(["--no-thumbnails"]) }
                let result = try await fixture.run("status", ["--json"])
                expectSuccess(result)
                let states = try JSONDecoder().decode(Status.self, from: Data(result.stdout.utf8)).states
                #expect(Set(states.keys) == ["cloudOnly", "thumbnail", "partial", "full"], "\(result)")
                #expect(states.values.reduce(0, +) == step * 3)
            }
        }
    }
}
