import ArgumentParser
import CloudAssets
import Essentials
import Foundation
import Gallery

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `cloudassets serve`: the web gallery and picker of the library.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a live web gallery (and picker) of the library on 127.0.0.1.",
        discussion: """
            Prints the page's address with a random token (http://127.0.0.1:PORT/?token=…); every request must \
            carry it. With --pick the page is a picker: Done prints {"identifiers":[…]} on stdout (and POSTs it \
            to --pick-callback when given) and exits 0; Cancel exits with status 15 (and POSTs \
            {"cancelled":true}). The address then goes to stderr. Each --action NAME adds a button to the page's \
            toolbar (on every view; enabled when an asset is selected): a tap prints \
            {"action":NAME,"identifiers":[…]} as one line on stdout (the picker's selection, or the asset in focus).
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The port (0: any free one).") var port: Int = 0
    @Option(help: "The address to bind (default 127.0.0.1; anything else exposes the library to the network).")
    var host: String = "127.0.0.1"
    @Flag(help: "Picker mode: the page selects assets; Done prints their identifiers and exits.") var pick = false
    @Option(
        name: .customLong("pick-callback"), help: "Also POST the picker's answer (JSON) to this URL (implies --pick).")
    var pickCallback: String?
    @Option(
        name: .customLong("action"),
        help: "Add a toolbar button NAME (repeatable): a tap prints the action and the selected identifiers.")
    var actions: [String] = []
    @Option(
        name: .customLong("idle-timeout"),
        help: "Close a connection that sends nothing for this many seconds when it is its turn (0: never).")
    var idleTimeout: Double = 60

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard idleTimeout >= 0, idleTimeout.isFinite else {
            throw ValidationError("--idle-timeout must be a number of seconds ≥ 0 (0: never)")
        }
        if let pickCallback {
            guard let url = URL(string: pickCallback), ["http", "https"].contains(url.scheme ?? ""), url.host != nil
            else { throw ValidationError("--pick-callback must be an http or https URL") }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try await global.openLibrary(requireRemote: false)
            defer { library.close() }
            let picking = pick || pickCallback != nil
            let (outcomes, continuation) = AsyncStream.makeStream(of: PickOutcome.self)
            let onPick: @Sendable (PickOutcome) -> Void = { outcome in continuation.yield(outcome) }
            let toolbar = actions.map { GalleryToolbarItem(identifier: $0, title: $0) }
            let server: GalleryServer
            do {
                server = try GalleryServer(
                    library: library, host: host, port: port, onPick: picking ? onPick : nil,
                    idleTimeout: idleTimeout > 0 ? .milliseconds(Int64(idleTimeout * 1000)) : nil, toolbar: toolbar,
                    onToolbarAction: { action in
                        Terminal.shared.out(
                            "{\"action\":\(JSONText.quoted(action.identifier)),\"identifiers\":"
                                + JSONText.strings(action.selection) + "}")
                    })
            } catch let error as GalleryServerError {
                throw CLIError("--action: \(error)", status: .usage)
            }
            try await server.start()
            let address = server.url.absoluteString + (picking ? "&pick=multiple" : "")
            if picking {
                Terminal.shared.err("picker: open \(address)")
            } else {
                Terminal.shared.out(address)
                if !global.quiet { Terminal.shared.err("serving \(library.configuration.storeURL.path); Ctrl-C stops") }
            }
            let callback = pickCallback.flatMap(URL.init(string:))
            let outcome: PickOutcome? = try await withInterrupt { () async -> PickOutcome? in
                var iterator = outcomes.makeAsyncIterator()
                return await iterator.next()
            }
            await server.stop()
            switch outcome {
            case .picked(let identifiers)?:
                let json = "{\"identifiers\":" + JSONText.strings(identifiers) + "}"
                Terminal.shared.out(json)
                if let callback { try await Self.post(json, to: callback) }
            case .cancelled?:
                if let callback { try await Self.post("{\"cancelled\":true}", to: callback) }
                Terminal.shared.err("picker cancelled")
                throw ExitStatus.pickCancelled.exitCode
            case nil:
                break
            }
        }
    }

    /// POSTs the picker's answer to the app; a failure (no answer, not 2xx) is an error of the command.
    static func post(_ json: String, to url: URL) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
        request.timeoutInterval = 10
        let (_, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw CLIError("--pick-callback \(url.absoluteString) answered HTTP \(status)", status: .unexpected)
        }
    }
}
