import CCurl
package import Essentials
package import Foundation

/// Identifies one transfer started on an ``HTTPEngine``.
package struct HTTPTransferID: Sendable, Hashable {
    let rawValue: UInt64
}

/// An HTTP client on libcurl's multi interface, driven by one dedicated thread.
///
/// All transfers share that thread and libcurl's connection cache (keep-alive, HTTP/2 multiplexing where
/// a TLS server offers it). ``start(_:handler:)``, ``cancel(_:)``, ``pause(_:)`` and ``resume(_:)`` may be
/// called from any thread: they enqueue a command under a lock and, when the engine thread waits, wake it
/// (`curl_multi_wakeup`); it applies commands in the order they were made. Handlers are called only on
/// the engine thread. A cancelled transfer's handler gets ``HTTPResponseHandler/didComplete(_:)`` with
/// ``HTTPTransportError/cancelled`` after libcurl has let go of it, and is never called again.
///
/// The engine thread stops when the engine is released; transfers still running then complete as cancelled.
package final class HTTPEngine: Sendable {
    /// The settings the engine was made with.
    package let configuration: HTTPEngineConfiguration
    private let core: HTTPEngineCore

    private static let globalInit: Bool = {
        curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()

    /// Starts the engine thread.
    /// - Parameter configuration: Connection limits, timeouts and TLS settings.
    package init(configuration: HTTPEngineConfiguration = HTTPEngineConfiguration()) {
        _ = Self.globalInit
        self.configuration = configuration
        core = HTTPEngineCore(configuration: configuration)
        let core = self.core
        let entry = OpenResources.opened("HTTP engine thread")
        let thread = Thread {
            core.run()
            OpenResources.closed(entry)
        }
        thread.name = "HTTPEngine"
        thread.start()
    }

    deinit { core.stop() }

    /// Starts a transfer.
    /// - Parameters:
    ///   - request: What to send.
    ///   - handler: Receives the response on the engine thread; retained until it has been told the end.
    /// - Returns: The id to cancel, pause or resume the transfer with.
    @discardableResult
    package func start(_ request: HTTPRequest, handler: any HTTPResponseHandler) -> HTTPTransferID {
        let id = makeTransferID()
        start(request, handler: handler, id: id)
        return id
    }

    /// Reserves an id for ``start(_:handler:id:)``, so a handler can know its transfer's id before the
    /// first callback can run.
    package func makeTransferID() -> HTTPTransferID { HTTPTransferID(rawValue: core.nextID()) }

    /// Starts a transfer under an id from ``makeTransferID()`` (use each id once).
    /// - Parameters:
    ///   - request: What to send.
    ///   - handler: Receives the response on the engine thread.
    ///   - id: The reserved id.
    package func start(_ request: HTTPRequest, handler: any HTTPResponseHandler, id: HTTPTransferID) {
        core.enqueue(.add(HTTPTransferBox(id: id.rawValue, request: request, handler: handler)))
    }

    /// Starts several transfers under ids from ``makeTransferID()``: one command and at most one wakeup of the
    /// engine thread for all of them (libcurl holds those beyond the connection limits until a connection frees).
    /// - Parameter transfers: Each request, its handler and its reserved id, started in this order.
    package func start(_ transfers: [(request: HTTPRequest, handler: any HTTPResponseHandler, id: HTTPTransferID)]) {
        core.enqueue(
            transfers.map { .add(HTTPTransferBox(id: $0.id.rawValue, request: $0.request, handler: $0.handler)) })
    }

    /// Cancels a transfer; its handler then completes with ``HTTPTransportError/cancelled`` (unless it had
    /// already completed). Safe from any thread, also for a finished or unknown transfer.
    package func cancel(_ id: HTTPTransferID) { core.enqueue(.cancel(id.rawValue)) }

    /// Stops receiving on a transfer until ``resume(_:)``.
    package func pause(_ id: HTTPTransferID) { core.enqueue(.pause(id.rawValue)) }

    /// Continues a transfer paused by ``pause(_:)`` or by a handler returning ``HTTPBodyDisposition/pause``.
    package func resume(_ id: HTTPTransferID) { core.enqueue(.resume(id.rawValue)) }

    /// Sends a request and collects the whole response body in memory. Meant for small responses
    /// (listings, errors, thumbnails). Cancelling the task cancels the transfer.
    /// - Parameters:
    ///   - request: What to send.
    ///   - bodyLimit: The most body bytes kept: a longer body aborts the transfer (``HTTPTransportError/aborted``).
    /// - Returns: The response head and body.
    /// - Throws: ``HTTPTransportError`` when no complete response arrived.
    package func data(for request: HTTPRequest, bodyLimit: Int = .max) async throws(HTTPTransportError)
        -> (HTTPResponseHead, Data)
    {
        let collector = HTTPDataCollector(bodyLimit: bodyLimit)
        let result: Result<(HTTPResponseHead, Data), HTTPTransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                collector.onComplete = { continuation.resume(returning: $0) }
                let id = start(request, handler: collector)
                collector.setTransfer(id, engine: self)
            }
        } onCancel: {
            collector.cancel()
        }
        return try result.get()
    }

    /// Sends several requests at once and collects each whole response in memory (meant for small responses:
    /// HEADs, errors): one hop to the engine thread and one back for all of them, where ``data(for:bodyLimit:)``
    /// makes two per request. Each request is sent once (no retry here); the results are in the order of
    /// `requests`. Cancelling the task cancels the transfers still running (they end with
    /// ``HTTPTransportError/cancelled``).
    /// - Parameters:
    ///   - requests: What to send.
    ///   - bodyLimit: The most body bytes kept per response: a longer body aborts that transfer.
    /// - Returns: Each request's response head and body, or the transport error that ended it.
    package func responses(for requests: [HTTPRequest], bodyLimit: Int = .max) async
        -> [Result<(HTTPResponseHead, Data), HTTPTransportError>]
    {
        guard !requests.isEmpty else { return [] }
        let batch = HTTPBatchCollector(count: requests.count)
        let members = requests.indices.map { index in
            let member = HTTPDataCollector(bodyLimit: bodyLimit)
            member.onComplete = { batch.complete(index, $0) }
            return member
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                batch.onComplete = { continuation.resume(returning: $0) }
                let ids = requests.map { _ in makeTransferID() }
                start(zip(requests, zip(members, ids)).map { ($0, $1.0, $1.1) })
                for (member, id) in zip(members, ids) { member.setTransfer(id, engine: self) }
            }
        } onCancel: {
            for member in members { member.cancel() }
        }
    }
}

