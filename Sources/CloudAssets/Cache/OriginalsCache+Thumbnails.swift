import AssetStore
import Foundation
import Images
import S3Transfer

#if canImport(Glibc)
    import Glibc
#endif

extension OriginalsCache {
    /// ``AssetLibrary/makeThumbnail(for:isNetworkAccessAllowed:)``.
    func makeThumbnail(of assetID: Int64, isNetworkAccessAllowed: Bool) async throws -> ThumbnailSource {
        guard let record = try catalog.store.record(id: assetID), let id = record.id else {
            throw AssetRequestError.assetDeleted(localIdentifier: assetID)
        }
        if record.thumbnailPresent { return .alreadyLocal }
        let network = isNetworkAccessAllowed && network.allows(userRequest: true)
        if let thumbnailKey = record.thumbnailKey, verifiedOriginal(of: record) == nil {
            guard network else {
                throw AssetRequestError.inCloud(
                    key: thumbnailKey, localIdentifier: id,
                    refusedBy: NetworkRefusal(requestAllowed: isNetworkAccessAllowed))
            }
            let remote = try remote.checked()
            let (data, head) = try await remote.client.getObject(bucket: configuration.bucket, key: thumbnailKey)
            try files.writeThumbnail(data, id: id)
            try await commitThumbnails([GeneratedThumbnail(id: id, assetETag: record.etag, objectETag: head.etag)])
            return .bucketObject
        }
        if verifiedOriginal(of: record) == nil, network, ImageHeaderRead.mayHaveHeaders(key: record.key),
            let found = try await ImageHeaderRead.read(
                key: record.key, size: record.size, etag: record.etag, client: remote.checked().client,
                bucket: configuration.bucket, firstBytes: 64 << 10, thumbnailSlack: 128 << 10),
            let embedded = found.embeddedThumbnail
        {
            try await storeGenerated(
                try EmbeddedThumbnail.jpeg(
                    embedded, orientation: record.orientation, request: configuration.thumbnailRequest),
                id: id, of: record)
            return .embeddedThumbnail(bytesFetched: found.bytesRead)
        }
        if record.mediaType == .video {
            let (image, _, bytesRead) = try await posterFrame(
                of: record, request: configuration.thumbnailRequest, isNetworkAccessAllowed: network)
            try await storeGenerated(
                try ImageBridge.encodeJPEG(image, quality: EmbeddedThumbnail.quality), id: id, of: record)
            return .posterFrame(bytesRead: Int(bytesRead))
        }
        guard record.mediaType == .image else {
            // Not an image or a video the decoders read: the file is not at fault, the request is.
            throw CloudAssetsError(
                .imageUnreadable, "\(record.key) is not an image or a video: it gets no thumbnail",
                localIdentifier: String(id), path: record.key)
        }
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = network
        let url = try await ensureOriginal(assetID: id, options: options, requestID: downloads.nextRequestID())
        let (image, _) = try await ImageBridge.decode(.file(url), request: configuration.thumbnailRequest)
        try await storeGenerated(
            try ImageBridge.encodeJPEG(image, quality: EmbeddedThumbnail.quality), id: id, of: record)
        return .downscaledOriginal
    }

    /// A video's poster frame (its first frame, upright) of `request`'s size: from the verified original when it
    /// is local, else through the library's ranged reads — the container's boxes and the first keyframe, a few
    /// requests, which stay in the cache (the asset becomes `partial`). Bytes not cached need the network.
    /// - Returns: The image, its decode statistics, and the bytes read by range (0 from the local original).
    func posterFrame(of record: AssetRecord, request: DecodeRequest, isNetworkAccessAllowed: Bool) async throws
        -> (image: AssetImage, statistics: DecodeStatistics, bytesRead: Int64)
    {
        if let url = verifiedOriginal(of: record) {
            if let id = record.id { noteAccess(id) }
            return try await ImageBridge.posterFrame(.file(url), request: request)
        }
        let asset = catalog.asset(record)
        return try await ImageBridge.posterFrame(
            .ranges(size: record.size) { [self] range in
                try await readRetrying(asset, range: range, isNetworkAccessAllowed: isNetworkAccessAllowed)
            }, request: request)
    }

