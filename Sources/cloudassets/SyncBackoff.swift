import Foundation

/// The delay before retrying a failed sync: `base`, then doubling after each further failure in a row, never
/// more than `cap` (5 minutes). Pure: the delay depends only on the number of failures.
struct SyncBackoff: Sendable {
    var base: Double
    var cap: Double = 300

    /// The delay after `failures` failed syncs in a row (1 or more).
    func delay(afterFailures failures: Int) -> Double {
        min(cap, base * pow(2, Double(min(max(failures - 1, 0), 30))))
    }

    /// A delay as printed: tenths of a second below 10 s, whole seconds above.
    static func format(_ seconds: Double) -> String {
        seconds < 10 ? String(format: "%.1fs", seconds) : "\(Int(seconds.rounded()))s"
    }
}
