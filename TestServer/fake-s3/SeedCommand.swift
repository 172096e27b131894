import ArgumentParser
import FakeS3
import Foundation

/// `fake-s3 seed`: writes a deterministic sample photo library into a storage root.
struct SeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed", abstract: "Write a deterministic sample photo library into a storage root.")

    @Option(help: "The storage root (created when missing).")
    var root: String = ".fake-s3"

    @Option(help: "How many assets to create.")
    var assets: Int = 200

    @Option(help: "How many large originals (several hundred MiB each) to add.")
    var large: Int = 0

    @Option(name: .customLong("large-mib"), help: "The size of each large original, in MiB.")
    var largeMiB: Int = 300

    @Option(name: .customLong("large-photos"), help: "How many 24 MP JPEG photos (6000 x 4000) to add.")
    var largePhotos: Int = 0

    @Option(help: "The bucket to create or fill.")
    var bucket: String = "photos"

    @Option(help: "The seed of the deterministic generator.")
    var seed: UInt64 = 1

    func validate() throws {
        guard assets >= 0, large >= 0, largePhotos >= 0, largeMiB > 0 else {
            throw ValidationError("--assets, --large and --large-photos must be ≥ 0, --large-mib > 0")
        }
    }

    func run() async throws {
        let summary = try SampleLibrary.seed(
            root: URL(fileURLWithPath: root, isDirectory: true), bucket: bucket, assets: assets, large: large,
            largeSize: Int64(largeMiB) << 20, largePhotos: largePhotos, seed: seed)
        print(
            "fake-s3: seeded \(summary.originals) originals and \(summary.thumbnails) thumbnails into bucket '\(bucket)' under \(root)"
        )
    }
}
