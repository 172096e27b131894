import AssetStore
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension RequestBroker {
    /// ``AssetLibrary/writeData(for:toFile:options:)``.
    func writeData(for asset: Asset, toFile target: URL, options: AssetRequestOptions) async throws {
        var status = stat()
        guard lstat(target.path, &status) != 0 else {
            throw AssetRequestError.localFile(path: target.path, reason: "a file is already there")
        }
        try refuseInsideLibrary(target)
        guard let record = try catalog.store.record(id: asset.rowID) else {
            throw AssetRequestError.assetDeleted(localIdentifier: asset.rowID)
        }
        // Written under a name of ours beside the target, then given the target's name without replacing
        // anything: what appears there meanwhile is never overwritten.
        let staging = target.deletingLastPathComponent().appendingPathComponent(
            ".\(target.lastPathComponent).cloudassets-\(getpid())-\(UUID().uuidString.prefix(8)).tmp")
        do {
            if (options.version == .current && record.editRevision != nil) || cache.verifiedOriginal(of: record) != nil
            {
                // The version is (or is kept) in the library: copied from there.
                let source = try await requestFile(for: asset, options: options)
                try LocalFile.copy(source, to: staging)
            } else {
                let id = cache.nextRequestID()
                try await withTaskCancellationHandler {
                    try await cache.downloadCopy(of: record, to: staging, options: options, requestID: id)
                } onCancel: {
                    self.cache.cancelDownloads(forRequest: id)
                }
                if stripsLocation(of: record) {
                    let patches = try LocationFilter.patches(forFileAt: staging)
                    if !patches.isEmpty { try LocationFilter.apply(patches, toFileAt: staging, synchronize: false) }
                }
            }
            try Self.nameWithoutReplacing(staging, as: target)
        } catch {
            unlink(staging.path)
            throw error
        }
    }

    /// Refuses a target in the library's folder or inside it (after resolving links): a copy there could take the
    /// place of a file of the library's.
    private func refuseInsideLibrary(_ target: URL) throws {
        func real(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        guard let library = real(configuration.storeURL.path),
            let parent = real(target.deletingLastPathComponent().path)
        else { return }
        if parent == library || parent.hasPrefix(library + "/") {
            throw AssetRequestError.localFile(path: target.path, reason: "the path is inside the library's folder")
        }
    }

    /// Gives `staging` the name `target` unless something is there (a hard link, then the staging name goes;
    /// where links are not supported, a rename after a last check).
    private static func nameWithoutReplacing(_ staging: URL, as target: URL) throws {
        if link(staging.path, target.path) == 0 {
            unlink(staging.path)
            return
        }
        let code = errno
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EXDEV else {
            throw AssetRequestError.localFile(path: target.path, reason: String(cString: strerror(code)))
        }
        var status = stat()
        guard lstat(target.path, &status) != 0 else {
            throw AssetRequestError.localFile(path: target.path, reason: "a file is already there")
        }
        guard rename(staging.path, target.path) == 0 else {
            throw AssetRequestError.localFile(path: target.path, reason: String(cString: strerror(errno)))
        }
    }
}
