/// A user-facing error: one line, no stack trace, and its exit status (``ExitStatus/usage`` unless told).
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var status: ExitStatus
    init(_ description: String, status: ExitStatus = .usage) {
        self.description = description
        self.status = status
    }
}
