import Foundation
import NIOCore
import NIOHTTP1

/// The admin endpoint, answered only when the server runs with `faultsEnabled`:
///
/// - `POST /_fake-s3/faults` with a JSON ``FaultRuleDocument`` adds a rule (answers `{"id": "…"}`);
/// - `GET /_fake-s3/faults` lists the rules; `DELETE /_fake-s3/faults` removes them all,
///   `DELETE /_fake-s3/faults/<id>` one;
/// - `GET /_fake-s3/log` returns the request log as JSON; `DELETE /_fake-s3/log` clears it.
///
/// Admin requests need no signature and are not logged.
struct AdminEndpoint {
    static let prefix = "/_fake-s3/"
    let core: ServerCore

    static func handles(_ request: S3Request) -> Bool { request.path.hasPrefix(prefix) }

    func handle(_ request: S3Request, body: ByteBuffer?) -> S3Response {
        let parts = request.path.dropFirst(Self.prefix.count).split(separator: "/").map(String.init)
        switch (request.method, parts.first ?? "", parts.count) {
        case ("POST", "faults", 1):
            let data = body.map { Data($0.readableBytesView) } ?? Data()
            do {
                let document = try JSONDecoder().decode(FaultRuleDocument.self, from: data)
                let rule = try document.rule()
                core.faults.add(rule)
                return json(["id": rule.id.uuidString])
            } catch {
                return json(["error": "Invalid fault rule: \(error)"], status: .badRequest)
            }
        case ("GET", "faults", 1):
            return json(core.faults.all.map(FaultRuleDocument.init))
        case ("DELETE", "faults", 1):
            core.faults.removeAll()
            return S3Response(status: .noContent)
        case ("DELETE", "faults", 2):
            guard let id = UUID(uuidString: parts[1]) else {
                return json(["error": "Not a rule id"], status: .badRequest)
            }
            core.faults.remove(id)
            return S3Response(status: .noContent)
        case ("GET", "log", 1):
            return json(core.log.entries().map(RequestLogDocument.init))
        case ("DELETE", "log", 1):
            core.log.clear()
            return S3Response(status: .noContent)
        default:
            return json(["error": "Unknown admin request \(request.method) \(request.path)"], status: .notFound)
        }
    }

    private func json<T: Encodable>(_ value: T, status: HTTPResponseStatus = .ok) -> S3Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        return S3Response(status: status, headers: headers, body: .buffer(ByteBuffer(bytes: data)))
    }
}

/// The JSON form of a ``FaultRule`` for the admin endpoint, e.g.
/// `{"keyPattern": "originals/*", "method": "GET", "afterRequests": 1, "times": 1,
///   "fault": {"type": "resetAfter", "bytes": 1000}}`.
///
/// Fault types and their fields: `latency` (milliseconds), `bandwidthLimit` (bytesPerSecond),
/// `stallAfter` (bytes), `resetAfter` (bytes), `internalError`, `slowDown` (retryAfterSeconds, optional),
/// `truncateBody` (bytes), `flipByte` (offset), `replaceObject` (base64), `fullBodyInsteadOfPartial`,
/// `deleteObject`, `dropResponse`.
struct FaultRuleDocument: Codable {
    struct FaultDocument: Codable {
        var type: String
        var milliseconds: Int?
        var bytesPerSecond: Int?
        var bytes: Int?
        var retryAfterSeconds: Int?
        var offset: Int?
        var base64: String?
    }

    var id: String?
    var keyPattern: String?
    var method: String?
    var afterRequests: Int?
    var times: Int?
    var fault: FaultDocument

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    func rule() throws -> FaultRule {
        func need(_ value: Int?, _ name: String) throws -> Int {
            guard let value, value >= 0 else { throw Invalid(description: "\(fault.type) needs a '\(name)' ≥ 0") }
            return value
        }
        let f: Fault
        switch fault.type {
        case "latency": f = .latency(milliseconds: try need(fault.milliseconds, "milliseconds"))
        case "bandwidthLimit":
            f = .bandwidthLimit(bytesPerSecond: max(1, try need(fault.bytesPerSecond, "bytesPerSecond")))
        case "stallAfter": f = .stallAfter(bytes: try need(fault.bytes, "bytes"))
        case "resetAfter": f = .resetAfter(bytes: try need(fault.bytes, "bytes"))
        case "internalError": f = .internalError
        case "slowDown": f = .slowDown(retryAfterSeconds: fault.retryAfterSeconds)
        case "truncateBody": f = .truncateBody(afterBytes: try need(fault.bytes, "bytes"))
        case "flipByte": f = .flipByte(atOffset: try need(fault.offset, "offset"))
        case "replaceObject":
            guard let b = fault.base64, let data = Data(base64Encoded: b) else {
                throw Invalid(description: "replaceObject needs 'base64' data")
            }
            f = .replaceObject(with: data)
        case "fullBodyInsteadOfPartial": f = .fullBodyInsteadOfPartial
        case "deleteObject": f = .deleteObject
        case "dropResponse": f = .dropResponse
        default: throw Invalid(description: "unknown fault type '\(fault.type)'")
        }
        if let times, times < 0 { throw Invalid(description: "'times' must be ≥ 0") }
        return FaultRule(
            keyPattern: keyPattern ?? "*", method: method, afterRequests: max(0, afterRequests ?? 0), times: times,
            fault: f)
    }

    init(_ rule: FaultRule) {
        id = rule.id.uuidString
        keyPattern = rule.keyPattern
        method = rule.method
        afterRequests = rule.afterRequests
        times = rule.times
        var d = FaultDocument(type: "")
        switch rule.fault {
        case .latency(let ms): (d.type, d.milliseconds) = ("latency", ms)
        case .bandwidthLimit(let bps): (d.type, d.bytesPerSecond) = ("bandwidthLimit", bps)
        case .stallAfter(let n): (d.type, d.bytes) = ("stallAfter", n)
        case .holdAfter(let n, _): (d.type, d.bytes) = ("holdAfter", n)
        case .resetAfter(let n): (d.type, d.bytes) = ("resetAfter", n)
        case .internalError: d.type = "internalError"
        case .slowDown(let s): (d.type, d.retryAfterSeconds) = ("slowDown", s)
        case .truncateBody(let n): (d.type, d.bytes) = ("truncateBody", n)
        case .flipByte(let o): (d.type, d.offset) = ("flipByte", o)
        case .replaceObject(let data): (d.type, d.base64) = ("replaceObject", data.base64EncodedString())
        case .fullBodyInsteadOfPartial: d.type = "fullBodyInsteadOfPartial"
        case .deleteObject: d.type = "deleteObject"
        case .dropResponse: d.type = "dropResponse"
        }
        fault = d
    }
}

/// The JSON form of a ``RequestLogEntry``.
struct RequestLogDocument: Codable {
    var method: String
    var bucket: String?
    var key: String?
    var query: String
    var range: String?
    var ifMatch: String?
    var ifNoneMatch: String?
    var partNumber: Int?
    var uploadId: String?
    var status: Int
    var bytesSent: Int64
    var date: Date

    init(_ e: RequestLogEntry) {
        method = e.method
        bucket = e.bucket
        key = e.key
        query = e.query
        range = e.rangeHeader
        ifMatch = e.ifMatch
        ifNoneMatch = e.ifNoneMatch
        partNumber = e.partNumber
        uploadId = e.uploadId
        status = e.status
        bytesSent = e.bytesSent
        date = e.date
    }
}
