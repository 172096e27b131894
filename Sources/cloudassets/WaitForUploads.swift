import CloudAssets
import Foundation

/// Waits for the library's uploads, drawing one live line per upload in flight (on a terminal), then reports the
/// imports whose upload failed. A failure leaves the original in the library: the next sync tries again.
func waitForUploads(of library: AssetLibrary, quiet: Bool, ids: [String]? = nil) async throws {
    let drawing = Task {
        while !Task.isCancelled {
            // try?: drawing only: an unreadable status skips one frame
            if !quiet, let status = try? library.uploads, !status.inFlight.isEmpty {
                Terminal.shared.live(
                    status.inFlight.prefix(8).map { p in
                        let percent = p.totalBytes > 0 ? Int(Double(p.bytesSent) / Double(p.totalBytes) * 100) : 100
                        return "uploading \(p.localIdentifier)  \(percent)%  \(Format.bytes(p.bytesSent))"
                            + " of \(Format.bytes(p.totalBytes))"
                    } + (status.pending > 0 ? ["\(status.pending) waiting"] : []))
            }
            // try?: cancelled: the loop's condition ends it
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
    _ = await withTaskCancellationHandler {
        await library.waitForUploads()
    } onCancel: {
        library.close()
    }
    drawing.cancel()
    Terminal.shared.endLive()
    let failed = try library.fetchAssets(
        FetchOptions(predicate: .uploadStates([.uploadFailed]), includeHiddenAssets: true, includeTrashedAssets: true))
    let relevant = failed.filter { ids == nil || ids!.contains($0.localIdentifier) }
    guard !relevant.isEmpty else { return }
    // One line per reason: a bucket that does not exist, refused credentials or an unreachable endpoint fail
    // every upload the same way, and say so once — in the error itself when it is the only reason.
    var byReason: [String: [String]] = [:]
    for asset in relevant { byReason[asset.uploadError ?? "unknown error", default: []].append(asset.key) }
    let kept =
        relevant.count == 1
        ? "The original is kept in the library; `cloudassets sync` tries again."
        : "The originals are kept in the library; `cloudassets sync` tries again."
    if byReason.count == 1, let (reason, keys) = byReason.first {
        let what = keys.count == 1 ? "the upload of \(keys[0])" : "\(keys.count) uploads"
        let sentence = reason.hasSuffix(".") ? reason : reason + "."
        throw CLIError("\(what) failed: \(sentence) \(kept)", status: .uploadFailed)
    }
    for (reason, keys) in byReason.sorted(by: { ($0.value.count, $1.key) > ($1.value.count, $0.key) }) {
        let what = keys.count == 1 ? keys[0] : "\(keys.count) originals (\(keys.sorted()[0]), …)"
        Terminal.shared.err("upload failed: \(what): \(reason)")
    }
    throw CLIError("\(relevant.count) uploads failed. \(kept)", status: .uploadFailed)
}