    /// Makes thumbnails from what a sync read with the images' headers (by key: an embedded EXIF thumbnail, or a
    /// small image's whole file), and records them in one transaction; an asset that changed or went meanwhile,
    /// or already has a thumbnail, is skipped (its file removed under the write lock). Bytes that do not decode
    /// are skipped. Returns how many were recorded.
    func storeEmbeddedThumbnails(_ thumbnails: [String: ImageHeaderRead.ThumbnailBytes]) async throws -> Int {
        let request = configuration.thumbnailRequest
        var written: [(id: Int64, etag: String, size: Int64)] = []
        for (key, source) in thumbnails {
            guard let record = try catalog.store.record(key: key), let id = record.id, !record.thumbnailPresent,
                record.thumbnailKey == nil
            else { continue }
            let encoded: [UInt8]?
            switch source {
            case .embedded(let jpeg):
                // try?: no thumbnail for this image: it is drawn from the original
                encoded = try? EmbeddedThumbnail.jpeg(jpeg, orientation: record.orientation, request: request)
            case .wholeImage(let file):
                // try?: no thumbnail for this image: it is drawn from the original
                encoded = try? ImageEncoder.jpeg(
                    ImageDecoder.decode(data: file, request: request).image, quality: EmbeddedThumbnail.quality)
            }
            guard let encoded else { continue }
            try files.writeThumbnail(Data(encoded), id: id)
            written.append((id, record.etag, Int64(encoded.count)))
        }
        guard !written.isEmpty else { return 0 }
        return try await commitThumbnails(
            written.map { GeneratedThumbnail(id: $0.id, assetETag: $0.etag, objectETag: nil, size: $0.size) })
    }

    /// Writes a thumbnail JPEG the library made and records it.
    private func storeGenerated(_ jpeg: [UInt8], id: Int64, of record: AssetRecord) async throws {
        try files.writeThumbnail(Data(jpeg), id: id)
        try await commitThumbnails([GeneratedThumbnail(id: id, assetETag: record.etag, size: Int64(jpeg.count))])
    }

    /// A thumbnail file written for one version of an asset.
    struct GeneratedThumbnail {
        var id: Int64
        /// The asset's ETag when the thumbnail was made: a newer version does not take it.
        var assetETag: String
        /// The bucket thumbnail object's ETag, when it came from one.
        var objectETag: String?
        /// Its size, for a thumbnail the library made (counted against the cache).
        var size: Int64?
    }

    /// Records thumbnails written for their assets' versions in one transaction; one whose asset changed or went
    /// meanwhile is removed again (under the write lock, so no file is left that belongs to no asset).
    /// - Returns: How many were recorded.
    @discardableResult
    func commitThumbnails(_ items: [GeneratedThumbnail]) async throws -> Int {
        let files = self.files
        let recorded = try await catalog.performWrite { tx -> Int in
            var count = 0
            for item in items {
                guard let now = try tx.record(item.id), now.etag == item.assetETag, !now.thumbnailPresent else {
                    if (try tx.record(item.id))?.thumbnailPresent != true {
                        // try?: our own file; one left is replaced by the next thumbnail written
                        try? FileManager.default.removeItem(at: files.thumbnail(id: item.id))
                    }
                    continue
                }
                _ = try tx.update(item.id) { r in
                    r.thumbnailPresent = true
                    if let size = item.size, r.thumbnailKey == nil { r.thumbnailSize = size }
                    if let etag = item.objectETag, r.thumbnailETag == nil { r.thumbnailETag = etag }
                    if r.availability == .cloudOnly { r.availability = .thumbnail }
                }
                telemetry.transition("thumbnail recorded", asset: item.id, key: now.key)
                count += 1
            }
            return count
        }
        try await enforceCacheLimit(keeping: nil)
        return recorded
    }
}

/// An EXIF thumbnail is a bare JPEG: its orientation is the original's.
enum EmbeddedThumbnail {
    /// The JPEG quality of the thumbnails the library makes.
    static let quality = 82

    /// The library's thumbnail for an embedded EXIF thumbnail: turned upright by the original's orientation and
    /// fitted to `request` (a few thousand pixels: decoded where it is called).
    static func jpeg(_ embedded: [UInt8], orientation: Int, request: DecodeRequest) throws(ImageError) -> [UInt8] {
        let decoded = try ImageDecoder.decode(data: withOrientation(orientation, jpeg: embedded), request: request)
        return try ImageEncoder.jpeg(decoded.image, quality: quality)
    }

    /// The JPEG with an EXIF block carrying `orientation` inserted after its start marker (unchanged for 1).
    static func withOrientation(_ orientation: Int, jpeg: [UInt8]) -> [UInt8] {
        guard (2...8).contains(orientation), jpeg.starts(with: [0xFF, 0xD8]) else { return jpeg }
        var exif = ExifBuilder()
        exif.orientation = orientation
        let payload = Array("Exif".utf8) + [0, 0] + exif.tiffPayload()
        let length = payload.count + 2
        guard length <= 0xFFFF else { return jpeg }
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + jpeg.dropFirst(2)
    }
}
