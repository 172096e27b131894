import CloudAssets
import Essentials
import Foundation

/// One asset in `ls --json`, written by hand (keys in sorted order, as `JSONEncoder`'s `.sortedKeys` did):
/// JSON-encoding 20,000 rows through `JSONEncoder` and an `ISO8601DateFormatter` per row cost 8× the text form.
enum AssetJSON {
    static func write(_ a: Asset, to output: BufferedOutput) {
        output.write(
            "{\"addedDate\":\(a.addedDate.map { "\"\(ISODate.string($0))\"" } ?? "null"),"
                + "\"creationDate\":\"\(ISODate.string(a.creationDate))\","
                + "\"duration\":\(a.mediaType == .video ? String(a.duration) : "null"),\"favorite\":\(a.isFavorite),"
                + "\"hasThumbnail\":\(a.hasThumbnail),\"hidden\":\(a.isHidden),"
                + "\"id\":\"\(a.localIdentifier)\",\"key\":\(JSONText.quoted(a.key)),"
                + "\"keywords\":[\(a.keywords.map(JSONText.quoted).joined(separator: ","))],"
                + "\"mediaType\":\"\(a.mediaType.name)\",\"pinned\":\(a.isPinned),\"size\":\(a.size),"
                + "\"state\":\"\(a.availability.name)\",\"title\":\(a.title.map(JSONText.quoted) ?? "null"),"
                + "\"trashed\":\(a.isTrashed),\"uploadState\":\"\(a.uploadState.name)\"}")
    }
}
