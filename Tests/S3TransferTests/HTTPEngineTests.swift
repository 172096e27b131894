import Essentials
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite(.heavy) struct HTTPEngineTests {
    @Test func statusLinesAreParsedFromTheirBytes() {
        func code(_ line: String) -> Int {
            Array(line.utf8).withUnsafeBytes { HTTPTransferBox.statusCode($0) }
        }
        #expect(code("HTTP/1.1 200 OK") == 200)
        #expect(code("HTTP/1.1 206") == 206)
        #expect(code("HTTP/2 503 Slow Down") == 503)
        #expect(code("HTTP/1.1  404 Not Found") == 404)
        #expect(code("HTTP/1.1 20 OK") == 0)
        #expect(code("HTTP/1.1 2000 OK") == 0)
        #expect(code("HTTP/1.1") == 0)
        #expect(code("HTTP/1.1 abc") == 0)
    }

    @Test func getDeliversBodyAndSendsNoAcceptEncoding() async throws {
        let body = testBytes(300_000)
        let server = try ScriptedHTTPServer { _ in .init(status: 200, headers: [("X-Test", "yes")], body: body) }
        defer { server.stop() }
        let engine = HTTPEngine()
        let (head, data) = try await engine.data(
            for: HTTPRequest(method: "GET", url: "\(server.endpoint)/thing", headers: [("X-Custom", "1")]))
        #expect(head.status == 200)
        #expect(head["x-test"] == "yes")
        #expect(data == body)
        let request = try #require(server.requests.first)
        #expect(request.headers["accept-encoding"] == nil)
        #expect(request.headers["x-custom"] == "1")
        #expect(request.headers["expect"] == nil)
    }

    @Test func aHeaderFilterKeepsOnlyItsNamesOfASuccessAndEverythingOfAnError() async throws {
        let server = try ScriptedHTTPServer { request in
            .init(
                status: request.path.hasSuffix("ok") ? 200 : 404,
                headers: [
                    ("ETag", "\"e\""), ("X-Amz-Checksum-CRC32C", "c"), ("X-Amz-Request-Id", "r"),
                    ("Date", "Wed, 01 May 2024 10:20:30 GMT"), ("X-Amz-Checksum", "not a prefix match"),
                ], body: Data("b".utf8))
        }
        defer { server.stop() }
        let engine = HTTPEngine()
        var request = HTTPRequest(method: "GET", url: "\(server.endpoint)/ok")
        request.successHeaders = HTTPHeaderFilter(names: ["etag", "content-length"], prefixes: ["x-amz-checksum-"])
        let (ok, _) = try await engine.data(for: request)
        #expect(Set(ok.headers.keys) == ["etag", "content-length", "x-amz-checksum-crc32c"])
        #expect(ok["ETag"] == "\"e\"")
        request.url = "\(server.endpoint)/missing"
        let (error, _) = try await engine.data(for: request)
        #expect(error.status == 404)
        #expect(error["x-amz-request-id"] == "r")
        #expect(error["date"] != nil)
        #expect(error["x-amz-checksum"] != nil)
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try ScriptedHTTPServer { _ in .init(status: 200, body: Data("ok".utf8)) }
        defer { server.stop() }
        let engine = HTTPEngine()
        for _ in 0..<5 {
            _ = try await engine.data(for: HTTPRequest(method: "GET", url: "\(server.endpoint)/x"))
        }
        #expect(server.requests.count == 5)
        #expect(server.connectionCount == 1)
    }

    @Test func putSendsTheBody() async throws {
        let server = try ScriptedHTTPServer { _ in .init(status: 200) }
        defer { server.stop() }
        let payload = testBytes(100_000, seed: 7)
        let engine = HTTPEngine()
        _ = try await engine.data(for: HTTPRequest(method: "PUT", url: "\(server.endpoint)/p", body: payload))
        #expect(server.requests.first?.body == payload)
        #expect(server.requests.first?.method == "PUT")
    }

    @Test func anUploadsBodyIsLetGoBeforeTheEndIsReported() async throws {
        // The server answers only once `start` has returned: until then the caller's argument still holds the body,
        // so an end reported before that (a fast transfer on a busy machine) would not show the engine's release.
        let startReturned = DispatchSemaphore(value: 0)
        let server = try ScriptedHTTPServer { _ in
            startReturned.wait()
            return .init(status: 200)
        }
        defer { server.stop() }
        /// Records, when the end is reported, whether the body's bytes were freed already.
        final class EndProbe: HTTPResponseHandler, @unchecked Sendable {
            // @unchecked: `freed` is a LockedBox; `done` is resumed once, by the engine thread.
            let freed: LockedBox<Bool>
            let done: CheckedContinuation<Bool, Never>
            init(freed: LockedBox<Bool>, done: CheckedContinuation<Bool, Never>) {
                self.freed = freed
                self.done = done
            }
            func didReceiveHead(_ head: HTTPResponseHead) -> Bool { true }
            func didReceiveBody(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition { .consumed }
            func didComplete(_ result: Result<Void, HTTPTransportError>) {
                done.resume(returning: freed.withLock { $0 })
            }
        }
        let engine = HTTPEngine()
        let freed = LockedBox(false)
        let freedAtEnd = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            // The request (and its body) goes to the engine: nothing here keeps a reference to it once `start`
            // returns — the body is a local of a function that has returned before the server may answer (a local
            // of this closure would live until the closure's end, after the signal, in a debug build).
            func start() {
                let count = 1 << 20
                let bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
                bytes.initializeMemory(as: UInt8.self, repeating: 7, count: count)
                let body = Data(
                    bytesNoCopy: bytes, count: count,
                    deallocator: .custom { pointer, _ in
                        pointer.deallocate()
                        freed.withLock { $0 = true }
                    })
                _ = engine.start(
                    HTTPRequest(method: "PUT", url: "\(server.endpoint)/p", body: body),
                    handler: EndProbe(freed: freed, done: done))
            }
            start()
            startReturned.signal()
        }
        #expect(freedAtEnd)
        #expect(server.requests.first?.body.count == 1 << 20)
    }

    @Test func cutOffBodyIsATransportError() async throws {
        let server = try ScriptedHTTPServer { _ in .init(status: 200, body: testBytes(10_000), cutAfter: 500) }
        defer { server.stop() }
        let engine = HTTPEngine()
        await #expect(throws: HTTPTransportError.self) {
            _ = try await engine.data(for: HTTPRequest(method: "GET", url: "\(server.endpoint)/x"))
        }
    }

    @Test func aTransportErrorCarriesLibcurlsOwnExplanation() async throws {
        // A port nothing listens on: libcurl's error buffer names the address and port, where curl_easy_strerror
        // would only say "Couldn't connect to server".
        let port = try #require(LoopbackSocket.freePort())
        let engine = HTTPEngine()
        await #expect {
            _ = try await engine.data(for: HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/x"))
        } throws: { error in
            guard let transport = error as? HTTPTransportError else { return false }
            return transport.curlCode == 7 && transport.message.contains("127.0.0.1")
                && transport.message.contains(String(port))
        }
    }

    /// ``HTTPEngine/responses(for:bodyLimit:)``: each answer in its request's place, and cancelling the task ends
    /// the transfers still running as cancelled while those already answered keep their answers.
    @Test(.timeLimit(.minutes(1))) func aBatchAnswersInRequestOrderAndCancellingEndsOnlyWhatStillRuns() async throws {
        let hold = DispatchSemaphore(value: 0)
        let slowArrived = AsyncStream<Void>.makeStream()
        let server = try ScriptedHTTPServer { request in
            if request.path == "/slow" {
                slowArrived.continuation.yield()
                return .init(status: 200, body: testBytes(10), holdBody: hold)
            }
            return .init(status: 200, body: Data(request.path.utf8))
        }
        defer {
            hold.signal()
            server.stop()
        }
        let engine = HTTPEngine()
        let paths = (0..<12).map { "/fast/\($0)" }
        let answered = await engine.responses(
            for: paths.map { HTTPRequest(method: "GET", url: "\(server.endpoint)\($0)") })
        #expect(try answered.map { String(decoding: try $0.get().1, as: UTF8.self) } == paths)

        let batch = Task {
            await engine.responses(
                for: (paths + ["/slow"]).map { HTTPRequest(method: "GET", url: "\(server.endpoint)\($0)") })
        }
        for await _ in slowArrived.stream { break }
        batch.cancel()
        let results = await batch.value
        #expect(results.count == 13)
        guard case .failure(let error) = results[12] else {
            Issue.record("the held transfer was not cancelled")
            return
        }
        #expect(error.isCancellation)
    }

    @Test func cancellingFromAnotherThreadCompletesAsCancelled() async throws {
        let hold = DispatchSemaphore(value: 0)
        let server = try ScriptedHTTPServer { _ in .init(status: 200, body: testBytes(1000), holdBody: hold) }
        defer {
            hold.signal()
            server.stop()
        }
        let engine = HTTPEngine()
        let headSeen = AsyncStream<Void>.makeStream()
        let done = AsyncStream<Result<Void, HTTPTransportError>>.makeStream()
        final class Handler: HTTPResponseHandler, @unchecked Sendable {
            let onHead: @Sendable () -> Void
            let onDone: @Sendable (Result<Void, HTTPTransportError>) -> Void
            init(
                onHead: @escaping @Sendable () -> Void,
                onDone: @escaping @Sendable (Result<Void, HTTPTransportError>) -> Void
            ) {
                self.onHead = onHead
                self.onDone = onDone
            }
            func didReceiveHead(_ head: HTTPResponseHead) -> Bool {
                onHead()
                return true
            }
            func didReceiveBody(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition { .consumed }
            func didComplete(_ result: Result<Void, HTTPTransportError>) { onDone(result) }
        }
        let id = engine.start(
            HTTPRequest(method: "GET", url: "\(server.endpoint)/x"),
            handler: Handler(onHead: { headSeen.continuation.yield() }, onDone: { done.continuation.yield($0) }))
        for await _ in headSeen.stream { break }
        Thread.detachNewThread { engine.cancel(id) }
        var result: Result<Void, HTTPTransportError>?
        for await r in done.stream {
            result = r
            break
        }
        #expect(result.map { if case .failure(let e) = $0 { e.isCancellation } else { false } } == true)
    }
}

