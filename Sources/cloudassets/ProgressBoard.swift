import CloudAssets
import Essentials
import Foundation

/// Live progress bars, one per active download; plain lines when not on a terminal. A download that has
/// received nothing for ``stallReport`` says so (on its bar, or once in a line): the library keeps retrying a
/// stalled transfer, and the user sees that it is waiting rather than a frozen bar.
final class ProgressBoard: Sendable {
    static let stallReport: TimeInterval = 5
    private struct State {
        var active: [String: AssetRequestProgress] = [:]
        var lastBytes: [String: (bytes: Int64, at: Date, reported: Bool)] = [:]
        var order: [String] = []

        func draw(now: Date) -> [String] {
            order.map { n in
                let quietFor = lastBytes[n].map { now.timeIntervalSince($0.at) } ?? 0
                let stall = quietFor >= ProgressBoard.stallReport ? "  (no data for \(Int(quietFor)) s, waiting)" : ""
                guard let p = active[n] else { return "waiting for the server…  \(n)\(stall)" }
                return Format.progressBar(
                    name: n, received: p.bytesReceived, total: p.totalBytes, bytesPerSecond: p.bytesPerSecond)
                    + stall
            }
        }
    }
    private let state = LockedBox(State())
    private let timer = LockedBox<(any DispatchSourceTimer)?>(nil)
    let quiet: Bool

    init(quiet: Bool) {
        self.quiet = quiet
        guard !quiet else { return }
        timer.withLock { slot in
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + 1, repeating: 1)
            timer.setEventHandler { [weak self] in self?.checkStalls() }
            timer.resume()
            slot = timer
        }
    }

    deinit { timer.withLock { $0 }?.cancel() }

    private func checkStalls() {
        let now = Date()
        let (newlyStalled, stalled, lines) = state.withLock { state -> ([(String, Int)], Bool, [String]) in
            var newlyStalled: [(String, Int)] = []
            for (name, last) in state.lastBytes
            where !last.reported && now.timeIntervalSince(last.at) >= Self.stallReport {
                state.lastBytes[name]?.reported = true
                newlyStalled.append((name, Int(now.timeIntervalSince(last.at))))
            }
            let stalled = !state.lastBytes.filter { now.timeIntervalSince($0.value.at) >= Self.stallReport }.isEmpty
            return (newlyStalled, stalled, state.draw(now: now))
        }
        if Terminal.shared.isInteractive {
            if stalled { Terminal.shared.live(lines) }
        } else {
            for (name, seconds) in newlyStalled {
                Terminal.shared.err("\(name): no data for \(seconds) s; waiting for the server (retrying on a stall)")
            }
        }
    }

    func update(name: String, progress: AssetRequestProgress) {
        guard !quiet else { return }
        let lines = state.withLock { state in
            if !state.order.contains(name) { state.order.append(name) }
            state.active[name] = progress
            if state.lastBytes[name]?.bytes != progress.bytesReceived {
                state.lastBytes[name] = (progress.bytesReceived, Date(), false)
            }
            return state.draw(now: Date())
        }
        Terminal.shared.live(lines)
    }

    func waiting(name: String) {
        guard !quiet else { return }
        let lines = state.withLock { state in
            if !state.order.contains(name) { state.order.append(name) }
            if state.lastBytes[name] == nil { state.lastBytes[name] = (0, Date(), false) }
            return state.draw(now: Date())
        }
        Terminal.shared.live(lines)
    }

    /// Removes `name`'s bar; when not on a terminal, prints one `downloaded` line for it.
    func finish(name: String) {
        let last = state.withLock { state in
            state.lastBytes[name] = nil
            state.order.removeAll { $0 == name }
            return state.active.removeValue(forKey: name)
        }
        if !quiet && !Terminal.shared.isInteractive, let last {
            Terminal.shared.err("downloaded \(name) (\(Format.bytes(last.totalBytes ?? last.bytesReceived)))")
        }
    }

    /// Stops the stall timer and removes the bars.
    func end() {
        timer.withLock { $0 }?.cancel()
        Terminal.shared.endLive()
    }
}
