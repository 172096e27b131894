import Foundation
import S3Transfer
import Video

/// A sync's read of a video's container when the bucket's fields do not give its length: the `Video` reader's
/// few ranged GETs (the head of the file, and where `moov` is when it follows the media data), each naming the
/// listed version (`If-Match`), so a video another tool wrote gets its length, size, codec, capture date and
/// place without downloading it.
enum VideoHeaderRead {
    /// Whether the key names a container the `Video` reader parses (MP4, QuickTime, M4V, 3GP).
    static func mayHaveHeaders(key: String) -> Bool {
        switch KeyExtension.of(key) {
        case "mp4", "m4v", "mov", "qt", "3gp", "3g2": true
        default: false
        }
    }

    /// What the reads found (nil for a file that is not a movie the reader takes, never an error) and what they
    /// cost.
    struct Found: Sendable {
        var metadata: VideoMetadata?
        var cost: VideoMetadataReader.Cost
    }

    /// Reads the video's metadata if the object is still the version `etag` names.
    /// - Throws: The ranged GETs' `S3Error` (``S3Error/preconditionFailed`` when the object is no longer `etag`).
    static func read(key: String, size: Int64, etag: String, client: S3Client, bucket: String) async throws(S3Error)
        -> Found
    {
        var cost = VideoMetadataReader.Cost()
        do {
            let (metadata, spent) = try await VideoMetadataReader.read(size: size) { range in
                cost.reads += 1
                let (data, _) = try await client.getObject(bucket: bucket, key: key, range: range, ifMatch: etag)
                cost.bytes += Int64(data.count)
                return [UInt8](data)
            }
            return Found(metadata: metadata, cost: spent)
        } catch let error as S3Error {
            throw error
        } catch {
            // Not a movie, or one whose boxes lie: the listing's facts stay.
            return Found(metadata: nil, cost: cost)
        }
    }
}
