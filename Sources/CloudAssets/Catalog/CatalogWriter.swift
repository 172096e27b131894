import Dispatch
import Foundation

/// The executor a catalog's writes from async code run on: one serial queue per catalog, so that a write waiting
/// for the commit lock or for SQLite blocks a thread of its own and never one of the cooperative pool (two
/// threads on a two-core server). A task runs here only for the write itself (``Catalog/performWrite(_:)``).
final class CatalogWriter: TaskExecutor {
    private let queue = DispatchQueue(label: "CloudAssets.catalog-writes")
    /// The thread-dictionary entry that marks a thread running one of this writer's jobs.
    private static let marker = "CloudAssets.CatalogWriter"

    /// Whether the calling code runs in a job of this writer.
    var isCurrent: Bool {
        (Thread.current.threadDictionary[Self.marker] as? ObjectIdentifier) == ObjectIdentifier(self)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let id = ObjectIdentifier(self)
        queue.async {
            let thread = Thread.current
            thread.threadDictionary[Self.marker] = id
            job.runSynchronously(on: executor)
            thread.threadDictionary.removeObject(forKey: Self.marker)
        }
    }
}
