import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted on a folder: a disk that fills up. Needs the right to mount (root in a container with
/// CAP_SYS_ADMIN); ``isPermitted`` says whether this machine grants it. (As in ReliabilityTests.)
struct TmpfsMount {
    struct Failure: Error, CustomStringConvertible { var description: String }

    let folder: URL

    /// Mounts a tmpfs of `bytes` on `folder` (created when missing).
    init(at folder: URL, bytes: Int) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard mount("tmpfs", folder.path, "tmpfs", 0, "size=\(bytes)") == 0 else {
            throw Failure(description: "mount tmpfs on \(folder.path): \(String(cString: strerror(errno)))")
        }
        self.folder = folder
    }

    func unmount() { umount2(folder.path, Int32(MNT_DETACH)) }

    /// Whether mounting a tmpfs works here (probed once).
    static let isPermitted: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard let mounted = try? TmpfsMount(at: probe, bytes: 1 << 16) else { return false }
        mounted.unmount()
        return true
    }()
}
