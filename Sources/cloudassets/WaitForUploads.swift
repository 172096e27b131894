import CloudAssets
import Foundation

/// Waits for the library's uploads, drawing one live line per upload in flight (on a terminal), then reports the
/// imports whose upload failed. A failure leaves the original in the library: the next sync tries again.
func waitForUploads(of library: AssetLibrary, quiet: Bool, ids: [String]? = nil) async throws {
    let drawing = Task {
        while !Task.isCancelled {
            if !quiet, let status = try? library.uploads, !status.inFlight.isEmpty {
                Terminal.shared.live(
                    status.inFlight.prefix(8).map { p in
                        let percent = p.totalBytes > 0 ? Int(Double(p.bytesSent) / Double(p.totalBytes) * 100) : 100
                        return "uploading \(p.localIdentifier)  \(percent)%  \(Format.bytes(p.bytesSent))"
                            + " of \(Format.bytes(p.totalBytes))"
                    } + (status.pending > 0 ? ["\(status.pending) waiting"] : []))
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
    await withTaskCancellationHandler {
        await library.waitForUploads()
    } onCancel: {
        library.close()
    }
    drawing.cancel()
    Terminal.shared.endLive()
    let failed = try library.fetchAssets(
        FetchOptions(predicate: .uploadStates([.uploadFailed]), includeHiddenAssets: true, includeTrashedAssets: true))
    let relevant = failed.filter { ids == nil || ids!.contains($0.localIdentifier) }
    for asset in relevant {
        Terminal.shared.err("upload failed: \(asset.key): \(asset.uploadError ?? "unknown error")")
    }
    if !relevant.isEmpty {
        throw CLIError(
            "\(relevant.count) upload(s) failed; the originals are kept in the library and `cloudassets sync` tries "
                + "again", status: .uploadFailed)
    }
}
