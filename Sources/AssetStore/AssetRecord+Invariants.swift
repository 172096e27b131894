import Essentials

/// The checks the write path runs on every inserted or updated record.
extension AssetRecord {
    /// Throws ``AssetStoreError/invariantViolation(_:)`` naming the first broken rule.
    package func validate() throws {
        func fail(_ message: String) throws -> Never {
            throw AssetStoreError.invariantViolation("\(key): \(message)")
        }
        if key.isEmpty { try fail("empty key") }
        if size < 0 { try fail("negative size") }
        if pixelWidth < 0 || pixelHeight < 0 { try fail("negative pixel size") }
        if !(1...8).contains(orientation) { try fail("orientation \(orientation) outside 1…8") }
        if uploadState != .uploaded && availability != .full { try fail("not uploaded and not local") }
        switch availability {
        case .cloudOnly, .thumbnail:
            if !partialRanges.isEmpty { try fail("\(availability) with partial ranges") }
            if localFilePath != nil { try fail("\(availability) with a local file") }
            if availability == .thumbnail && !thumbnailPresent { try fail("thumbnail state without a thumbnail") }
        case .partial:
            if partialRanges.isEmpty { try fail("partial state without ranges") }
            if partialETag != etag { try fail("partial ranges fetched under another ETag") }
            if let last = partialRanges.ranges.last, last.upperBound > size {
                try fail("partial ranges beyond the size")
            }
            if verifiedETag != nil { try fail("partial state with a verified file") }
        case .full:
            guard localFilePath != nil, let verifiedSize, let verifiedETag else {
                try fail("full state without verified file fields")
            }
            if verifiedETag != etag { try fail("verified ETag differs from the ETag") }
            if verifiedSize != size { try fail("verified size differs from the size") }
        }
    }
}
