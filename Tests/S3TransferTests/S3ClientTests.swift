import AWSSigV4
import Essentials
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite(.heavy) struct S3ClientTests {
    static let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret")

    func client(_ server: ScriptedHTTPServer, retry: RetryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: 0.001))
        -> S3Client
    {
        S3Client(
            configuration: S3ClientConfiguration(
                endpoint: server.endpoint, region: "eu-west-1", credentials: Self.credentials, retryPolicy: retry))
    }

    @Test func etagsLoseSpacesAWeakMarkerAndQuotesOnly() {
        #expect(S3ETag.unquoted("\"9b2cf535f27731c974343645a3985328\"") == "9b2cf535f27731c974343645a3985328")
        #expect(S3ETag.unquoted("  W/\"abc-2\"\t") == "abc-2")
        #expect(S3ETag.unquoted("abc") == "abc")
        #expect(S3ETag.unquoted("\"") == "\"")
        #expect(S3ETag.unquoted("\"\"") == "")
        #expect(S3ETag.unquoted("\"é\"") == "é")
        #expect(S3ETag.unquoted("") == "")
    }

    /// A last byte of 2⁶³−1 trapped on `last + 1` (a server's answer could crash the client), and signs passed as
    /// digits (Fuzz/regressions/byte-range).
    @Test func contentRangeIsDigitsWithinInt64() {
        let read = ContentRange(header: "bytes 0-9/100")
        #expect(read?.range == 0..<10 && read?.total == 100)
        #expect(ContentRange(header: "bytes 5-9/*")?.total == nil)
        #expect(ContentRange(header: "bytes 0-9223372036854775806/9223372036854775807")?.range.upperBound == .max)
        for header in [
            "bytes 0-9223372036854775807/*", "bytes 0-9223372036854775807/9223372036854775807", "bytes +0-9/10",
            "bytes 0-+9/10", "bytes 0-9/+10", "bytes */100", "bytes 9-0/10", "bytes 0-9/9",
        ] {
            #expect(ContentRange(header: header) == nil, "\(header)")
        }
    }

    /// `replacingOccurrences` compares Characters: a `&` followed by a combining mark was left raw, and the
    /// CompleteMultipartUpload document did not parse (Fuzz/regressions/server-xml).
    @Test func theCompletionDocumentEscapesMarkupBeforeCombiningMarks() throws {
        #expect(S3Client.xmlEscape("a&\u{301}<\u{301}>\"x") == "a&amp;\u{301}&lt;\u{301}&gt;&quot;x")
        let etag = "e&\u{747}b<\u{301}"
        let document = S3Client.completionDocument([S3PartToComplete(number: 1, etag: etag, checksum: nil)])
        let root = try S3XMLParser.parse(Data(document.utf8))
        let read = try #require(root.children("Part").first?.child("ETag")?.text)
        #expect(Array(read.utf8) == Array("\"\(etag)\"".utf8))
    }

    @Test func retryAfterIsReadAsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        func head(_ value: String?) -> HTTPResponseHead {
            HTTPResponseHead(status: 503, headers: value.map { ["retry-after": $0] } ?? [:])
        }
        #expect(S3Client.retryAfter(head("3"), now: now) == 3)
        #expect(S3Client.retryAfter(head(" 0 "), now: now) == 0)
        #expect(S3Client.retryAfter(head("Tue, 14 Nov 2023 22:13:40 GMT"), now: now) == 20)
        #expect(S3Client.retryAfter(head("Tue, 14 Nov 2023 22:13:00 GMT"), now: now) == 0)  // already past
        #expect(S3Client.retryAfter(head("-5"), now: now) == nil)
        #expect(S3Client.retryAfter(head("soon"), now: now) == nil)
        #expect(S3Client.retryAfter(head(nil), now: now) == nil)
    }

    @Test func anMD5ETagNamesExactlyItsDigestInEitherCase() {
        let digest: [UInt8] = [
            0x9B, 0x2C, 0xF5, 0x35, 0xF2, 0x77, 0x31, 0xC9, 0x74, 0x34, 0x36, 0x45, 0xA3, 0x98, 0x53, 0x28,
        ]
        #expect(S3ETag.names("9b2cf535f27731c974343645a3985328", digest: digest))
        #expect(S3ETag.names("9B2CF535F27731C974343645A3985328", digest: digest))
        #expect(!S3ETag.names("9b2cf535f27731c974343645a3985329", digest: digest))
        #expect(!S3ETag.names("8b2cf535f27731c974343645a3985328", digest: digest))
        #expect(!S3ETag.names("9b2cf535f27731c974343645a398532", digest: digest))
        #expect(!S3ETag.names("9b2cf535f27731c974343645a3985328-2", digest: digest))
        #expect(!S3ETag.names("9g2cf535f27731c974343645a3985328", digest: digest))
        #expect(!S3ETag.names("", digest: digest))
    }

    @Test func requestsAreSignedForPathStyleWithEncodedKeys() async throws {
        let object = ObjectResponder(data: Data("hello".utf8))
        let server = try ScriptedHTTPServer { object.respond($0) }
        defer { server.stop() }
        let key = "originals/caf\u{E9} 1+2.jpg"
        let (data, head) = try await client(server).getObject(bucket: "photos", key: key)
        #expect(data == Data("hello".utf8))
        #expect(head.etag == object.etag)
        let request = try #require(server.requests.first)
        #expect(request.path == "/photos/originals/caf%C3%A9%201%2B2.jpg")
        let auth = try #require(request.headers["authorization"].flatMap(SigV4Authorization.init(header:)))
        #expect(auth.region == "eu-west-1")
        #expect(auth.signedHeaders.contains("host"))
        #expect(request.headers["x-amz-checksum-mode"] == "ENABLED")
        // The server side recomputes the same signature from what arrived.
        let amzDate = try #require(request.headers["x-amz-date"])
        let signer = SigV4Signer(credentials: Self.credentials, region: "eu-west-1")
        let resigned = signer.sign(
            method: "GET", path: "/photos/" + key, host: "127.0.0.1:\(server.port)",
            headers: auth.signedHeaders.filter { !["host", "x-amz-date", "x-amz-content-sha256"].contains($0) }
                .map { ($0, request.headers[$0]!) },
            payloadHash: request.headers["x-amz-content-sha256"]!, date: SigV4.parseAmzDate(amzDate)!)
        #expect(resigned.first?.value == request.headers["authorization"])
    }

    @Test func errorCodesBecomeTypedErrors() async throws {
        let server = try ScriptedHTTPServer { request in
            if request.path.contains("missing") {
                return .init(
                    status: 404, body: Data("<Error><Code>NoSuchKey</Code><Message>nope</Message></Error>".utf8))
            }
            if request.path.contains("denied") {
                return .init(
                    status: 403, body: Data("<Error><Code>AccessDenied</Code><Message>no</Message></Error>".utf8))
            }
            if request.path.contains("moved") {
                return .init(
                    status: 301, headers: [("x-amz-bucket-region", "ap-south-1")],
                    body: Data("<Error><Code>PermanentRedirect</Code><Message>m</Message></Error>".utf8))
            }
            return .init(
                status: 418, body: Data("<Error><Code>Teapot</Code><Message>short and stout</Message></Error>".utf8))
        }
        defer { server.stop() }
        let client = client(server)
        await #expect(throws: S3Error.noSuchKey) { _ = try await client.getObject(bucket: "b", key: "missing") }
        await #expect(throws: S3Error.accessDenied) { _ = try await client.getObject(bucket: "b", key: "denied") }
        await #expect(throws: S3Error.permanentRedirect(region: "ap-south-1")) {
            _ = try await client.getObject(bucket: "b", key: "moved")
        }
        await #expect(throws: S3Error.service(code: "Teapot", message: "short and stout", status: 418, requestID: nil))
        {
            _ = try await client.getObject(bucket: "b", key: "other")
        }
        await #expect(throws: S3Error.noSuchKey) { _ = try await client.headObject(bucket: "b", key: "missing") }
    }

    @Test func clockSkewIsCorrectedFromTheDateHeaderAndRetriedOnce() async throws {
        // The server's clock runs two hours ahead and rejects requests more than 15 minutes off.
        let serverOffset: TimeInterval = 7200
        let object = ObjectResponder(data: Data("skew".utf8))
        let server = try ScriptedHTTPServer { request in
            let serverNow = Date().addingTimeInterval(serverOffset)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let dateHeader = ("Date", formatter.string(from: serverNow))
            let sent = request.headers["x-amz-date"].flatMap(SigV4.parseAmzDate) ?? .distantPast
            if abs(sent.timeIntervalSince(serverNow)) > 900 {
                return .init(
                    status: 403, headers: [dateHeader],
                    body: Data("<Error><Code>RequestTimeTooSkewed</Code><Message>skewed</Message></Error>".utf8))
            }
            var response = object.respond(request)
            response.headers.append(dateHeader)
            return response
        }
        defer { server.stop() }
        let client = client(server)
        let (data, _) = try await client.getObject(bucket: "b", key: "k")
        #expect(data == Data("skew".utf8))
        #expect(server.requests.count == 2)
        // The Date header has one-second resolution and a loaded machine delays the reply; the skew itself is hours.
        #expect(abs(client.measuredClockOffset - serverOffset) < 60)
        // Later requests use the measured offset straight away.
        _ = try await client.getObject(bucket: "b", key: "k")
        #expect(server.requests.count == 3)
    }

    @Test func serverErrorsAreRetriedThenReportTheLastCause() async throws {
        let count = LockedBox(0)
        let server = try ScriptedHTTPServer { _ in
            count.withLock { $0 += 1 }
            return .init(
                status: 500, body: Data("<Error><Code>InternalError</Code><Message>boom</Message></Error>".utf8))
        }
        defer { server.stop() }
        await #expect(
            throws: S3Error.retriesExhausted(
                lastError: .service(code: "InternalError", message: "boom", status: 500, requestID: nil), attempts: 3)
        ) {
            _ = try await client(server).getObject(bucket: "b", key: "k")
        }
        #expect(count.withLock { $0 } == 3)
    }

    @Test func headReadsMetadataAndChecksums() async throws {
        let server = try ScriptedHTTPServer { _ in
            .init(
                status: 200,
                headers: [
                    ("ETag", "\"abc\""), ("Content-Length", "42"), ("Content-Type", "image/jpeg"),
                    ("x-amz-meta-pixel-width", "4032"), ("x-amz-checksum-crc32", "AAAAAA=="),
                    ("Last-Modified", "Wed, 01 May 2024 10:20:30 GMT"),
                ])
        }
        defer { server.stop() }
        let head = try await client(server).headObject(bucket: "b", key: "k")
        #expect(head.size == 42)
        #expect(head.etag == "abc")
        #expect(head.contentType == "image/jpeg")
        #expect(head.metadata == ["pixel-width": "4032"])
        #expect(head.checksums.crc32 == "AAAAAA==")
        #expect(head.lastModified == Date(timeIntervalSince1970: 1_714_558_830))
    }

    /// The batch path of the metadata fill: one answer per key in the keys' order; a missing key is `noSuchKey` at
    /// once, and a failure another attempt may cure goes through the retry loop alone (twice refused here, then
    /// answered), without holding up the others' answers or retrying them. The batch asks for no checksums.
    @Test func headsOfManyObjectsComeBackInOrderAndOnlyFailuresAreRetried() async throws {
        let attempts = LockedBox([String: Int]())
        let checksumMode = LockedBox(Set<String>())
        let server = try ScriptedHTTPServer { request in
            let key = String(request.path.dropFirst("/b/".count)).removingPercentEncoding ?? ""
            let attempt = attempts.withLock { state -> Int in
                state[key, default: 0] += 1
                return state[key]!
            }
            if request.headers["x-amz-checksum-mode"] != nil { checksumMode.withLock { $0.insert(key) } }
            if key == "gone" { return .init(status: 404, body: Data()) }
            if key == "busy", attempt <= 2 {
                return .init(
                    status: 503, body: Data("<Error><Code>SlowDown</Code><Message>later</Message></Error>".utf8))
            }
            return .init(
                status: 200,
                headers: [
                    ("ETag", "\"e-\(key)\""), ("Content-Length", "\(key.utf8.count)"), ("x-amz-meta-name", key),
                    ("x-amz-request-id", "not kept"), ("Server", "not kept either"),
                ])
        }
        defer { server.stop() }
        let keys = (0..<40).map { "k\($0)" } + ["gone", "busy", "dir/é x"]
        let results = await client(server).headObjects(bucket: "b", keys: keys)
        #expect(results.count == keys.count)
        for (key, result) in zip(keys, results) {
            switch key {
            case "gone": #expect(throws: S3Error.noSuchKey) { try result.get() }
            default:
                let head = try result.get()
                #expect(head.etag == "e-\(key)" && head.size == Int64(key.utf8.count) && head.metadata == ["name": key])
            }
        }
        let counts = attempts.withLock { $0 }
        #expect(counts["busy"] == 3 && counts["gone"] == 1)
        // Not in checksum mode (the fill reads no checksum), except where the retry loop asked again.
        #expect(checksumMode.withLock { $0 } == ["busy"])
        #expect(counts.filter { $0.key != "busy" }.allSatisfy { $0.value == 1 })
        #expect(await client(server).headObjects(bucket: "b", keys: []).isEmpty)
    }

    /// A failure the retry loop cannot cure ends only its own key: the rest of the batch is answered.
    @Test func aBatchOfHeadsWithoutAServerFailsEachKeyWithTheTransportError() async throws {
        let (socket, port) = try #require(LoopbackSocket.refusingPort())
        defer { close(socket) }
        let endpoint = URL(string: "http://127.0.0.1:\(port)")!
        let client = S3Client(
            configuration: S3ClientConfiguration(
                endpoint: endpoint, region: "eu-west-1", credentials: Self.credentials,
                retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.001)))
        let results = await client.headObjects(bucket: "b", keys: ["a", "b", "c"])
        #expect(results.count == 3)
        for result in results {
            guard case .failure(.retriesExhausted(.transport, _)) = result else {
                Issue.record("expected a transport failure after the retries, got \(result)")
                continue
            }
        }
    }

    @Test func listingPagesAreFollowedUntilTheEnd() async throws {
        let server = try ScriptedHTTPServer { request in
            let second = request.path.contains("continuation-token=t1")
            let xml =
                second
                ? "<ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated><Contents><Key>k2</Key><Size>2</Size><ETag>\"e\"</ETag><LastModified>2024-01-01T00:00:00Z</LastModified></Contents></ListBucketResult>"
                : "<ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated><NextContinuationToken>t1</NextContinuationToken><Contents><Key>k1</Key><Size>1</Size><ETag>\"e\"</ETag><LastModified>2024-01-01T00:00:00Z</LastModified></Contents></ListBucketResult>"
            return .init(status: 200, body: Data(xml.utf8))
        }
        defer { server.stop() }
        var keys: [String] = []
        for try await page in client(server).listAllObjects(bucket: "b", prefix: "k") {
            keys += page.objects.map(\.key)
        }
        #expect(keys == ["k1", "k2"])
        #expect(server.requests.first?.path.contains("list-type=2") == true)
        #expect(server.requests.first?.path.contains("prefix=k") == true)
    }

    @Test func configurationComesFromTheEnvironment() throws {
        let configuration = try S3ClientConfiguration.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "TOK",
            "AWS_REGION": "eu-central-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        ])
        #expect(
            configuration.credentials == AWSCredentials(accessKeyID: "AK", secretAccessKey: "SK", sessionToken: "TOK"))
        #expect(configuration.region == "eu-central-1")
        #expect(configuration.endpoint.absoluteString == "http://127.0.0.1:9000")
        #expect(configuration.addressingStyle == .path)
        #expect(throws: S3ConfigurationError.missingSecretKey) {
            try S3ClientConfiguration.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK"])
        }
        #expect(throws: S3ConfigurationError.invalidEndpoint("ftp://x")) {
            try S3ClientConfiguration.fromEnvironment(["AWS_ENDPOINT_URL": "ftp://x"])
        }
    }

    @Test func anErrorAnswerRecordsTheServicesClock() async throws {
        let fixture = try await FakeS3Fixture.start(clockError: -3600)
        TestEnd.run { await fixture.stop() }
        #expect(fixture.client.lastErrorAnswerClock == nil, "no error answer yet")
        // This computer is an hour behind: the first answer refuses the signature; its Date shows by how much (the
        // client then signs again, corrected, and the listing succeeds).
        _ = try await fixture.client.listObjectsV2(bucket: FakeS3Fixture.bucket)
        let reading = try #require(fixture.client.lastErrorAnswerClock)
        #expect(abs(reading.service.timeIntervalSince(reading.local) - 3600) < 5)
    }
}
