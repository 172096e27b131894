import Essentials
import Foundation

/// The figures a soak prints at the end. Thread-safe.
final class SoakCounters: Sendable {
    struct Figures: Sendable {
        var downloads = 0
        var rangedReads = 0
        var evictions = 0
        var syncs = 0
        var faultsArmed = 0
        var faultsInjected = 0
        var retries = 0
        var recovered = 0
        var succeeded = 0
        var failedTyped = 0
        var failedUntyped = 0
        var corrupt = 0
        var errorKinds: [String: Int] = [:]
    }

    private let figures = LockedBox(Figures())

    func update(_ body: (inout Figures) -> Void) { figures.withLock { body(&$0) } }
    var snapshot: Figures { figures.withLock { $0 } }
}

extension SoakCounters.Figures: CustomStringConvertible {
    var description: String {
        let kinds = errorKinds.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return """
            downloads \(downloads), ranged reads \(rangedReads), evictions \(evictions), syncs \(syncs), \
            faults armed \(faultsArmed), faults injected \(faultsInjected), retries \(retries), \
            recovered \(recovered), succeeded \(succeeded), failed with a typed error \(failedTyped), \
            untyped \(failedUntyped), corrupt \(corrupt) [\(kinds)]
            """
    }
}
