import Essentials
import Foundation

/// The fault rules of a running server. Thread-safe; changes apply to requests that arrive after
/// the call returns.
public final class FaultInjector: Sendable {
    private struct Armed {
        var rule: FaultRule
        var seen = 0
        var fired = 0
    }

    private let rules = LockedBox<[Armed]>([])

    init() {}

    /// Adds a rule. Rules are evaluated in the order added; every rule that fires contributes its fault.
    /// - Returns: The rule's id, for ``remove(_:)``.
    @discardableResult
    public func add(_ rule: FaultRule) -> UUID {
        rules.withLock { $0.append(Armed(rule: rule)) }
        return rule.id
    }

    /// Adds a rule built from its parts; see ``FaultRule``.
    @discardableResult
    public func add(
        _ fault: Fault, keyPattern: String = "*", method: String? = nil, afterRequests: Int = 0, times: Int? = nil
    ) -> UUID {
        add(FaultRule(keyPattern: keyPattern, method: method, afterRequests: afterRequests, times: times, fault: fault))
    }

    /// Removes one rule; unknown ids are ignored.
    public func remove(_ id: UUID) { rules.withLock { $0.removeAll { $0.rule.id == id } } }

    /// Removes every rule.
    public func removeAll() { rules.withLock { $0.removeAll() } }

    /// The current rules, in evaluation order.
    public var all: [FaultRule] { rules.withLock { $0.map(\.rule) } }

    /// Counts the request against every matching rule and returns the faults that fire for it.
    func faults(method: String, key: String) -> [Fault] {
        rules.withLock { armed in
            var fired: [Fault] = []
            for i in armed.indices where armed[i].rule.matches(method: method, key: key) {
                armed[i].seen += 1
                guard armed[i].seen > armed[i].rule.afterRequests else { continue }
                if let times = armed[i].rule.times, armed[i].fired >= times { continue }
                armed[i].fired += 1
                fired.append(armed[i].rule.fault)
            }
            return fired
        }
    }
}
