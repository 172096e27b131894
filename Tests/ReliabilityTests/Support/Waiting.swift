import Foundation

/// Waits until `condition` holds, re-checking it every few milliseconds, and gives up at `timeout`.
///
/// For state only the kernel can report (a socket closed by another thread, a child process writing its first
/// bytes), where there is no event to await; the condition itself is what the test waits for.
/// - Returns: Whether the condition held before the timeout.
@discardableResult
func waitUntil(timeout: TimeInterval = 10, _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return try condition()
}
