import Essentials
import Foundation

/// Collects a whole (small) response in memory for ``HTTPEngine/data(for:)``.
// @unchecked: `head` and `body` are engine-thread only (checked in debug builds); the rest is in `state`.
final class HTTPDataCollector: HTTPResponseHandler, @unchecked Sendable {
    private struct State {
        var transfer: HTTPTransferID?
        var engine: HTTPEngine?
        var cancelRequested = false
    }
    private let state = LockedBox(State())
    // Touched only on the engine thread once the transfer has started.
    private var head = HTTPResponseHead(status: 0, headers: [:])
    private var body = Data()
    /// The most body bytes kept; more aborts the transfer.
    private let bodyLimit: Int
    var onComplete: (@Sendable (Result<(HTTPResponseHead, Data), HTTPTransportError>) -> Void)?

    init(bodyLimit: Int = .max) { self.bodyLimit = bodyLimit }

    func setTransfer(_ id: HTTPTransferID, engine: HTTPEngine) {
        let cancel = state.withLock { state -> Bool in
            state.transfer = id
            state.engine = engine
            return state.cancelRequested
        }
        if cancel { engine.cancel(id) }
    }

    func cancel() {
        let target = state.withLock { state -> (HTTPTransferID, HTTPEngine)? in
            state.cancelRequested = true
            guard let id = state.transfer, let engine = state.engine else { return nil }
            return (id, engine)
        }
        if let (id, engine) = target { engine.cancel(id) }
    }

    func didReceiveHead(_ head: HTTPResponseHead) -> Bool {
        ThreadRole.httpEngine.assertCurrent()
        self.head = head
        if let length = head["content-length"].flatMap(Int.init), length > 0, length < 64 << 20 {
            body.reserveCapacity(length)
        }
        return true
    }

    func didReceiveBody(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition {
        ThreadRole.httpEngine.assertCurrent()
        guard bytes.count <= bodyLimit - body.count else { return .abort }
        body.append(bytes.assumingMemoryBound(to: UInt8.self))
        return .consumed
    }

    func didComplete(_ result: Result<Void, HTTPTransportError>) {
        ThreadRole.httpEngine.assertCurrent()
        let callback = onComplete
        onComplete = nil
        state.withLock { $0.engine = nil }
        switch result {
        case .success: callback?(.success((head, body)))
        case .failure(let error): callback?(.failure(error))
        }
    }
}
