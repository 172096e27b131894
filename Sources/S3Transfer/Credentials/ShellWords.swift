/// Splits a command line into words the way botocore splits `credential_process` on POSIX systems (Python's
/// `shlex.split`, POSIX mode): words separated by blanks; single quotes keep everything literally; double
/// quotes keep everything but `\"` and `\\`; outside quotes a backslash keeps the next character; quoted parts
/// next to each other join one word (`a"b c"d` is `ab cd`). No variable, glob, tilde or command expansion — the
/// words are handed to `posix_spawnp` as they are, never to a shell. Pure; thread-safe.
package enum ShellWords {
    /// Why a line cannot be split.
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A quote is opened and never closed.
        case unclosedQuote
        /// The line ends with a lone backslash.
        case trailingBackslash

        package var description: String {
            switch self {
            case .unclosedQuote: "a quote is never closed"
            case .trailingBackslash: "it ends with a lone backslash"
            }
        }
    }

    /// The words of `line`.
    package static func split(_ line: String) throws(Failure) -> [String] {
        enum Mode { case plain, single, double }
        var words: [String] = []
        var word = ""
        var inWord = false
        var mode = Mode.plain
        var iterator = line.makeIterator()
        while let c = iterator.next() {
            switch mode {
            case .plain:
                switch c {
                case " ", "\t", "\n", "\r":
                    if inWord { words.append(word) }
                    word = ""
                    inWord = false
                case "'":
                    mode = .single
                    inWord = true
                case "\"":
                    mode = .double
                    inWord = true
                case "\\":
                    guard let next = iterator.next() else { throw .trailingBackslash }
                    word.append(next)
                    inWord = true
                default:
                    word.append(c)
                    inWord = true
                }
            case .single:
                if c == "'" { mode = .plain } else { word.append(c) }
            case .double:
                switch c {
                case "\"": mode = .plain
                case "\\":
                    guard let next = iterator.next() else { throw .unclosedQuote }
                    if next != "\"" && next != "\\" { word.append("\\") }
                    word.append(next)
                default: word.append(c)
                }
            }
        }
        guard mode == .plain else { throw .unclosedQuote }
        if inWord { words.append(word) }
        return words
    }
}
