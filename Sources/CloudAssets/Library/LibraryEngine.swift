import AssetStore
import Dispatch
import Essentials
import Foundation

/// An engine of a library (catalog aside): one class that owns the state of one concern and reaches the shared
/// wiring — settings, catalog, files, bucket, telemetry, network gate — through its ``LibraryContext``.
///
/// The accessors below only forward to the context; an engine's own state is in its stored properties.
protocol LibraryEngine: Sendable {
    var context: LibraryContext { get }
}

extension LibraryEngine {
    var configuration: AssetLibrary.Configuration { context.configuration }
    var catalog: Catalog { context.catalog }
    var store: AssetStore { context.catalog.store }
    var files: LocalFiles { context.files }
    var lock: LibraryLock { context.lock }
    var remote: LibraryRemote? { context.remote }
    var telemetry: LibraryTelemetry { context.telemetry }
    var revealsLocation: Bool { context.catalog.revealsLocation }
    var isClosed: Bool { context.catalog.isClosed }
    var networkPolicy: NetworkPolicy { context.policy.withLock { $0 } }

    /// See ``Catalog/performWrite(_:)``.
    @discardableResult
    func performWrite<T: Sendable>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try context.catalog.performWrite(body)
    }

    /// See ``Catalog/deviceIdentifier()``.
    func deviceIdentifier() throws -> String { try context.catalog.deviceIdentifier() }

    /// The bucket side, once its binding is checked; throws when no endpoint is configured or the bucket is not
    /// the library's own.
    func requireRemote() throws -> LibraryRemote {
        guard let remote else { throw AssetRequestError.noRemote }
        try remote.checkBinding()
        return remote
    }

    /// Whether the network policy lets a request of this kind reach the network.
    func isNetworkAllowed(userRequest: Bool) -> Bool {
        switch networkPolicy {
        case .offline: return false
        case .allowed: return true
        case .userRequestsOnly: return userRequest
        }
    }
}

/// Runs blocking work (file copies, hashing, decoding) on a Dispatch worker, not on a thread of the cooperative
/// pool.
func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .utility).async {
            continuation.resume(with: Result { try work() })
        }
    }
}
