import Essentials
import Foundation

/// The conditional request headers (`If-Match`, `If-None-Match`, `If-Modified-Since`,
/// `If-Unmodified-Since`, `If-Range`) evaluated in S3's order.
enum Preconditions {
    /// Whether an `If-Match`/`If-None-Match` list (`*`, or comma-separated, possibly weak, ETags) matches.
    static func etagList(_ header: String, matches etag: String) -> Bool {
        let bare = strip(etag)
        for item in header.split(separator: ",") {
            let t = item.trimmingCharacters(in: .whitespaces)
            if t == "*" || strip(t) == bare { return true }
        }
        return false
    }

    private static func strip(_ tag: String) -> String {
        var t = Substring(tag)
        if t.hasPrefix("W/") { t = t.dropFirst(2) }
        if t.hasPrefix("\"") && t.hasSuffix("\"") && t.count >= 2 { t = t.dropFirst().dropLast() }
        return String(t)
    }

    /// Evaluates the preconditions of a GET or HEAD.
    /// - Throws: `PreconditionFailed` (412) or `NotModified` (304).
    static func check(_ request: S3Request, info: ObjectInfo) throws(S3Error) {
        let modified = info.lastModifiedSeconds
        if let ifMatch = request.header("if-match") {
            guard etagList(ifMatch, matches: info.etag) else { throw .preconditionFailed }
        } else if let value = request.header("if-unmodified-since"), let date = HTTPDate.parse(value),
            modified > date
        {
            throw .preconditionFailed
        }
        if let ifNoneMatch = request.header("if-none-match") {
            if etagList(ifNoneMatch, matches: info.etag) { throw notModified(info) }
        } else if let value = request.header("if-modified-since"), let date = HTTPDate.parse(value),
            modified <= date
        {
            throw notModified(info)
        }
    }

    private static func notModified(_ info: ObjectInfo) -> S3Error {
        var e = S3Error.notModified
        e.headers["ETag"] = info.etag
        e.headers["Last-Modified"] = HTTPDate.rfc1123(info.lastModified)
        return e
    }

    /// Whether a Range should be honoured given `If-Range` (true when there is no `If-Range`).
    static func rangeApplies(_ request: S3Request, info: ObjectInfo) -> Bool {
        guard let ifRange = request.header("if-range")?.trimmingCharacters(in: .whitespaces) else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            return !ifRange.hasPrefix("W/") && strip(ifRange) == strip(info.etag)
        }
        guard let date = HTTPDate.parse(ifRange) else { return false }
        return info.lastModifiedSeconds <= date
    }
}
