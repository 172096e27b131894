import AssetStore
import Foundation

@testable import CloudAssets

/// Checks that every asset's recorded state agrees with the files on disk and with the bytes of the object version
/// it claims to hold, and that the library folder holds no file that belongs to no asset.
struct LibraryInvariants {
    /// Where the reference bytes come from.
    enum Reference {
        /// The version with the record's ETag, among those the test stored (objects may have changed since).
        case versions(ReliabilityBucket)
        /// The server's current object (after a clean final sync the catalog must match the server exactly).
        case server(ReliabilityBucket)
        /// Fixed bytes by key, for servers the test crafts itself.
        case versionsOf([String: Data])
    }

    struct Report: CustomStringConvertible {
        var full = 0
        var partial = 0
        var thumbnail = 0
        var cloudOnly = 0
        /// `full` (or `partial`) assets whose bytes differ from their object version: must stay 0.
        var corrupt = 0
        var violations: [String] = []

        var description: String {
            "full \(full), partial \(partial), thumbnail \(thumbnail), cloudOnly \(cloudOnly), corrupt \(corrupt), "
                + "violations \(violations.count)"
        }
    }

    let library: AssetLibrary
    let reference: Reference

    func check() throws -> Report {
        var report = Report()
        let store = library.catalog.store
        let files = library.cache.files
        let records = try store.records(ids: store.fetchIDs(StoreQuery(predicate: .all)))
        var byID: [Int64: AssetRecord] = [:]
        for record in records { if let id = record.id { byID[id] = record } }
        let fm = FileManager.default
        func size(_ path: String) -> Int64? {
            (try? fm.attributesOfItem(atPath: path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
        }

        for record in records {
            guard let id = record.id else { continue }
            let expected = try referenceBytes(for: record)
            let fullPath = files.original(id: id, key: record.key).path
            switch record.availability {
            case .full:
                report.full += 1
                let stored = files.storedPath(ofOriginal: URL(fileURLWithPath: fullPath))
                guard record.localFilePath == stored, let onDisk = size(fullPath) else {
                    report.violations.append("asset \(id) is full but its file \(fullPath) is missing")
                    continue
                }
                if onDisk != record.size || record.verifiedSize != record.size {
                    report.violations.append("asset \(id) is full with \(onDisk) bytes on disk, size \(record.size)")
                }
                let bytes = try Data(contentsOf: URL(fileURLWithPath: fullPath))
                if let expected, bytes != expected {
                    report.corrupt += 1
                    report.violations.append("asset \(id) (\(record.key)) is full but its bytes differ from the object")
                } else if expected == nil {
                    report.violations.append("asset \(id) is full under ETag \(record.etag), a version never stored")
                }
            case .partial:
                report.partial += 1
                let rangePath = files.partial(id: id).path
                guard let data = try? Data(contentsOf: URL(fileURLWithPath: rangePath)) else {
                    report.violations.append("asset \(id) is partial but its range file is missing")
                    continue
                }
                if record.partialETag != record.etag {
                    report.violations.append("asset \(id) is partial under ETag \(record.partialETag ?? "nil")")
                }
                for range in record.partialRanges.ranges {
                    guard range.upperBound <= Int64(data.count) else {
                        report.violations.append("asset \(id): range \(range) beyond its file (\(data.count) bytes)")
                        continue
                    }
                    let slice = data[Int(range.lowerBound)..<Int(range.upperBound)]
                    if let expected, slice != expected[Int(range.lowerBound)..<Int(range.upperBound)] {
                        report.corrupt += 1
                        report.violations.append("asset \(id): verified range \(range) differs from the object")
                    }
                }
                if fm.fileExists(atPath: fullPath) {
                    report.violations.append("asset \(id) is partial but a verified original is in place")
                }
            case .thumbnail, .cloudOnly:
                if record.availability == .thumbnail { report.thumbnail += 1 } else { report.cloudOnly += 1 }
                if fm.fileExists(atPath: fullPath) {
                    report.violations.append("asset \(id) is \(record.availability) but an original is in place")
                }
                if record.availability == .thumbnail && !record.thumbnailPresent {
                    report.violations.append("asset \(id) is thumbnail without a thumbnail")
                }
            }
            if record.thumbnailPresent && !fm.fileExists(atPath: files.thumbnail(id: id).path) {
                report.violations.append("asset \(id) records a thumbnail that is not on disk")
            }
        }

        // Orphans: every file must belong to a known asset in a state that needs it.
        for folder in [files.originalsFolder, files.partialFolder, files.thumbnailsFolder] {
            for name in (try? fm.contentsOfDirectory(atPath: folder.path)) ?? [] {
                let path = folder.appendingPathComponent(name).path
                guard let id = LocalFiles.identifier(ofFileNamed: name), let record = byID[id] else {
                    report.violations.append("orphan file \(path) belongs to no asset")
                    continue
                }
                let full = files.original(id: id, key: record.key).path
                let allowed: Bool
                switch folder {
                case files.originalsFolder:
                    allowed =
                        (path == full && record.availability == .full)
                        || ((path == full + ".part" || path == full + ".part.json") && record.availability != .full)
                case files.partialFolder:
                    allowed = record.availability == .partial
                default:
                    allowed = record.thumbnailPresent
                }
                if !allowed { report.violations.append("orphan file \(path) (asset \(id) is \(record.availability))") }
            }
        }
        return report
    }

    private func referenceBytes(for record: AssetRecord) throws -> Data? {
        switch reference {
        case .versions(let bucket):
            return bucket.version(etag: record.etag)
        case .versionsOf(let bodies):
            return bodies[record.key]
                ?? bodies.values.first {
                    ReliabilityBucket.md5($0) == record.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
        case .server(let bucket):
            guard let data = try bucket.current(record.key) else { return nil }
            return ReliabilityBucket.md5(data) == record.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                ? data : nil
        }
    }
}
