import CloudAssets
import Foundation

/// Live progress bars, one per active download; plain lines when not on a terminal. A download that has
/// received nothing for ``stallReport`` says so (on its bar, or once in a line): the library keeps retrying a
/// stalled transfer, and the user sees that it is waiting rather than a frozen bar.
final class ProgressBoard: @unchecked Sendable {  // every field is guarded by `lock`
    static let stallReport: TimeInterval = 5
    private let lock = NSLock()
    private var active: [String: AssetRequestProgress] = [:]
    private var lastBytes: [String: (bytes: Int64, at: Date, reported: Bool)] = [:]
    private var order: [String] = []
    private var timer: (any DispatchSourceTimer)?
    let quiet: Bool

    init(quiet: Bool) {
        self.quiet = quiet
        guard !quiet else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.checkStalls() }
        timer.resume()
        self.timer = timer
    }

    deinit { timer?.cancel() }

    /// Redraws stalled bars (on a terminal) or prints one line per stall (otherwise).
    private func checkStalls() {
        let now = Date()
        lock.lock()
        var newlyStalled: [(String, Int)] = []
        for (name, last) in lastBytes where !last.reported && now.timeIntervalSince(last.at) >= Self.stallReport {
            lastBytes[name]?.reported = true
            newlyStalled.append((name, Int(now.timeIntervalSince(last.at))))
        }
        let stalled = !lastBytes.filter { now.timeIntervalSince($0.value.at) >= Self.stallReport }.isEmpty
        let lines = drawLocked(now: now)
        lock.unlock()
        if Terminal.shared.isInteractive {
            if stalled { Terminal.shared.live(lines) }
        } else {
            for (name, seconds) in newlyStalled {
                Terminal.shared.err("\(name): no data for \(seconds) s; waiting for the server (retrying on a stall)")
            }
        }
    }

    /// Redraws `name`'s bar with its latest progress.
    func update(name: String, progress: AssetRequestProgress) {
        guard !quiet else { return }
        lock.lock()
        if !order.contains(name) { order.append(name) }
        active[name] = progress
        if lastBytes[name]?.bytes != progress.bytesReceived {
            lastBytes[name] = (progress.bytesReceived, Date(), false)
        }
        let lines = drawLocked(now: Date())
        lock.unlock()
        Terminal.shared.live(lines)
    }

    /// Shows (on a terminal) that a request is waiting for the server, until its first bytes arrive.
    func waiting(name: String) {
        guard !quiet else { return }
        lock.lock()
        if !order.contains(name) { order.append(name) }
        if lastBytes[name] == nil { lastBytes[name] = (0, Date(), false) }
        let lines = drawLocked(now: Date())
        lock.unlock()
        Terminal.shared.live(lines)
    }

    private func drawLocked(now: Date) -> [String] {
        order.map { n in
            let quietFor = lastBytes[n].map { now.timeIntervalSince($0.at) } ?? 0
            let stall = quietFor >= Self.stallReport ? "  (no data for \(Int(quietFor)) s, waiting)" : ""
            guard let p = active[n] else { return "waiting for the server…  \(n)\(stall)" }
            return Format.progressBar(
                name: n, received: p.bytesReceived, total: p.totalBytes, bytesPerSecond: p.bytesPerSecond) + stall
        }
    }

    /// Removes `name`'s bar; when not on a terminal, prints one `downloaded` line for it.
    func finish(name: String) {
        lock.lock()
        let last = active.removeValue(forKey: name)
        lastBytes[name] = nil
        order.removeAll { $0 == name }
        lock.unlock()
        if !quiet && !Terminal.shared.isInteractive, let last {
            Terminal.shared.err("downloaded \(name) (\(Format.bytes(last.totalBytes ?? last.bytesReceived)))")
        }
    }

    /// Stops the stall timer and removes the bars.
    func end() {
        timer?.cancel()
        Terminal.shared.endLive()
    }
}
