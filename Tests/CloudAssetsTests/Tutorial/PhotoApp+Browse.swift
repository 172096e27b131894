import CloudAssets
import Foundation

extension PhotoApp {
    /// The list of photos, kept current by a task that follows the library's changes until the library closes.
    func browse() throws -> PhotoList {
        let changes = library.changes  // subscribe first: every change committed from now on arrives, in order
        let list = try PhotoList(library: library)  // then the snapshot: the stream carries what comes after it
        Task { await list.follow(changes) }
        return list
    }
}