/// Gathers the responses of ``HTTPEngine/responses(for:bodyLimit:)`` and hands them over when the last one is in.
// @unchecked: `results`, `remaining` and `onComplete` are touched only on the engine thread (every member's
// completion runs there), after `onComplete` was set before the transfers started.
final class HTTPBatchCollector: @unchecked Sendable {
    private var results: [Result<(HTTPResponseHead, Data), HTTPTransportError>]
    private var remaining: Int
    var onComplete: (([Result<(HTTPResponseHead, Data), HTTPTransportError>]) -> Void)?

    init(count: Int) {
        results = Array(repeating: .failure(.cancelled), count: count)
        remaining = count
    }

    func complete(_ index: Int, _ result: Result<(HTTPResponseHead, Data), HTTPTransportError>) {
        ThreadRole.httpEngine.assertCurrent()
        results[index] = result
        remaining -= 1
        if remaining == 0 {
            let callback = onComplete
            onComplete = nil
            callback?(results)
        }
    }
}

/// Commands from other threads to the engine thread.
enum HTTPEngineCommand {
    case add(HTTPTransferBox)
    case cancel(UInt64)
    case pause(UInt64)
    case resume(UInt64)
}

/// The engine thread's state. `active` and the multi handle are touched only on that thread.
// @unchecked: the multi handle and `active` are engine-thread only (checked by `ThreadRole.httpEngine` in debug
// builds); everything other threads touch is in `pending`, a LockedBox.
final class HTTPEngineCore: @unchecked Sendable {
    /// Commands for the engine thread, and whether it waits in `curl_multi_poll` for them.
    struct Pending {
        var commands: [HTTPEngineCommand] = []
        var stopping = false
        var nextID: UInt64 = 1
        /// The engine thread found no command and is about to wait (or waits) in `curl_multi_poll`.
        var asleep = false
        /// A wakeup was sent since it fell asleep: further commands need none (one wakes it).
        var wakeupSent = false
    }

    private let multi: UnsafeMutableRawPointer
    private let configuration: HTTPEngineConfiguration
    private let pending = LockedBox(Pending())
    private var active: [UInt64: HTTPTransferBox] = [:]
    /// Handles of completed transfers, reset and kept for the next ones: a handle keeps its receive buffer
    /// (``HTTPEngineConfiguration/receiveBufferSize``), which would otherwise be allocated and freed per request.
    /// Freed once the engine has had nothing to do for a second, so an idle engine holds no buffers.
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var lastBusy = DispatchTime.now().uptimeNanoseconds
    private var lastAnswerCheck: UInt64 = 0
    /// Scratch for ``collectFinished()``, kept between passes.
    private var finished: [(UInt64, Result<Void, HTTPTransportError>)] = []
    private let md5Batch = MD5Batch()

