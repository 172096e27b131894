import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted on a folder: a disk that fills up, and that can be made read-only. Needs the right to
/// mount (root in a container with CAP_SYS_ADMIN); ``isPermitted`` says whether this machine grants it. Shared by
/// the test targets that need a disk of their own.
public struct TmpfsMount: Sendable {
    /// Why a mount failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let folder: URL

    /// Mounts a tmpfs of `bytes` on `folder` (created when missing).
    public init(at folder: URL, bytes: Int) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard mount("tmpfs", folder.path, "tmpfs", 0, "size=\(bytes)") == 0 else {
            throw TmpfsMount.Failure(description: "mount tmpfs on \(folder.path): \(String(cString: strerror(errno)))")
        }
        self.folder = folder
    }

    /// Remounts read-only or read-write.
    public func setReadOnly(_ readOnly: Bool) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        guard mount("tmpfs", folder.path, "tmpfs", flags, nil) == 0 else {
            let reason = String(cString: strerror(errno))
            let holders = holders().joined(separator: "; ")
            throw TmpfsMount.Failure(description: "remount \(folder.path): \(reason); held by: [\(holders)]")
        }
    }

    /// Every process's descriptors and mappings of files on this mount (`pid: target`): what keeps a remount
    /// read-only from succeeding.
    public func holders() -> [String] {
        let prefix = folder.resolvingSymlinksInPath().path + "/"
        let fm = FileManager.default
        var found: [String] = []
        for pid in (try? fm.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
            for fd in (try? fm.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
                if let target = try? fm.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix(prefix)
                {
                    let flags =
                        (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8))?
                        .split(separator: "\n").first { $0.hasPrefix("flags:") } ?? ""
                    found.append("\(pid) fd \(fd) \(target) \(flags)")
                }
            }
            let maps = (try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? ""
            for line in maps.split(separator: "\n") where line.contains(prefix) {
                found.append("\(pid) map \(line)")
            }
        }
        return found
    }

    public func unmount() { umount2(folder.path, Int32(MNT_DETACH)) }

    /// Whether mounting a tmpfs works here (probed once).
    public static let isPermitted: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard let mounted = try? TmpfsMount(at: probe, bytes: 1 << 16) else { return false }
        mounted.unmount()
        return true
    }()
}
