import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the command writes: live progress on a terminal, plain lines when piped.
final class Terminal: Sendable {
    static let shared = Terminal()

    /// True when standard error is a terminal (progress bars go to stderr).
    let isInteractive: Bool = isatty(STDERR_FILENO) == 1
    /// Lines of live progress on screen; the lock also keeps each write whole.
    private let liveLines = LockedBox(0)

    /// Prints a line to standard output.
    func out(_ line: String) {
        liveLines.withLock { live in
            Self.clear(&live)
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }

    /// Prints a line to standard error.
    func err(_ line: String) {
        liveLines.withLock { live in
            Self.clear(&live)
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// Replaces the live block (progress bars) on a terminal; does nothing when piped.
    func live(_ lines: [String]) {
        guard isInteractive else { return }
        liveLines.withLock { live in
            Self.clear(&live)
            var text = ""
            for line in lines { text += "\u{1B}[2K" + line + "\n" }
            live = lines.count
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// Removes the live block.
    func endLive() {
        liveLines.withLock { Self.clear(&$0) }
    }

    private static func clear(_ liveLines: inout Int) {
        guard liveLines > 0 else { return }
        FileHandle.standardError.write(Data(String(repeating: "\u{1B}[1A\u{1B}[2K", count: liveLines).utf8))
        liveLines = 0
    }
}

/// Formats sizes, rates and durations for people.
enum Format {
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    static func rate(_ bytesPerSecond: Double) -> String { bytes(Int64(bytesPerSecond)) + "/s" }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let s = Int(seconds.rounded())
        return s >= 3600
            ? String(format: "%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60)
            : String(format: "%02d:%02d", s / 60, s % 60)
    }

    /// `[#####-----]  42%  12.0 MiB / 28.6 MiB  3.1 MiB/s  ETA 00:05  name`
    static func progressBar(
        name: String, received: Int64, total: Int64?, bytesPerSecond: Double, width: Int = 24
    ) -> String {
        let fraction = total.map { $0 > 0 ? min(1, Double(received) / Double($0)) : 1 } ?? 0
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let totalText = total.map { bytes($0) } ?? "?"
        let eta = total.map { bytesPerSecond > 0 ? Double($0 - received) / bytesPerSecond : .infinity } ?? .infinity
        let percent = String(format: "%3d%%", Int(fraction * 100))
        return
            "[\(bar)] \(percent)  \(bytes(received)) / \(totalText)  \(rate(bytesPerSecond))  ETA \(duration(eta))  \(name)"
    }
}
