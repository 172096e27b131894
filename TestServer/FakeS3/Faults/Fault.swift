import Essentials
import Foundation

/// A misbehaviour the server shows on purpose, for testing a client's error handling.
public enum Fault: Sendable, Hashable {
    /// Waits this long before answering.
    case latency(milliseconds: Int)
    /// Sends the response body no faster than this.
    case bandwidthLimit(bytesPerSecond: Int)
    /// Sends this many body bytes, then nothing more; the connection stays open until the client
    /// closes it or the server stops.
    case stallAfter(bytes: Int)
    /// Sends this many body bytes, then holds the rest until the gate opens (``FaultGate/open()``); the
    /// connection stays open meanwhile. For a test that needs a transfer under way, at a known point, for as long
    /// as it takes to arrange something (not expressible through the admin endpoint). A document answer (a
    /// listing page) is held the same way.
    case holdAfter(bytes: Int, gate: FaultGate)
    /// Sends this many body bytes, then resets the connection (TCP RST). On a request that uploads object data
    /// (PutObject, UploadPart) it cuts the upload instead: once this many bytes of it have arrived, the
    /// connection is reset and nothing of the request is kept or answered. On a CompleteMultipartUpload it cuts
    /// the result document (the object is stored).
    case resetAfter(bytes: Int)
    /// Answers 500 `InternalError`.
    case internalError
    /// Answers 503 `SlowDown`, with a `Retry-After` header when a value is given.
    case slowDown(retryAfterSeconds: Int?)
    /// Announces the correct Content-Length, sends this many body bytes, then closes the connection. On a request
    /// that uploads object data (PutObject, UploadPart) it closes the connection once this many bytes of the
    /// upload have arrived (nothing is kept or answered); on a CompleteMultipartUpload it cuts the result document
    /// (the object is stored).
    case truncateBody(afterBytes: Int)
    /// Inverts the byte at this offset of the object (when the response carries that offset).
    case flipByte(atOffset: Int)
    /// Replaces the object with these bytes (new ETag, new Last-Modified) before serving the request.
    case replaceObject(with: Data)
    /// Ignores the Range header: answers 200 with the whole object.
    case fullBodyInsteadOfPartial
    /// Deletes the object before serving the request.
    case deleteObject
    /// Serves the request (a write is stored), then closes the connection without answering: the client never
    /// learns the outcome, as when an answer is lost on the way.
    case dropResponse
}

/// What a ``Fault/holdAfter(bytes:gate:)`` body waits for: closed until ``open()``, then open for good.
public final class FaultGate: Sendable, Hashable {
    private let state = LockedBox((isOpen: false, waiters: [@Sendable () -> Void]()))

    public init() {}

    /// Lets every held body go on (and any body that reaches the gate later pass it).
    public func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Calls `body` once the gate is open: at once when it is, else from the thread that opens it.
    func whenOpen(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if !state.isOpen { state.waiters.append(body) }
            return state.isOpen
        }
        if now { body() }
    }

    public static func == (lhs: FaultGate, rhs: FaultGate) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Chooses requests to misbehave on and the fault to show.
///
/// A rule matches a request when its method matches (or ``method`` is nil) and the object key matches
/// ``keyPattern``. Of the matching requests it skips the first ``afterRequests``, then fires on the
/// next ``times`` (every one when nil).
public struct FaultRule: Sendable, Hashable, Identifiable {
    /// Identifies the rule for ``FaultInjector/remove(_:)``.
    public let id: UUID
    /// A glob matched against the whole object key: `*` matches any run of characters (including `/`),
    /// `?` one character. Requests without a key (bucket operations) are matched as the empty key.
    public var keyPattern: String
    /// The HTTP method (`GET`, `PUT`, …), or nil for any.
    public var method: String?
    /// Matching requests to let through before the rule first fires (`2` targets the third request).
    public var afterRequests: Int
    /// How many times the rule fires; nil means every matching request from then on.
    public var times: Int?
    /// What happens when it fires.
    public var fault: Fault

    /// - Parameters:
    ///   - keyPattern: Glob over the object key (`*` for everything).
    ///   - method: HTTP method, or nil for any.
    ///   - afterRequests: Matching requests to skip first.
    ///   - times: How many times to fire; nil for always.
    ///   - fault: The fault to show.
    public init(
        keyPattern: String = "*", method: String? = nil, afterRequests: Int = 0, times: Int? = nil, fault: Fault
    ) {
        self.id = UUID()
        self.keyPattern = keyPattern
        self.method = method?.uppercased()
        self.afterRequests = afterRequests
        self.times = times
        self.fault = fault
    }

    func matches(method: String, key: String) -> Bool {
        if let m = self.method, m != method { return false }
        return Glob.matches(pattern: Array(keyPattern.utf8), text: Array(key.utf8))
    }
}

/// `*` and `?` globbing over UTF-8 bytes.
enum Glob {
    static func matches(pattern: [UInt8], text: [UInt8]) -> Bool {
        var p = 0
        var t = 0
        var star: Int?
        var mark = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t]) {
                p += 1
                t += 1
            } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                star = p
                mark = t
                p += 1
            } else if let s = star {
                p = s + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
