import AssetStore
import Dispatch
import Essentials
import Foundation

/// Registered observers and change streams, and the serial queue that delivers changes to them in commit order.
final class ObserverRegistry: Sendable {
    private struct Entry {
        weak var observer: (any LibraryChangeObserver)?
        let queue: DispatchQueue?
    }

    private struct State {
        var observers: [ObjectIdentifier: Entry] = [:]
        var streams: [UInt64: AsyncStream<LibraryChange>.Continuation] = [:]
        var nextStreamID: UInt64 = 0
        var isClosed = false
    }

    private let state = LockedBox(State())
    /// Every delivery goes through this serial queue, so observers see changes in the order they were enqueued.
    let deliveryQueue = DispatchQueue(label: "CloudAssets.AssetLibrary.changes")

    func register(_ observer: any LibraryChangeObserver, queue: DispatchQueue?) {
        state.withLock { $0.observers[ObjectIdentifier(observer)] = Entry(observer: observer, queue: queue) }
    }

    func unregister(_ observer: any LibraryChangeObserver) {
        _ = state.withLock { $0.observers.removeValue(forKey: ObjectIdentifier(observer)) }
    }

    private func isRegistered(_ observer: any LibraryChangeObserver) -> Bool {
        state.withLock { $0.observers[ObjectIdentifier(observer)]?.observer === observer }
    }

    /// Observers still alive and registered.
    var registeredCount: Int { state.withLock { $0.observers.values.filter { $0.observer != nil }.count } }

    func makeStream() -> AsyncStream<LibraryChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: LibraryChange.self, bufferingPolicy: .unbounded)
        let id: UInt64? = state.withLock { state in
            guard !state.isClosed else { return nil }
            state.nextStreamID += 1
            state.streams[state.nextStreamID] = continuation
            return state.nextStreamID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Queues `change` for every observer and stream. Call in commit order (the library does, under its write lock).
    func deliver(_ change: LibraryChange) {
        // The audience is fixed at commit time (the caller holds the write lock): an observer or stream that
        // registers after this commit never hears of it, even while the change is still queued.
        let (entries, streams) = state.withLock { state in
            state.observers = state.observers.filter { $0.value.observer != nil }
            return (Array(state.observers.values), Array(state.streams.values))
        }
        deliveryQueue.async { [self] in
            for continuation in streams { continuation.yield(change) }
            for entry in entries {
                guard let observer = entry.observer else { continue }
                if let queue = entry.queue {
                    queue.async { [self] in
                        // Unregistered since: say nothing.
                        if isRegistered(observer) { observer.libraryDidChange(change) }
                    }
                } else {
                    observer.libraryDidChange(change)
                }
            }
        }
    }

    /// Finishes every stream and drops every observer; later deliveries go nowhere.
    func close() {
        let streams = state.withLock { state in
            state.isClosed = true
            state.observers = [:]
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        deliveryQueue.async {
            for continuation in streams { continuation.finish() }
        }
    }

    /// Runs `body` on the delivery queue after everything queued before it (used by tests and `close`).
    func afterPendingDeliveries(_ body: @escaping @Sendable () -> Void) {
        deliveryQueue.async(execute: body)
    }
}
