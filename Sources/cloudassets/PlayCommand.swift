import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets play`: serves one asset's original on a loopback URL a player streams by range.
struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve an asset on a loopback URL a player streams by range (until Ctrl-C).",
        discussion: """
            Prints http://127.0.0.1:PORT/play/TOKEN/NAME on stdout: open it in a browser, ffplay, VLC or mpv. \
            Ranges already local are read from the cache; missing ones are fetched from the bucket as the player \
            asks for them, verified and kept (the asset becomes partial), unless --offline or the network policy \
            forbids it, when they are answered 503. Serves until interrupted.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The asset: its identifier, key, or path under the originals prefix.") var asset: String
    @Flag(help: "Serve only what is local: never fetch missing bytes from the bucket.") var offline = false

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: !offline)
            defer { library.close() }
            guard let target = try resolveAssets([asset], in: library).first else { return }
            var options = AssetRequestOptions()
            options.isNetworkAccessAllowed = !offline
            let url = try await library.requestPlaybackURL(for: target, options: options)
            Terminal.shared.out(url.absoluteString)
            if !global.quiet { Terminal.shared.err("serving \(target.key); Ctrl-C stops") }
            // Served until Ctrl-C (or SIGTERM) cancels the wait: a stream nothing is ever sent on.
            try await withInterrupt(kept: "the bytes fetched stay in the cache") {
                let (stopped, keeper) = AsyncStream<Void>.makeStream()
                for await _ in stopped {}
                keeper.finish()
            }
        }
    }
}
