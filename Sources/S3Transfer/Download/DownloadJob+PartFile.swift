import Essentials
import Foundation

/// The `.part` file and its sidecar: what a download resumes from, when it may trust it, and what it records so
/// that a later run (after kill -9) can continue.
extension DownloadJob {
    /// A writer for the `.part`: continued from what an earlier run left when its sidecar names the right
    /// version (the returned version), else empty.
    func prepareWriter() async throws(S3Error) -> (PartFileWriter, ObjectVersion) {
        var version = ObjectVersion()
        // Continue a `.part` left by an earlier run when its sidecar names the right version.
        let found = PartSidecar.lookup(forPart: partPath)
        let usable = found.sidecar.flatMap { sidecar in
            request.expectedETag.map({ S3ETag.unquoted($0) == sidecar.etag }) ?? true ? sidecar : nil
        }
        if found.present && usable == nil { PartSidecar.remove(forPart: partPath) }
        let writer = PartFileWriter(
            path: partPath, allowsFileSystemSync: configuration.syncsFileSystemForGroups, durable: request.durable)
        state.withLock { $0.writer = writer }
        if let sidecar = usable {
            let onDisk = try await openPartOnQueue(writer, truncate: false).get()
            sidecarState.withLock { $0.mayExist = true }
            var keep = min(sidecar.contiguousPrefix, onDisk)
            if let size = sidecar.size, keep > size { keep = 0 }
            version = ObjectVersion(etag: sidecar.etag, total: sidecar.size, checksums: sidecar.checksums)
            let hasher = IntegrityHasher(
                etag: sidecar.etag, checksums: sidecar.checksums, policy: configuration.integrity)
            try await writer.resume(keeping: keep, hasher: keep > 0 ? hasher : nil).get()
            if keep == 0 { version = ObjectVersion() }
            if keep > 0, let size = sidecar.size {
                // The file now ends at the kept prefix: from here on the sidecar is this version's resume
                // point, with the whole object's checksums (a 206 brings none).
                persistResumePoint(etag: sidecar.etag, total: size, checksums: sidecar.checksums)
            }
        } else {
            // Without a usable sidecar nothing on disk can be trusted: the `.part` starts empty.
            _ = try await openPartOnQueue(writer, truncate: true).get()
        }
        return (writer, version)
    }

    /// Length and hashes; nil when everything matches.
    func verify(writer: PartFileWriter, version: ObjectVersion) -> S3Error? {
        guard let total = version.total, writer.written == total else {
            return .transport(
                curlCode: 18, message: "received \(writer.written) of \(version.total.map(String.init) ?? "?") bytes")
        }
        if let expected = request.expectedSize, expected != total { return .objectChanged }
        if let code = writer.writeError { return .fileSystem(path: writer.path, errno: code) }
        if writer.hasher?.etag != version.etag, version.etag != nil, total > 0 {
            // Hash state from another version must never vouch for these bytes.
            return .checksumMismatch(expected: version.etag ?? "", actual: writer.hasher?.etag ?? "", algorithm: "ETag")
        }
        return writer.hasher?.firstMismatch()
    }

    /// The result of a verified file now at its destination.
    func result(writer: PartFileWriter, version: ObjectVersion, attempts: Int) -> DownloadResult {
        removeSidecar()
        let verification = Set([IntegrityCheck.length]).union(writer.hasher?.checks ?? [])
        let transferred = progress.withLock { $0.transferred }
        return DownloadResult(
            url: request.destination, etag: version.etag ?? "", size: version.total ?? 0,
            verification: verification, bytesTransferred: transferred, attempts: attempts)
    }

    /// Written as soon as a response's headers name the version, so that a process killed mid-body (kill -9,
    /// power loss excepted) can continue: the `.part` file is written strictly in order, so its size is the
    /// verified-to-be-contiguous prefix; the sidecar only needs to say which version those bytes belong to.
    /// (The final whole-file check still guards against anything else.)
    /// Written once per version (a resumed attempt's 206, which carries no whole-object checksums, must not
    /// replace the sidecar its 200 wrote).
    func persistResumePoint(etag: String, total: Int64, checksums: S3Checksums) {
        let fresh = sidecarState.withLock { state -> Bool in
            state.mayExist = true
            if let point = state.resumePoint, point.etag == etag, point.total == total { return false }
            state.resumePoint = (etag, total)
            return true
        }
        guard fresh else { return }
        let sidecar = PartSidecar(etag: etag, size: total, checksums: checksums, ranges: [0..<max(0, total)])
        save(sidecar)
    }

    /// After a failed attempt: records the bytes on disk, unless the sidecar already holds this version's
    /// resume point (which covers them).
    func saveSidecar(writer: PartFileWriter, version: ObjectVersion) {
        guard let etag = version.etag, writer.written > 0 else { return }
        let covered = sidecarState.withLock { state -> Bool in
            state.mayExist = true
            guard let point = state.resumePoint, point.etag == etag, point.total == version.total else {
                state.resumePoint = nil
                return false
            }
            return true
        }
        guard !covered else { return }
        let sidecar = PartSidecar(
            etag: etag, size: version.total, checksums: version.checksums, ranges: [0..<writer.written])
        save(sidecar)
    }

    /// Opens (creating it if needed) the `.part` unless the job is cancelled, under the job's lock, for the same
    /// reason as ``save(_:)``: no file appears after a cancel. On a thread that may wait for the file system.
    func openPart(_ writer: PartFileWriter, truncate: Bool) -> Result<Int64, S3Error> {
        state.withLock { state in
            state.cancelled ? .failure(.cancelled) : writer.openNow(truncate: truncate)
        }
    }

    /// ``openPart(_:truncate:)`` on the writer's queue.
    func openPartOnQueue(_ writer: PartFileWriter, truncate: Bool) async -> Result<Int64, S3Error> {
        await withCheckedContinuation { continuation in
            writer.perform { [self] in continuation.resume(returning: openPart(writer, truncate: truncate)) }
        }
    }

    /// Writes the sidecar unless the job is cancelled, under the job's lock: a caller that cancels its
    /// requests and then removes the files (an asset deleted meanwhile) never sees a sidecar appear after.
    /// A cancelled job needs none: a resume point worth keeping was written when the response's head came.
    func save(_ sidecar: PartSidecar) {
        state.withLock { state in
            guard !state.cancelled else { return }
            // try?: a resume point only: without it the download restarts from zero
            try? sidecar.save(forPart: partPath)
        }
    }

    func removeSidecar() {
        let present = sidecarState.withLock { state in
            defer { state = SidecarState() }
            return state.mayExist
        }
        if present { PartSidecar.remove(forPart: partPath) }
    }

    func discard(writer: PartFileWriter) {
        writer.restart(hasher: nil)
        removeSidecar()
    }
}

/// The version of the object the bytes on disk belong to.
struct ObjectVersion: Sendable {
    var etag: String?
    var total: Int64?
    var checksums = S3Checksums()

    mutating func adopt(_ head: DownloadAttemptHead) {
        etag = head.etag
        total = head.total
        if head.status == 200 { checksums = head.checksums }
    }
}
