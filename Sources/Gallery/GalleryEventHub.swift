import Essentials

/// The open event streams, and the fan-out of what every page must hear (download progress, the network policy):
/// ``broadcast(_:)`` sends one event's text to all of them.
///
/// It owns only the registry of the streams' `send` closures, one per `/api/events` connection, each known by the
/// id ``open(_:)`` returns; the library's changes do not pass through it (each stream's ``GalleryLiveFeed`` sends
/// those). It has no thread or queue of its own: every call is safe from any thread (the registry is behind a
/// lock), and ``broadcast(_:)`` calls the sends on the caller's thread, outside the lock — the router's request
/// task, the library's progress queue or its delivery queue. A send only queues the text on its connection's
/// channel (SwiftNIO writes it on that channel's event loop).
final class GalleryEventHub: Sendable {
    private let streams = LockedBox<(next: Int, sends: [Int: @Sendable (String) -> Void])>((0, [:]))

    /// Adds a stream; returns its id for ``close(_:)``.
    func open(_ send: @escaping @Sendable (String) -> Void) -> Int {
        streams.withLock { state in
            state.next += 1
            state.sends[state.next] = send
            return state.next
        }
    }

    /// Forgets the stream `id` (its connection went away).
    func close(_ id: Int) { _ = streams.withLock { $0.sends.removeValue(forKey: id) } }

    /// Forgets every stream (the server is stopping, and closes their connections itself).
    func closeAll() { streams.withLock { $0.sends = [:] } }

    /// Sends `text` (one whole event) to every open stream.
    func broadcast(_ text: String) {
        for send in streams.withLock({ Array($0.sends.values) }) { send(text) }
    }
}
