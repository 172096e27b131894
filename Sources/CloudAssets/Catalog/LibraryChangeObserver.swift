/// An object told about every committed change of a library (PhotoKit's `PHPhotoLibraryChangeObserver`).
///
/// The library holds observers weakly: a deallocated observer is dropped silently.
public protocol LibraryChangeObserver: AnyObject, Sendable {
    /// Called once per committed transaction that changed something, in commit order, on the queue given at
    /// registration (or the library's serial delivery queue). Ask `change.details(for:)` about your fetch results.
    func libraryDidChange(_ change: LibraryChange)
}
