/// How a response body misbehaves, folded from the faults that fired for a request.
struct BodyFaultPlan {
    enum Cut {
        case stall
        case reset
        case truncate
    }

    /// Body bytes to send before the cut.
    var cutAfter: Int64?
    var cut: Cut?
    /// Object offset whose byte is inverted.
    var flipOffset: Int64?
    var bytesPerSecond: Int?
    /// Body bytes to send before waiting for the gate (``Fault/holdAfter(bytes:gate:)``).
    var hold: (after: Int64, gate: FaultGate)?

    init(_ faults: [Fault]) {
        for fault in faults {
            switch fault {
            case .stallAfter(let n): setCut(Int64(max(0, n)), .stall)
            case .resetAfter(let n): setCut(Int64(max(0, n)), .reset)
            case .truncateBody(let n): setCut(Int64(max(0, n)), .truncate)
            case .flipByte(let offset): flipOffset = Int64(offset)
            case .bandwidthLimit(let bps): bytesPerSecond = max(1, bps)
            case .holdAfter(let n, let gate): hold = (Int64(max(0, n)), gate)
            default: break
            }
        }
    }

    private mutating func setCut(_ n: Int64, _ kind: Cut) {
        if cutAfter == nil || n < cutAfter! {
            cutAfter = n
            cut = kind
        }
    }

    var isEmpty: Bool { cut == nil && flipOffset == nil && bytesPerSecond == nil && hold == nil }

    /// Body bytes that will actually be sent for a body of `length` bytes.
    func bytesSent(of length: Int64) -> Int64 { min(length, cutAfter ?? length) }
}
