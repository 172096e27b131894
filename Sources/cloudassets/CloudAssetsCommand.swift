import ArgumentParser
import Foundation

@main
struct CloudAssetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudassets",
        abstract: "Work with a photo library whose originals live in an S3 bucket.",
        subcommands: [
            Demo.self, Sync.self, List.self, Get.self, Pin.self, Unpin.self, Evict.self, Watch.self, Status.self,
        ])
}
