import CloudAssets

/// One-line messages a user can act on. The exit status of each error is ``ExitStatus/of(_:)``.
enum UserMessage {
    /// One line, never Foundation's `Error Domain=…` text: file errors become `path: reason`.
    static func describe(_ error: any Error) -> String {
        let text: String
        switch error {
        case let library as CloudAssetsError: text = describe(library)
        case let cli as CLIError: text = cli.description
        default: text = CloudAssetsError.fileSystemError(error)?.description ?? String(describing: error)
        }
        return oneLine(text)
    }

    /// Control characters (a newline inside a server's message) become spaces: an error is one line.
    static func oneLine(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    /// The library's message, with what to do about it in this tool's terms (its flags and config file).
    static func describe(_ error: CloudAssetsError) -> String {
        switch error.code {
        case .missingCredentials:
            "\(error.description) (cloudassets also takes accessKeyID and secretAccessKey in its config file, and "
                + "--profile)"
        case .libraryBusy:
            "the library \(error.path ?? "") is busy: another process is repairing it after a crash; "
                + "try again later"
        case .endpointUnreachable: "\(error.description) (check --endpoint)"
        case .noSuchBucket: "no such bucket; check --bucket and --endpoint"
        case .networkNotAllowed: "\(error.description) (pass --network, or change the policy)"
        case .wrongRegion: "region mismatch: \(error.description) Pass --region or set AWS_REGION."
        case .serviceUnavailable: "server error: \(error.description)"
        case .boundToAnotherBucket:
            error.description.replacingOccurrences(of: "open this one with Configuration.rebind", with: "pass --rebind")
        default: error.description
        }
    }
}
