import CCurl
import Foundation

/// One transfer's state while libcurl owns its easy handle. Touched only on the engine thread (the C
/// callbacks run there too); kept alive by an unmanaged retain from the moment the handle is configured
/// until `curl_multi_remove_handle` has returned, so a callback can never reach freed memory.
// @unchecked: touched on the engine thread only, as said above (checked by `ThreadRole.httpEngine` in debug
// builds).
final class HTTPTransferBox: @unchecked Sendable {
    let id: UInt64
    let handler: any HTTPResponseHandler
    /// The handler, when it has work for the engine's per-pass batch (looked up once per transfer).
    let batching: (any HTTPBatchedCompletion)?
    private(set) var request: HTTPRequest
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var uploadOffset = 0
    var status = 0
    /// Sized for a typical S3 response head, so that it is not grown field by field.
    var headers = [String: String](minimumCapacity: 16)
    var headDelivered = false
    /// When the engine first saw the whole request sent (uptime nanoseconds; engine thread only).
    var requestSentAt: UInt64?
    var handlerAborted = false
    var completed = false
    /// libcurl's explanation of a failure (`CURLOPT_ERRORBUFFER`): names the host, the port or the certificate
    /// problem where `curl_easy_strerror` only names the kind of error.
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(id: UInt64, request: HTTPRequest, handler: any HTTPResponseHandler) {
        self.id = id
        self.request = request
        self.handler = handler
        batching = handler as? any HTTPBatchedCompletion
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit { errorBuffer.deallocate() }

    /// What libcurl wrote in ``errorBuffer``; nil when it wrote nothing.
    var errorDetail: String? {
        let text = String(cString: errorBuffer).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Parses one header line; delivers the head at the blank line that ends a final (non-1xx) response.
    /// Returns false when the handler refused the head.
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            guard status >= 200, !headDelivered else { return true }
            headDelivered = true
            if !handler.didReceiveHead(HTTPResponseHead(status: status, headers: headers)) {
                handlerAborted = true
                return false
            }
            return true
        }
        let bytes = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if bytes.starts(with: "HTTP/".utf8) {
            // A new response (after 100-continue or a redirect) starts over: `HTTP/1.1 200 OK`.
            status = Self.statusCode(bytes)
            headers = [String: String](minimumCapacity: 16)
            return true
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return true }
        if let filter = request.successHeaders, status >= 200, status < 300,
            !filter.keeps(UnsafeRawBufferPointer(rebasing: bytes[0..<colon]))
        {
            return true
        }
        // Field names are ASCII: lower-cased byte by byte into the new string; the value is trimmed in place.
        let name = String(unsafeUninitializedCapacity: colon) { buffer in
            for i in 0..<colon {
                let byte = bytes[i]
                buffer[i] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return colon
        }
        var start = colon + 1
        var stop = bytes.count
        while start < stop, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while stop > start, bytes[stop - 1] == 0x20 || bytes[stop - 1] == 0x09 { stop -= 1 }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<stop]), as: UTF8.self)
        if let existing = headers[name] {
            headers[name] = existing + ", " + value
        } else {
            headers[name] = value
        }
        return true
    }

    /// The status code of a status line (`HTTP/1.1 200 OK`, `HTTP/2 206`); 0 when there is none.
    static func statusCode(_ line: UnsafeRawBufferPointer) -> Int {
        guard var i = line.firstIndex(of: 0x20) else { return 0 }
        while i < line.count, line[i] == 0x20 { i += 1 }
        var code = 0
        var digits = 0
        while i < line.count, line[i] >= 0x30, line[i] <= 0x39, digits < 3 {
            code = code * 10 + Int(line[i] - 0x30)
            digits += 1
            i += 1
        }
        return digits == 3 && (i == line.count || line[i] == 0x20) ? code : 0
    }

    /// Delivers body bytes, first delivering the head if libcurl skipped the blank line callback.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if !headDelivered {
            headDelivered = true
            if !handler.didReceiveHead(HTTPResponseHead(status: status, headers: headers)) {
                handlerAborted = true
                return 0
            }
        }
        switch handler.didReceiveBody(bytes) {
        case .consumed: return bytes.count
        case .pause: return ccurl_writefunc_pause()
        case .abort:
            handlerAborted = true
            return 0
        }
    }

    /// Copies the next run of the upload body into libcurl's buffer (from ``HTTPRequest/bodyFile`` by `pread`);
    /// nil when the file could not be read.
    func readUpload(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if request.body == nil, let file = request.bodyFile {
            let n = Int(min(Int64(buffer.count), file.count - Int64(uploadOffset)))
            guard n > 0 else { return 0 }
            var got = 0
            while got < n {
                let r = pread(
                    file.descriptor, buffer.baseAddress! + got, n - got, off_t(file.offset) + off_t(uploadOffset + got))
                if r < 0, errno == EINTR { continue }
                guard r > 0 else { return nil }
                got += r
            }
            uploadOffset += n
            return n
        }
        guard let body = request.body, uploadOffset < body.count else { return 0 }
        let n = min(buffer.count, body.count - uploadOffset)
        body.withUnsafeBytes { raw in
            buffer.baseAddress!.copyMemory(from: raw.baseAddress! + uploadOffset, byteCount: n)
        }
        uploadOffset += n
        return n
    }

    /// Reports the end exactly once. The request's body in memory is let go first: a caller told of the end holds
    /// the last reference to it, so a large upload's bytes are freed when the caller drops them, not whenever the
    /// engine thread gets to freeing this box.
    func complete(_ result: Result<Void, HTTPTransportError>) {
        guard !completed else { return }
        completed = true
        request.body = nil
        if case .success = result, !headDelivered {
            headDelivered = true
            if !handler.didReceiveHead(HTTPResponseHead(status: status, headers: headers)) {
                handler.didComplete(.failure(.aborted))
                return
            }
        }
        handler.didComplete(result)
    }
}

// C entry points: libcurl passes the box back as the user pointer.

let httpWriteCallback: ccurl_data_callback = { ptr, size, count, user in
    guard let user, let ptr else { return 0 }
    let box = Unmanaged<HTTPTransferBox>.fromOpaque(user).takeUnretainedValue()
    return box.receiveBody(UnsafeRawBufferPointer(start: ptr, count: size * count))
}

let httpHeaderCallback: ccurl_data_callback = { ptr, size, count, user in
    guard let user, let ptr else { return 0 }
    let box = Unmanaged<HTTPTransferBox>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    return box.receiveHeaderLine(UnsafeRawBufferPointer(start: ptr, count: n)) ? n : 0
}

let httpReadCallback: ccurl_data_callback = { ptr, size, count, user in
    guard let user, let ptr else { return ccurl_readfunc_abort() }
    let box = Unmanaged<HTTPTransferBox>.fromOpaque(user).takeUnretainedValue()
    return box.readUpload(into: UnsafeMutableRawBufferPointer(start: ptr, count: size * count))
        ?? ccurl_readfunc_abort()
}