/// The engine's confinement rule, as the debug-build checks (``ThreadRole/assertCurrent(file:line:)``) rely on it.
@Suite(.heavy) struct EngineThreadTests {
    /// Records on which thread role each callback ran.
    final class RoleRecorder: HTTPResponseHandler, Sendable {
        let roles = LockedBox<[String: Bool]>([:])
        let done: AsyncStream<Void>.Continuation
        init(done: AsyncStream<Void>.Continuation) { self.done = done }
        func didReceiveHead(_ head: HTTPResponseHead) -> Bool {
            roles.withLock { $0["head"] = ThreadRole.httpEngine.isCurrent }
            return true
        }
        func didReceiveBody(_ bytes: UnsafeRawBufferPointer) -> HTTPBodyDisposition {
            roles.withLock { $0["body"] = ThreadRole.httpEngine.isCurrent }
            return .consumed
        }
        func didComplete(_ result: Result<Void, HTTPTransportError>) {
            roles.withLock { $0["complete"] = ThreadRole.httpEngine.isCurrent }
            done.yield()
        }
    }

    @Test func everyHandlerCallbackRunsOnTheEngineThreadAndNoOtherThreadHasItsRole() async throws {
        let server = try ScriptedHTTPServer { _ in .init(status: 200, body: testBytes(100_000)) }
        defer { server.stop() }
        let engine = HTTPEngine()
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let recorder = RoleRecorder(done: continuation)
        engine.start(HTTPRequest(method: "GET", url: "\(server.endpoint)/x"), handler: recorder)
        for await _ in stream { break }
        #expect(recorder.roles.withLock { $0 } == ["head": true, "body": true, "complete": true])
        #expect(!ThreadRole.httpEngine.isCurrent)
        let other = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread { c.resume(returning: ThreadRole.httpEngine.isCurrent) }
        }
        #expect(!other)
    }
}

/// A server that accepts connections (the kernel completes the handshake for its backlog) and never answers.
@Suite(.heavy) struct SilentServerTests {
    @Test func aServerThatNeverAnswersFailsAfterTheFirstAnswerTimeoutNotTheStallTimeout() async throws {
        let (listener, port) = try #require(LoopbackSocket.listen(backlog: 8))
        defer { close(listener) }
        var configuration = HTTPEngineConfiguration(stallTimeout: 60)
        configuration.firstAnswerTimeout = 1
        let engine = HTTPEngine(configuration: configuration)
        // The error names which timeout ended the request: the first-answer timeout's message, not the stall
        // timeout's (a libcurl low-speed timeout). No wall time is measured: on a loaded machine the engine thread
        // may wait for the CPU, and that says nothing about which limit fired.
        do {
            _ = try await engine.data(for: HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/x"))
            Issue.record("a silent server produced an answer")
        } catch {
            #expect("\(error)".contains("no answer within 1 s"), "\(error)")
            #expect(error.curlCode == HTTPTransportError.noAnswerCode, "\(error)")
        }
    }
}
