package import Foundation

/// One HTTP request as the engine sends it.
///
/// The engine adds no headers of its own except what libcurl needs (`Host`); in particular it never sends
/// `Accept-Encoding`, so a body arrives exactly as stored (lengths and hashes stay meaningful).
package struct HTTPRequest: Sendable {
    /// Upper-case method (`GET`, `HEAD`, `PUT`, `POST`, `DELETE`).
    package var method: String
    /// The absolute URL, already percent-encoded.
    package var url: String
    /// Headers to send, in order.
    package var headers: [(name: String, value: String)]
    /// The request body, if any (sent with a `Content-Length`).
    package var body: Data?
    /// A request body read from a file as it is sent, instead of ``body`` (which takes precedence): nothing of it
    /// is held in memory.
    package var bodyFile: HTTPFileBody?
    /// Overrides the engine's stall limit for this request: the transfer fails with a timeout
    /// (``HTTPTransportError/isTimeout``) when fewer than the engine's low-speed limit of bytes per second
    /// arrive for this many seconds (rounded up to whole seconds).
    package var stallTimeout: TimeInterval?
    /// The headers of a successful (2xx) response worth keeping; nil keeps all. Error responses keep all.
    var successHeaders: HTTPHeaderFilter?

    /// - Parameters:
    ///   - method: Upper-case method.
    ///   - url: The absolute, encoded URL.
    ///   - headers: Headers to send.
    ///   - body: The body, if any.
    package init(method: String, url: String, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A request body that is a range of an open file, read (`pread`) on the engine thread as libcurl sends it, and
/// read again from its start if the request is sent again. The descriptor is not closed by the engine and must
/// stay open until the transfer has completed; reads are meant to hit the page cache (a file read just before),
/// as a slow read holds up every transfer of the engine. A read that fails or finds the file shorter aborts the
/// transfer (a ``HTTPTransportError``).
package struct HTTPFileBody: Sendable, Hashable {
    /// An open, readable descriptor.
    package var descriptor: Int32
    /// Where the body starts in the file.
    package var offset: Int64
    /// The body's length in bytes.
    package var count: Int64

    /// - Parameters:
    ///   - descriptor: An open, readable descriptor.
    ///   - offset: Where the body starts.
    ///   - count: Its length.
    package init(descriptor: Int32, offset: Int64, count: Int64) {
        self.descriptor = descriptor
        self.offset = offset
        self.count = count
    }
}

/// The status line and headers of a response.
package struct HTTPResponseHead: Sendable, Hashable {
    /// The HTTP status code.
    package var status: Int
    /// Headers with lower-cased names; repeated headers are joined with `", "`.
    package var headers: [String: String]

    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Lower-cased header names and values.
    package init(status: Int, headers: [String: String]) {
        self.status = status
        self.headers = headers
    }

    /// The value of a header, by case-insensitive name.
    package subscript(name: String) -> String? {
        // Names in this package are written in lower case already: no new string to look them up.
        headers[name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? name.lowercased() : name]
    }
}

/// What a body handler tells the engine after receiving bytes.
package enum HTTPBodyDisposition: Sendable {
    /// The bytes were consumed; keep going.
    case consumed
    /// Nothing was consumed; libcurl keeps the bytes and the transfer stays paused until
    /// ``HTTPEngine/resume(_:)`` is called, which delivers the same bytes again.
    case pause
    /// Stop the transfer; it completes with ``HTTPTransportError/aborted``.
    case abort
}

/// A transport-level failure (no HTTP status, or the body was cut off).
package struct HTTPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libcurl's `CURLcode` (0 never appears here).
    package var curlCode: Int
    /// libcurl's explanation.
    package var message: String

    /// - Parameters:
    ///   - curlCode: The `CURLcode`.
    ///   - message: The explanation.
    package init(curlCode: Int, message: String) {
        self.curlCode = curlCode
        self.message = message
    }

    /// Not a libcurl code: the engine's own, for a server that accepted the connection and the request but sent
    /// no answer within ``HTTPEngineConfiguration/firstAnswerTimeout`` (reported as a timeout).
    package static let noAnswerCode = 1028

    /// The transfer was cancelled through ``HTTPEngine/cancel(_:)``.
    package static let cancelled = HTTPTransportError(curlCode: -1, message: "cancelled")
    /// A handler returned ``HTTPBodyDisposition/abort`` or refused the head.
    package static let aborted = HTTPTransportError(curlCode: 23, message: "aborted by the response handler")

    /// True for a cancellation through the engine.
    package var isCancellation: Bool { curlCode == -1 }
    /// True when libcurl gave up because the link stalled (below the low-speed limit) or timed out.
    package var isTimeout: Bool { curlCode == 28 }

    package var description: String { "curl error \(curlCode): \(message)" }
}

/// Receives one transfer's response. Called only on the engine thread, in this order: ``didReceiveHead(_:)``
/// once (before any body byte), ``didReceiveBody(_:)`` zero or more times, then ``didComplete(_:)`` exactly
/// once (also after a cancellation or a failure before any head arrived).
///
/// Implementations must return quickly: every transfer shares the one engine thread.
package protocol HTTPResponseHandler: AnyObject, Sendable {
    /// The final (non-1xx) response head. Return false to abort the transfer.
    func didReceiveHead(_ head: HTTPResponseHead) -> Bool
    /// A run of body bytes, valid only during the call (no copy was made).
    func didReceiveBody(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition
    /// The end of the transfer: success (the whole body was delivered) or a transport error.
    func didComplete(_ result: Result<Void, HTTPTransportError>)
}

/// Header names (lower case) a caller reads from a response: the engine makes no strings for the rest.
struct HTTPHeaderFilter: Sendable {
    private let names: [[UInt8]]
    private let prefixes: [[UInt8]]

    /// - Parameters:
    ///   - names: Whole names, lower case.
    ///   - prefixes: Name prefixes, lower case (`x-amz-checksum-`).
    init(names: [String], prefixes: [String] = []) {
        self.names = names.map { Array($0.utf8) }
        self.prefixes = prefixes.map { Array($0.utf8) }
    }

    /// Whether a field name (any case, as received) is kept.
    func keeps(_ name: UnsafeRawBufferPointer) -> Bool {
        names.contains { $0.count == name.count && Self.matches($0, name) }
            || prefixes.contains { $0.count <= name.count && Self.matches($0, name) }
    }

    /// Whether `name` starts with `lower`, ignoring ASCII case.
    private static func matches(_ lower: [UInt8], _ name: UnsafeRawBufferPointer) -> Bool {
        for i in 0..<lower.count {
            let byte = name[i]
            if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != lower[i] { return false }
        }
        return true
    }
}
