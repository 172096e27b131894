import AssetStore
import CFileIO
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Calls `onChange` (on its own thread, one call at a time) whenever the library folder's commit signal
/// (`library.commit-signal`, written by the store after each commit that changed something, in any process) is
/// written, or a catalog file open for writing is closed (a library closing, or a process ending — even killed
/// between a commit and its signal). Events that come while a call runs are folded into the next call.
///
/// It does not react to writes to the catalog's write-ahead log: SQLite writes the log's frames *before* it
/// publishes the commit in the shared WAL index, so a reader woken by the log write could still see the previous
/// state, and miss the commit until the next one. The signal is written after the commit returned; a close comes
/// after every commit of that connection.
final class CatalogWatcher: Sendable {
    private let inotify: Int32
    /// Written to by ``stop()`` to wake the thread.
    private let wake: (read: Int32, write: Int32)
    private let stopped = LockedBox(false)

    /// How often the commit signal is looked at when no inotify instance can be had.
    static let pollInterval: Int32 = 50

    /// Watches with inotify; when none can be had (the per-user limit of instances reached by other processes),
    /// looks at the commit signal's inode, size and modification time every ``pollInterval`` ms instead. `nil`
    /// only when not even a pipe can be made (the library then sees other libraries' commits only when it commits
    /// itself).
    /// - Parameters:
    ///   - folder: The library folder.
    ///   - usesInotify: `false` polls from the start (what happens when inotify cannot be had; for tests).
    ///   - onChange: Called on the watcher's thread, one call at a time.
    init?(folder: URL, usesInotify: Bool = true, onChange: @escaping @Sendable () -> Void) {
        let signal = folder.appendingPathComponent(AssetStore.commitSignalFileName).path
        let fd = usesInotify ? cfileio_watch_folder(folder.path, signal) : -1
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            if fd >= 0 { close(fd) }
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        inotify = fd
        wake = (ends[0], ends[1])
        // Taken now, not when the thread starts: a commit in between is a change.
        let initial = Self.stamp(signal)
        let entry = OpenResources.opened(fd >= 0 ? "catalog watcher (inotify)" : "catalog watcher (polling)")
        let thread = Thread { [inotify, wake, stopped] in
            if inotify >= 0 {
                Self.run(inotify: inotify, signal: signal, wake: wake.read, stopped: stopped, onChange: onChange)
            } else {
                Self.watchByPolling(
                    signal: signal, from: initial, wake: wake.read, stopped: stopped, onChange: onChange)
            }
            OpenResources.closed(entry)
        }
        thread.name = "CloudAssets catalog watcher"
        thread.start()
    }

    /// The thread leaves only when ``stop()`` writes to the wake pipe, so that write never meets a closed pipe.
    private static func run(
        inotify: Int32, signal: String, wake: Int32, stopped: LockedBox<Bool>, onChange: () -> Void
    ) {
        var fds = [
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno != EINTR { fds[0].fd = -1 }  // watching failed: wait only for the stop
                continue
            }
            if fds[1].revents != 0 { break }
            guard fds[0].revents != 0 else { continue }
            // Drain every pending event: one call covers them all.
            var signalled = false
            while true {
                let count = read(inotify, &buffer, buffer.count)
                guard count > 0 else { break }
                let events = Self.events(in: buffer[..<count])
                if !signalled { signalled = events.contains(where: Self.wakes) }
                // The signal appeared (or was replaced): its writes are watched on the file itself.
                if events.contains(where: Self.createsSignal) { _ = cfileio_watch_file(inotify, signal) }
            }
            if signalled, !stopped.withLock({ $0 }) { onChange() }
        }
        close(inotify)
        close(wake)
    }

    /// The fallback without inotify: the commit signal's identity, size and modification time, compared every
    /// ``pollInterval`` ms until ``stop()`` writes to the wake pipe.
    private static func watchByPolling(
        signal: String, from initial: [Int], wake: Int32, stopped: LockedBox<Bool>, onChange: () -> Void
    ) {
        var last = initial
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = Glibc.poll(&fds, 1, pollInterval)
            if ready > 0 { break }
            let now = stamp(signal)
            if now != last {
                last = now
                if !stopped.withLock({ $0 }) { onChange() }
            }
        }
        close(wake)
    }

    /// The signal file's inode, size and modification time (empty when it does not exist).
    private static func stamp(_ signal: String) -> [Int] {
        var status = stat()
        guard lstat(signal, &status) == 0 else { return [] }
        return [Int(status.st_ino), Int(status.st_size), Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec)]
    }

    /// The store's commit signal file name, as bytes (compared with inotify's event names).
    private static let commitSignalName = Array(AssetStore.commitSignalFileName.utf8)
    private static let catalogName = Array(AssetStore.databaseFileName.utf8)

    /// Whether an event means other libraries' commits may be there to read: any event of the commit signal (the
    /// nameless events are its own watch's), or a catalog file (`library.sqlite`, `-wal`, `-shm`) closed after
    /// writing. The folder's watch reports no plain writes: a large commit's many log writes queue nothing.
    static func wakes(_ event: (mask: UInt32, name: [UInt8])) -> Bool {
        event.name.isEmpty || event.name == commitSignalName
            || (event.mask & UInt32(IN_CLOSE_WRITE) != 0 && event.name.starts(with: catalogName))
    }

    /// Whether an event of the folder's watch is the commit signal appearing under its name.
    static func createsSignal(_ event: (mask: UInt32, name: [UInt8])) -> Bool {
        event.name == commitSignalName && event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0
    }

    /// The masks and file names of the `struct inotify_event` records in `events` (`wd`, `mask`, `cookie`, `len`,
    /// then `len` bytes of NUL-padded name).
    static func events(in events: ArraySlice<UInt8>) -> [(mask: UInt32, name: [UInt8])] {
        var found: [(mask: UInt32, name: [UInt8])] = []
        var offset = events.startIndex
        let header = 16
        while offset + header <= events.endIndex {
            let mask = events[(offset + 4)..<(offset + 8)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            let length = events[(offset + 12)..<(offset + 16)].withUnsafeBytes {
                Int($0.loadUnaligned(as: UInt32.self))
            }
            let nameStart = offset + header
            let nameEnd = min(nameStart + length, events.endIndex)
            found.append((mask, Array(events[nameStart..<nameEnd].prefix { $0 != 0 })))
            offset = nameEnd
        }
        return found
    }

    /// Ends the thread (idempotent); a call in progress finishes first.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        close(wake.write)
    }

    deinit { stop() }
}
