import Dispatch

/// Runs blocking work (file copies, hashing, decoding) on a Dispatch worker, not on a thread of the cooperative
/// pool.
func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .utility).async {
            continuation.resume(with: Result { try work() })
        }
    }
}
