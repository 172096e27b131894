import Foundation

/// What this process holds open, read from `/proc/self`, so a suite can prove it leaked nothing even while other
/// test suites run in the same process.
enum ProcessResources {
    /// Open descriptors whose target lies under `folder` (files of one library).
    static func openFiles(under folder: URL) -> [String] {
        let prefix = folder.resolvingSymlinksInPath().path + "/"
        return descriptorTargets().filter { $0.hasPrefix(prefix) || $0 + "/" == prefix }
    }

    /// Open TCP sockets of this process whose local or remote port is `port` (both ends of loopback connections
    /// to an in-process server count).
    static func openSockets(port: Int) -> Int {
        sockets().filter { $0.local == port || $0.remote == port }.count
    }

    /// The TCP states (`/proc/net/tcp`'s names: ESTABLISHED, CLOSE_WAIT, …) of this process's client ends of
    /// connections to `port`: the connections a library holds to an in-process server, its cache of idle ones and
    /// those it has not closed yet included, and not the server's own ends of them.
    static func clientSockets(port: Int) -> [String] {
        sockets().filter { $0.remote == port }.map(\.state)
    }

    /// This process's TCP sockets other than listening ones: local and remote port and state.
    private static func sockets() -> [(local: Int, remote: Int, state: String)] {
        let inodes = Set(
            descriptorTargets().compactMap { target -> String? in
                guard target.hasPrefix("socket:["), target.hasSuffix("]") else { return nil }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
        let states = [
            "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
            "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0B": "CLOSING",
        ]
        var found: [(local: Int, remote: Int, state: String)] = []
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9 else { continue }
                let ports = [fields[1], fields[2]].compactMap { $0.split(separator: ":").last }.compactMap {
                    Int($0, radix: 16)
                }
                // 0A = LISTEN: the server's own listening socket is not a connection.
                guard ports.count == 2, fields[3] != "0A", inodes.contains(String(fields[9])) else { continue }
                found.append((ports[0], ports[1], states[String(fields[3])] ?? String(fields[3])))
            }
        }
        return found
    }

    /// Every descriptor's target (`readlink /proc/self/fd/N`).
    static func descriptorTargets() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
    }

    /// Number of open descriptors of the whole process.
    static var descriptorCount: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
    }

    /// Resident set size of the process in bytes.
    static var residentBytes: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
