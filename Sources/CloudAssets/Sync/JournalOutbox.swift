import AssetStore
import Essentials
import Foundation
import S3Transfer

/// The journal outbox: the changes this library made that other libraries learn from the bucket's journal,
/// written out in commit order. Used by every engine that writes to the bucket (uploads, edits, trash, sync).
///
/// Owns: the gate that keeps one flush at a time. The outbox rows themselves are in the catalog, written in the
/// same transaction as the change they describe.
final class JournalOutbox: Sendable {
    let configuration: AssetLibrary.Configuration
    let catalog: Catalog
    let remote: LibraryRemote?
    let network: NetworkPermission
    /// One flush at a time.
    private let gate = SerialGate()

    init(
        configuration: AssetLibrary.Configuration, catalog: Catalog, remote: LibraryRemote?, network: NetworkPermission
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.remote = remote
        self.network = network
    }

    /// Writes the journal outbox to the bucket: the changes this library made (uploaded originals, deleted
    /// originals, written sidecars), in commit order, up to 500 per entry, each entry with `If-None-Match: *`.
    /// An outbox row leaves only once its entry is in the bucket; a failure leaves the rest for the next flush
    /// (each sync flushes, and so does every upload commit). One flush at a time per library. Offline, unbound
    /// or without an endpoint it does nothing.
    func flush() async {
        // try?: unbound: nothing may be sent; the open reported why
        guard let remote, network.policy != .offline, (try? remote.checkBinding()) != nil else { return }
        // try?: entries not sent stay in the outbox for the next flush
        _ = try? await gate.run {
            let prefix = configuration.layout.journalPrefix
            let device = try catalog.deviceIdentifier()
            while true {
                let rows = try catalog.store.journalOutbox(limit: 500)
                guard let last = rows.last else { return }
                let body = JournalEntry.encoded(device: device, changes: rows.map(\.change))
                let time = Int64((remote.client.correctedNow.timeIntervalSince1970 * 1000).rounded(.down))
                let key = JournalKey.make(prefix: prefix, time: time, device: device, sequence: last.seq)
                do {
                    _ = try await remote.client.putObject(
                        bucket: configuration.bucket, key: key, body: body, contentType: "application/json",
                        condition: .keyAbsent)
                } catch S3Error.preconditionFailed {
                    // The same key exists (this outbox row was sent before and its removal was lost): sent.
                } catch {
                    // The rows stay in the outbox for the next flush (the `try?` above): said here, with the key.
                    LibraryTelemetry(logger: configuration.logger, factory: nil).failed(
                        "journal entry not sent; its changes stay in the outbox", key: key, count: rows.count,
                        error: error)
                    throw error
                }
                try await catalog.removeJournalOutbox(through: last.seq)
            }
        }
    }
}
