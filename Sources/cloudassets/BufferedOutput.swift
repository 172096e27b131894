import Foundation

/// Standard output through a 64 KiB buffer: one `write(2)` per buffer instead of one per line.
final class BufferedOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    /// Appends `text`, writing the buffer out once it holds 64 KiB.
    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes out what the buffer holds (after removing any live progress lines).
    func flush() {
        guard !buffer.isEmpty else { return }
        Terminal.shared.endLive()
        buffer.withUnsafeBytes { FileHandle.standardOutput.write(Data($0)) }
        buffer.removeAll(keepingCapacity: true)
    }
}