    init(configuration: HTTPEngineConfiguration) {
        self.configuration = configuration
        multi = curl_multi_init()
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(configuration.maxTotalConnections, 4))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, 2)  // CURLPIPE_MULTIPLEX
    }

    func nextID() -> UInt64 {
        pending.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    func enqueue(_ command: HTTPEngineCommand) { enqueue(CollectionOfOne(command)) }

    func enqueue(_ commands: some Collection<HTTPEngineCommand>) {
        let (accepted, wake) = pending.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.commands.append(contentsOf: commands)
            // A running engine takes the command before it next waits; a waiting one needs one wakeup, however
            // many commands arrive (each wakeup is a syscall here and a pass over every transfer there).
            let wake = state.asleep && !state.wakeupSent
            if wake { state.wakeupSent = true }
            return (true, wake)
        }
        if wake {
            curl_multi_wakeup(multi)
        } else if !accepted {
            for case .add(let box) in commands { box.complete(.failure(.cancelled)) }
        }
    }

    func stop() {
        pending.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    func run() {
        ThreadRole.httpEngine.adopt()
        var running: Int32 = 0
        while true {
            let (commands, stopping) = pending.withLock { state in
                defer {
                    state.commands = []
                    state.asleep = false
                    state.wakeupSent = false
                }
                return (state.commands, state.stopping)
            }
            for command in commands { apply(command) }
            if stopping { break }
            curl_multi_perform(multi, &running)
            collectFinished()
            let now = DispatchTime.now().uptimeNanoseconds
            if now - lastAnswerCheck >= 250_000_000 {
                lastAnswerCheck = now
                failUnanswered()
            }
            if !active.isEmpty {
                lastBusy = now
            } else if !idleHandles.isEmpty, now - lastBusy > 1_000_000_000 {
                freeIdleHandles()
            }
            // Asleep only with no command waiting: one that came during this pass is taken at once instead.
            let sleep = pending.withLock { state -> Bool in
                guard state.commands.isEmpty, !state.stopping else { return false }
                state.asleep = true
                return true
            }
            if sleep { curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
        for id in Array(active.keys) { finish(id, .failure(.cancelled)) }
        freeIdleHandles()
        curl_multi_cleanup(multi)
    }

    /// Fails, as a timeout (``HTTPTransportError/noAnswerCode``), every request without a body whose whole request went out more
    /// than ``HTTPEngineConfiguration/firstAnswerTimeout`` ago with not one byte of answer: a server that
    /// accepts connections and never answers is reported in seconds, not after the stall timeout of each retry.
    /// (A request still waiting for a connection, or still sending a body, is not timed here.)
    private func failUnanswered() {
        let limit = configuration.firstAnswerTimeout
        guard limit > 0 else { return }
        var unanswered: [UInt64] = []
        let now = DispatchTime.now().uptimeNanoseconds
        for (id, box) in active where box.request.body == nil && box.request.bodyFile == nil && box.status == 0 {
            guard let easy = box.easy else { continue }
            guard let sent = box.requestSentAt else {
                var started: curl_off_t = 0
                _ = ccurl_easy_getinfo_off_t(easy, CURLINFO_PRETRANSFER_TIME_T, &started)
                if started > 0 { box.requestSentAt = now }
                continue
            }
            if Double(now - sent) / 1e9 > limit { unanswered.append(id) }
        }
        for id in unanswered {
            finish(
                id,
                .failure(
                    HTTPTransportError(
                        curlCode: HTTPTransportError.noAnswerCode,
                        message: "the server accepted the connection but sent no answer within "
                            + "\(Int(limit)) s")))
        }
    }

    private func freeIdleHandles() {
        for easy in idleHandles { curl_easy_cleanup(easy) }
        idleHandles = []
    }

    private func apply(_ command: HTTPEngineCommand) {
        ThreadRole.httpEngine.assertCurrent()
        switch command {
        case .add(let box):
            if configure(box) {
                active[box.id] = box
                curl_multi_add_handle(multi, box.easy)
            }
        case .cancel(let id):
            finish(id, .failure(.cancelled))
        case .pause(let id):
            if let easy = active[id]?.easy { _ = ccurl_easy_pause_receive(easy) }
        case .resume(let id):
            if let easy = active[id]?.easy { _ = ccurl_easy_continue(easy) }
        }
    }

    /// Every transfer libcurl finished in this pass: first the work they share (``MD5Batch``), then each
    /// handler's end.
    private func collectFinished() {
        ThreadRole.httpEngine.assertCurrent()
        var easy: UnsafeMutableRawPointer?
        var code = CURLE_OK
        while ccurl_multi_next_done(multi, &easy, &code) != 0 {
            guard let easy else { continue }
            var raw: UnsafeMutableRawPointer?
            _ = ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &raw)
            guard let raw else { continue }
            let box = Unmanaged<HTTPTransferBox>.fromOpaque(raw).takeUnretainedValue()
            if code == CURLE_OK {
                box.batching?.addBatchedWork(to: md5Batch)
                finished.append((box.id, .success(())))
            } else if box.handlerAborted {
                finished.append((box.id, .failure(.aborted)))
            } else {
                let message = box.errorDetail ?? String(cString: curl_easy_strerror(code))
                finished.append((box.id, .failure(HTTPTransportError(curlCode: Int(code.rawValue), message: message))))
            }
        }
        guard !finished.isEmpty else { return }
        md5Batch.run()
        for (id, result) in finished { finish(id, result) }
        finished.removeAll(keepingCapacity: true)
    }

    /// Removes the handle from libcurl, then tells the handler, then frees the handle and the box.
    private func finish(_ id: UInt64, _ result: Result<Void, HTTPTransportError>) {
        guard let box = active.removeValue(forKey: id), let easy = box.easy else { return }
        curl_multi_remove_handle(multi, easy)
        box.complete(result)
        // Only a handle whose transfer ran to its end is reused: one cancelled or aborted mid-body may still
        // hold a pause or buffered bytes that a reset is not documented to clear.
        if case .success = result, idleHandles.count < configuration.maxTotalConnections {
            curl_easy_reset(easy)
            idleHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
        box.easy = nil
        if let list = box.headerList { curl_slist_free_all(list) }
        box.headerList = nil
        Unmanaged.passUnretained(box).release()
    }

    /// Request bodies of at least this many bytes are read into a larger upload buffer.
    static let largeUpload: Int64 = 1 << 20
    /// libcurl's upload buffer for a large body (`CURLOPT_UPLOAD_BUFFERSIZE`).
    static let largeUploadBuffer = 512 * 1024

    /// Creates and configures the easy handle; on failure completes the box at once.
    private func configure(_ box: HTTPTransferBox) -> Bool {
        ThreadRole.httpEngine.assertCurrent()
        guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
            box.complete(.failure(HTTPTransportError(curlCode: 2, message: "curl_easy_init failed")))
            return false
        }
        let request = box.request
        let me = Unmanaged.passRetained(box).toOpaque()
        box.easy = easy
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, me)
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, box.errorBuffer)
        _ = ccurl_easy_setopt_string(easy, CURLOPT_URL, request.url)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        // Keys are sent exactly as listed: `a/./b` and `a/../b` are distinct, valid S3 keys, and the signature
        // covers the path as written.
        _ = ccurl_easy_setopt_long(easy, CURLOPT_PATH_AS_IS, 1)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, ccurl_http_version_2tls())
        _ = ccurl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_TCP_NODELAY, 1)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, configuration.receiveBufferSize)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout * 1000))
        let stall = request.stallTimeout ?? configuration.stallTimeout
        _ = ccurl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, configuration.lowSpeedLimit)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(stall.rounded(.up))))
        _ = ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, configuration.verifyTLS ? 1 : 0)
        _ = ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, configuration.verifyTLS ? 2 : 0)
        if let ca = configuration.caBundlePath { _ = ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, ca) }
        _ = ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, httpWriteCallback)
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = ccurl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, httpHeaderCallback)
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me)

        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers {
            list = curl_slist_append(list, "\(header.name): \(header.value)")
        }
        list = curl_slist_append(list, "Expect:")  // no 100-continue round trip
        box.headerList = list
        _ = ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list)

        switch request.method {
        case "GET": break
        case "HEAD": _ = ccurl_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        default: _ = ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let length = request.body.map({ Int64($0.count) }) ?? request.bodyFile?.count {
            _ = ccurl_easy_setopt_data_callback(easy, CURLOPT_READFUNCTION, httpReadCallback)
            _ = ccurl_easy_setopt_pointer(easy, CURLOPT_READDATA, me)
            if length >= Self.largeUpload {
                // Fewer, larger reads and socket writes for a large body (libcurl's default is 64 KiB).
                _ = ccurl_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, Self.largeUploadBuffer)
            }
            if request.method == "PUT" {
                _ = ccurl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1)
                _ = ccurl_easy_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
            } else {
                _ = ccurl_easy_setopt_long(easy, CURLOPT_POST, 1)
                _ = ccurl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(length))
            }
        }
        return true
    }
}

extension ThreadRole {
    /// The thread of an ``HTTPEngine``: libcurl's multi handle, every transfer's state and every
    /// ``HTTPResponseHandler`` callback live there.
    package static let httpEngine = ThreadRole("HTTP engine")
}
