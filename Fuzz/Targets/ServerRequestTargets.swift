import AWSSigV4
import Essentials
import FakeS3
import Foundation
import NIOHTTP1

extension FuzzCatalog {
    /// The fake server's request reading: `S3Request` (request line, path and query decoding, bucket and key,
    /// virtual hosts) and `RequestAuthenticator` (SigV4 header and presigned forms, SigV2). Two input forms, by
    /// the first byte:
    ///
    /// - even: the rest is a request head as text (the seeds are real requests the client's signer signed). The
    ///   request must decode consistently (the path agrees with AWSSigV4's decoder, bucket and key put back
    ///   together give the path); one that authenticates must carry the signature the client's signer makes for
    ///   it with the known secret.
    /// - odd: the rest picks a request (method, bucket, any key, query, headers, payload hash, form, clock skew),
    ///   the harness signs it — with the right secret or a wrong one — and applies one change. It must
    ///   authenticate exactly when the secret was right, the time within bounds, and the change left every
    ///   signed part as it was (canonically: header case, spaces in values, another escape of the same path).
    static let serverRequest = FuzzTarget(
        name: "server-request",
        summary: "fake S3 S3Request + RequestAuthenticator: decoding consistent; authenticates iff really signed",
        maxLength: 4096,
        seeds: { ServerRequestFuzz.seeds() },
        check: { bytes throws(FuzzFailure) in
            guard let first = bytes.first else { return }
            if first & 1 == 0 {
                try ServerRequestFuzz.checkRaw(bytes.dropFirst(), sigV2Clock: first & 2 != 0)
            } else {
                try ServerRequestFuzz.checkSigned(bytes.dropFirst())
            }
        })
}

enum ServerRequestFuzz {
    static let credentials = AWSCredentials(accessKeyID: "AKIDFUZZ", secretAccessKey: "fuzz/Secret+Key")
    /// The key pair of AWS's SigV2 documentation example (its presigned URL is a known answer).
    static let v2Credentials = AWSCredentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let region = "us-east-1"
    static let suffixes = ["s3.amazonaws.com", "s3.localhost", "localhost"]
    static let authenticator = RequestAuthenticator(credentials: [credentials, v2Credentials], region: region)
    /// When the SigV4 requests are signed: 2024-05-01T12:00:00Z.
    static let signingDate = Date(timeIntervalSince1970: 1_714_564_800)
    /// The SigV2 example's date (Tue, 27 Mar 2007 19:36:42 GMT) and its presigned URL's expiry.
    static let v2Date = Date(timeIntervalSince1970: 1_175_024_202)
    static let v2Expires = 1_175_139_620
    static let methods = ["GET", "PUT", "HEAD", "DELETE", "POST"]
    static let headerNames = ["range", "if-match", "content-type", "x-amz-meta-note", "cache-control", "content-md5"]

    // MARK: Text heads

    static func checkRaw(_ bytes: ArraySlice<UInt8>, sigV2Clock: Bool) throws(FuzzFailure) {
        let head = ServerFuzzing.head(bytes)
        let request: S3Request
        do {
            request = try S3Request(head: head, virtualHostSuffixes: suffixes)
        } catch {
            // A request line the server refuses as badly escaped has a piece AWSSigV4's decoder refuses too.
            if error.code == "InvalidURI" {
                let target = head.uri.utf8.split(
                    separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
                var pieces = [ServerFuzzing.text(target[0])]
                if target.count == 2 {
                    for item in target[1].split(separator: UInt8(ascii: "&")) {
                        pieces += item.split(separator: UInt8(ascii: "="), maxSplits: 1).map { ServerFuzzing.text($0) }
                    }
                }
                try expect(
                    target[0].first != UInt8(ascii: "/") || pieces.contains { SigV4.percentDecode($0) == nil },
                    "\(head.uri.debugDescription): InvalidURI, but every piece decodes")
            }
            return
        }
        try checkDecoding(request)
        let now = sigV2Clock ? v2Date + 60 : signingDate + 60
        guard case .signed(let signed) = try? authenticator.authenticate(request, now: now) else { return }
        try expect(
            signed.credentials == credentials || signed.credentials == v2Credentials,
            "authenticated as \(signed.credentials), a key pair the server does not have")
        try checkAgainstSigner(request, now: now)
    }

    /// The decoded request against the request line: the path AWSSigV4's decoder makes of it, the query items of
    /// its `&`-separated parts, and bucket and key that put back together give the path.
    static func checkDecoding(_ request: S3Request) throws(FuzzFailure) {
        let path = request.path
        try expect(path.utf8.first == UInt8(ascii: "/"), "decoded path \(path.debugDescription) is not absolute")
        try expect(
            ServerFuzzing.same(SigV4.percentDecode(request.rawPath), path),
            "\(request.rawPath.debugDescription) decodes to \(path.debugDescription) here, otherwise in AWSSigV4")
        let parts = request.rawQuery.utf8.split(separator: UInt8(ascii: "&")).count
        try expect(request.query.count == parts, "\(parts) query parts gave \(request.query.count) items")
        if let key = request.key {
            try expect(
                (1...1024).contains(key.utf8.count) && !key.utf8.contains(0), "invalid key \(key.debugDescription)")
        }
        if !request.isVirtualHosted, let bucket = request.bucket {
            try expect(!bucket.utf8.contains(UInt8(ascii: "/")), "path-style bucket \(bucket.debugDescription) has a /")
        }
        let rebuilt: String
        if request.isVirtualHosted {
            rebuilt = "/" + (request.key ?? "")
        } else if let bucket = request.bucket {
            rebuilt = "/" + bucket + (request.key.map { "/" + $0 } ?? "")
        } else {
            rebuilt = "/"
        }
        try expect(
            ServerFuzzing.same(path, rebuilt) || ServerFuzzing.same(path, rebuilt + "/"),
            "path \(path.debugDescription) read as bucket \(request.bucket.debugDescription), key "
                + "\(request.key.debugDescription)")
    }

    /// An authenticated request must carry the signature the client's signer (`SigV4Signer`, another path to the
    /// HMAC than the server's) computes for it with the secret, wherever the signer can express the request:
    /// header form with `host`, `x-amz-date` and `x-amz-content-sha256` signed once each; presigned with only
    /// `host`. SigV2 has no writer in the project; the signed-input form checks it against a known answer.
    static func checkAgainstSigner(_ request: S3Request, now: Date) throws(FuzzFailure) {
        if let authorization = request.header("authorization") {
            guard let auth = SigV4Authorization(header: authorization) else { return }
            guard let expected = headerSignature(request, auth) else { return }
            try expect(
                auth.signature.lowercased() == expected,
                "authenticated with signature \(auth.signature), the signer makes \(expected) for "
                    + "\(request.method) \(request.head.uri.debugDescription)")
        } else if let signature = request.queryValue("X-Amz-Signature") {
            guard let expected = presignedSignature(request) else { return }
            try expect(
                signature.lowercased() == expected,
                "presigned URL authenticated with \(signature), the signer makes \(expected)")
        }
    }

    private static func headerSignature(_ request: S3Request, _ auth: SigV4Authorization) -> String? {
        let names = auth.signedHeaders
        let fixed = ["host", "x-amz-date", "x-amz-content-sha256"]
        guard Set(names).count == names.count, fixed.allSatisfy(names.contains),
            fixed.allSatisfy({ request.headers[$0].count == 1 }),
            let amzDate = request.header("x-amz-date"), let date = SigV4.parseAmzDate(amzDate),
            SigV4.amzDate(date) == amzDate, let payloadHash = request.header("x-amz-content-sha256"),
            request.header("x-amz-security-token") == nil, auth.accessKeyID == credentials.accessKeyID
        else { return nil }
        var headers: [(name: String, value: String)] = []
        for name in names where !fixed.contains(name) {
            for value in request.headers[name] { headers.append((name, value)) }
        }
        let signer = SigV4Signer(credentials: credentials, region: auth.region, service: auth.service)
        let signed = signer.sign(
            method: request.method, path: request.path, query: request.query, host: request.header("host")!,
            headers: headers, payloadHash: payloadHash, date: date)
        guard let value = signed.first(where: { $0.name == "Authorization" })?.value,
            let made = SigV4Authorization(header: value), made.signedHeaders == names.sorted()
        else { return nil }
        return made.signature
    }

    private static func presignedSignature(_ request: S3Request) -> String? {
        let own = [
            "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
            "X-Amz-Signature",
        ]
        guard own.allSatisfy({ name in request.query.count { $0.name == name } == 1 }),
            !request.hasQuery("X-Amz-Security-Token"), !request.hasQuery("X-Amz-Content-Sha256"),
            request.queryValue("X-Amz-SignedHeaders") == "host", request.headers["host"].count == 1,
            let credential = request.queryValue("X-Amz-Credential"),
            let auth = SigV4Authorization(credential: credential, signedHeaders: "host", signature: "x"),
            auth.accessKeyID == credentials.accessKeyID, credential == "\(auth.accessKeyID)/\(auth.scope)",
            let amzDate = request.queryValue("X-Amz-Date"), let date = SigV4.parseAmzDate(amzDate),
            SigV4.amzDate(date) == amzDate, let expiresText = request.queryValue("X-Amz-Expires"),
            let expires = Int(expiresText), String(expires) == expiresText
        else { return nil }
        let signer = SigV4Signer(credentials: credentials, region: auth.region, service: auth.service)
        let query = signer.presignedQuery(
            method: request.method, path: request.path, query: request.query.filter { !own.contains($0.name) },
            host: request.header("host")!, expires: expires, date: date)
        guard let item = query.split(separator: "&").first(where: { $0.hasPrefix("X-Amz-Signature=") }) else {
            return nil
        }
        return String(item.dropFirst("X-Amz-Signature=".count))
    }

    // MARK: Signed requests, changed once

    /// What the harness did to a signed request, and whether that leaves every signed part as signed.
    enum Change: CaseIterable {
        case none, method, longerKey, reescapedPath, addedQuery, removedQuery, signedHeaderValue, unsignedHeader
        case signatureDigit, signatureCase, date, removedSignedHeader, repeatedSignedHeader, headerNameCase
        case headerSpaces, region
    }

    /// One request as the harness builds it before it becomes a head.
    struct Built {
        var method: String
        var path: String
        /// The path as sent (escaped).
        var rawPath: String
        var query: [(name: String, value: String)]
        /// The query as sent, when it is not `query` written canonically (a presigned URL's).
        var rawQuery: String?
        var headers: [(name: String, value: String)]

        var head: HTTPRequestHead {
            var uri = rawPath
            let q = rawQuery ?? SigV4.canonicalQueryString(query)
            if !q.isEmpty { uri += "?" + q }
            return HTTPRequestHead(
                version: .http1_1, method: HTTPMethod(rawValue: method), uri: uri, headers: HTTPHeaders(headers))
        }
    }

    static func checkSigned(_ bytes: ArraySlice<UInt8>) throws(FuzzFailure) {
        var reader = FuzzReader(Array(bytes))
        switch reader.byte() % 3 {
        case 0: try checkSigV4(&reader, presigned: false)
        case 1: try checkSigV4(&reader, presigned: true)
        default: try checkSigV2(&reader)
        }
    }

    static func checkSigV4(_ reader: inout FuzzReader, presigned: Bool) throws(FuzzFailure) {
        let method = methods[Int(reader.byte()) % methods.count]
        let virtual = reader.byte() & 1 == 1
        let bucket = ["photos", "my.bucket-1", "abc"][Int(reader.byte()) % 3]
        let key = reader.string(upTo: 48)
        var query: [(name: String, value: String)] = []
        for _ in 0..<(reader.byte() % 4) { query.append((reader.string(upTo: 12), reader.string(upTo: 12))) }
        var extra: [(name: String, value: String)] = []
        for _ in 0..<(reader.byte() % 4) {
            let name = headerNames[Int(reader.byte()) % headerNames.count]
            extra.append((name, headerValue(reader.string(upTo: 24))))
        }
        let payloadHash = [
            SigV4.unsignedPayload, SigV4.emptyPayloadHash, SigV4.streamingPayload, SigV4.sha256Hex("x"),
        ][
            Int(reader.byte()) % 4]
        let rightSecret = reader.byte() % 8 != 0
        let skew = TimeInterval(Int16(bitPattern: UInt16(reader.byte()) << 8 | UInt16(reader.byte())))
        let expires = 1 + Int(reader.byte()) * 30
        let change = Change.allCases[Int(reader.byte()) % Change.allCases.count]

        let host = virtual ? "\(bucket).s3.localhost:9000" : "127.0.0.1:9000"
        let path = virtual ? "/" + key : "/\(bucket)/\(key)"
        let secret = credentials.secretAccessKey + (rightSecret ? "" : "x")
        let signingRegion = change == .region ? "eu-west-1" : region
        let signer = SigV4Signer(
            credentials: AWSCredentials(accessKeyID: credentials.accessKeyID, secretAccessKey: secret),
            region: signingRegion)
        var built = Built(
            method: method, path: path, rawPath: SigV4.uriEncode(path, encodeSlash: false), query: query,
            headers: [("Host", host)] + extra)
        if presigned {
            built.rawQuery = signer.presignedQuery(
                method: method, path: path, query: query, host: host, expires: expires, date: signingDate)
        } else {
            built.headers += signer.sign(
                method: method, path: path, query: query, host: host, headers: extra, payloadHash: payloadHash,
                date: signingDate)
        }
        let signedChange = apply(change, to: &built, presigned: presigned, reader: &reader)
        let description = "\(presigned ? "presigned" : "header") \(change) \(built.head.uri.debugDescription)"

        guard let request = try? S3Request(head: built.head, virtualHostSuffixes: suffixes) else {
            // Only a key S3 refuses (NUL) makes a request the harness signed unreadable.
            try expect(key.utf8.contains(0) || change == .longerKey, "\(description): not read")
            return
        }
        try checkDecoding(request)
        let now = signingDate + skew
        let result = try? authenticator.authenticate(request, now: now)
        let inTime = presigned ? skew <= TimeInterval(expires) && -skew <= 900 : abs(skew) <= 900
        // A user query item named like a presigned URL's own parameters is read as one of them.
        let ambiguous = presigned && query.contains { $0.name.hasPrefix("X-Amz-") }
        if case .signed(let signed) = result {
            try expect(rightSecret, "\(description): signed with a wrong secret, yet authenticated")
            try expect(!signedChange, "\(description): a signed part changed, yet authenticated")
            try expect(inTime, "\(description): authenticated \(skew) s away from its date")
            try expect(
                signed.payloadHash == (presigned ? SigV4.unsignedPayload : payloadHash),
                "\(description): payload hash \(signed.payloadHash)")
        } else if rightSecret && !signedChange && inTime && !ambiguous {
            var reason = "anonymous"
            do { _ = try authenticator.authenticate(request, now: now) } catch { reason = "\(error)" }
            throw FuzzFailure("\(description): properly signed, yet refused: \(reason)")
        }
    }

    /// A header value as the server receives one: no CR, LF or NUL, no spaces or tabs around it (HTTP parsing
    /// strips them).
    static func headerValue(_ text: String) -> String {
        let kept = String(
            String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" }))
        return String(ASCII.trimmingSpaces(kept))
    }

    /// Applies `change`; returns whether it changed a signed part (canonically).
    static func apply(_ change: Change, to built: inout Built, presigned: Bool, reader: inout FuzzReader) -> Bool {
        let signedNames: Set<String> =
            presigned ? ["host"] : Set(built.headers.map { $0.name.lowercased() }.filter { $0 != "authorization" })
        switch change {
        case .none:
            return false
        case .method:
            let others = methods.filter { $0 != built.method }
            built.method = others[Int(reader.byte()) % others.count]
            return true
        case .longerKey:
            built.path += "x" + reader.string(upTo: 4)
            built.rawPath = SigV4.uriEncode(built.path, encodeSlash: false)
            return true
        case .reescapedPath:
            // Another escape of the same path: the signature covers the decoded path.
            built.rawPath = ServerFuzzing.percentEncode(built.path, keep: [UInt8(ascii: "/")], lower: true)
            return false
        case .addedQuery:
            let item = (name: "x" + reader.string(upTo: 8), value: reader.string(upTo: 8))
            built.query.append(item)
            if let raw = built.rawQuery {
                built.rawQuery = raw + "&" + SigV4.canonicalQueryString([item])
            }
            return true
        case .removedQuery:
            if let raw = built.rawQuery {
                // Drop one of the presigned URL's own parameters (never the signature itself).
                var items = raw.split(separator: "&").map(String.init)
                let candidates = items.indices.filter { !items[$0].hasPrefix("X-Amz-Signature=") }
                items.remove(at: candidates[Int(reader.byte()) % candidates.count])
                built.rawQuery = items.joined(separator: "&")
                return true
            }
            guard !built.query.isEmpty else { return false }
            built.query.remove(at: Int(reader.byte()) % built.query.count)
            return true
        case .signedHeaderValue:
            let candidates = built.headers.indices.filter { signedNames.contains(built.headers[$0].name.lowercased()) }
            let index = candidates[Int(reader.byte()) % candidates.count]
            let old = built.headers[index].value
            let new = headerValue(reader.string(upTo: 24))
            built.headers[index].value = new
            return SigV4.canonicalHeaderValue(old) != SigV4.canonicalHeaderValue(new)
        case .unsignedHeader:
            built.headers.append(("x-fuzz-unsigned", headerValue(reader.string(upTo: 16))))
            return false
        case .signatureDigit, .signatureCase:
            let digits = Array("0123456789abcdef")
            func changed(_ signature: String) -> String {
                if change == .signatureCase { return signature.uppercased() }
                var characters = Array(signature)
                guard !characters.isEmpty else { return signature }
                let at = Int(reader.byte()) % characters.count
                let others = digits.filter { $0 != characters[at] }
                characters[at] = others[Int(reader.byte()) % others.count]
                return String(characters)
            }
            if let raw = built.rawQuery {
                built.rawQuery = raw.split(separator: "&").map { item in
                    item.hasPrefix("X-Amz-Signature=")
                        ? "X-Amz-Signature=" + changed(String(item.dropFirst("X-Amz-Signature=".count))) : String(item)
                }.joined(separator: "&")
            } else if let index = built.headers.firstIndex(where: { $0.name == "Authorization" }) {
                let value = built.headers[index].value
                let range = value.range(of: "Signature=")!
                built.headers[index].value =
                    String(value[..<range.upperBound]) + changed(String(value[range.upperBound...]))
            }
            return change == .signatureDigit
        case .date:
            let later = SigV4.amzDate(signingDate + TimeInterval(1 + Int(reader.byte())))
            if let raw = built.rawQuery {
                built.rawQuery = raw.split(separator: "&").map {
                    $0.hasPrefix("X-Amz-Date=") ? "X-Amz-Date=" + later : String($0)
                }.joined(separator: "&")
            } else if let index = built.headers.firstIndex(where: { $0.name == "x-amz-date" }) {
                built.headers[index].value = later
            }
            return true
        case .removedSignedHeader:
            let candidates = built.headers.indices.filter { signedNames.contains(built.headers[$0].name.lowercased()) }
            built.headers.remove(at: candidates[Int(reader.byte()) % candidates.count])
            return true
        case .repeatedSignedHeader:
            let candidates = built.headers.indices.filter { signedNames.contains(built.headers[$0].name.lowercased()) }
            let name = built.headers[candidates[Int(reader.byte()) % candidates.count]].name
            built.headers.append((name, "again" + headerValue(reader.string(upTo: 8))))
            return true
        case .headerNameCase:
            built.headers = built.headers.map { ($0.name.uppercased(), $0.value) }
            return false
        case .headerSpaces:
            // Runs of spaces inside a value are not part of what SigV4 signs.
            built.headers = built.headers.map { header in
                guard signedNames.contains(header.name.lowercased()) else { return header }
                return (header.name, header.value.replacingOccurrences(of: " ", with: "   "))
            }
            return false
        case .region:
            return true
        }
    }

    // MARK: SigV2

    static func checkSigV2(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let presigned = reader.byte() & 1 == 1
        // A presigned URL's skew reaches past its expiry (32 hours after the example's date).
        let skew =
            TimeInterval(Int16(bitPattern: UInt16(reader.byte()) << 8 | UInt16(reader.byte()))) * (presigned ? 4 : 1)
        var method = "GET"
        var path = "/photos/puppy.jpg"
        var query: [String] = []
        var headers: [(name: String, value: String)] = [("Host", "johnsmith.s3.amazonaws.com")]
        if presigned {
            query = [
                "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE", "Expires=\(v2Expires)",
                "Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D",
            ]
        } else {
            headers += [
                ("Date", "Tue, 27 Mar 2007 19:36:42 GMT"),
                ("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:l5OyHwmFwM1eA82pf/bAJD+zbsk="),
            ]
        }
        // Which changes touch what SigV2 signs: method, path, sub-resources, x-amz-* headers, date, signature.
        let signedChange: Bool
        switch reader.byte() % 9 {
        case 0:
            signedChange = false
        case 1:
            method = ["PUT", "HEAD", "DELETE"][Int(reader.byte()) % 3]
            signedChange = true
        case 2:
            // No NUL: a key with one is refused before any signature is looked at.
            path += ServerFuzzing.percentEncode("x" + reader.string(upTo: 6).filter { $0 != "\0" })
            signedChange = true
        case 3:
            query.append("acl")
            signedChange = true
        case 4:
            query.append("x-fuzz=" + ServerFuzzing.percentEncode(reader.string(upTo: 6)))
            signedChange = false
        case 5:
            headers.append(("x-fuzz-unsigned", headerValue(reader.string(upTo: 12))))
            signedChange = false
        case 6:
            headers.append(("x-amz-meta-note", headerValue(reader.string(upTo: 12))))
            signedChange = true
        case 7:
            if presigned {
                query[2] = "Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn9%3D"
            } else {
                headers[2].value = "AWS AKIAIOSFODNN7EXAMPLE:l5OyHwmFwM1eA82pf/bAJD+zbsK="
            }
            signedChange = true
        default:
            if presigned {
                query[1] = "Expires=\(v2Expires + 1 + Int(reader.byte()))"
            } else {
                headers[1].value = "Tue, 27 Mar 2007 19:36:43 GMT"
            }
            signedChange = true
        }
        let uri = path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        let head = HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: method), uri: uri, headers: HTTPHeaders(headers))
        guard let request = try? S3Request(head: head, virtualHostSuffixes: suffixes) else {
            throw FuzzFailure("SigV2 \(uri.debugDescription): not read")
        }
        try checkDecoding(request)
        let now = v2Date + skew
        let inTime =
            presigned ? now.timeIntervalSince1970 <= TimeInterval(v2Expires) : abs(skew) <= 900
        let authenticated: Bool
        if case .signed = try? authenticator.authenticate(request, now: now) {
            authenticated = true
        } else {
            authenticated = false
        }
        try expect(
            authenticated == (!signedChange && inTime),
            "SigV2 \(presigned ? "presigned" : "header") \(method) \(uri.debugDescription) skew \(skew): "
                + "authenticated \(authenticated)")
    }

    // MARK: Seeds

    /// Real requests the client's signer signed (as text heads) and a few picks of the signed-input form.
    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        let signer = SigV4Signer(credentials: credentials, region: region)
        func add(
            _ method: String, _ path: String, query: [(name: String, value: String)] = [], host: String,
            headers: [(name: String, value: String)] = [], payloadHash: String = SigV4.unsignedPayload
        ) {
            let signed = signer.sign(
                method: method, path: path, query: query, host: host, headers: headers, payloadHash: payloadHash,
                date: signingDate)
            let uri =
                SigV4.uriEncode(path, encodeSlash: false)
                + (query.isEmpty ? "" : "?" + SigV4.canonicalQueryString(query))
            let head = HTTPRequestHead(
                version: .http1_1, method: HTTPMethod(rawValue: method), uri: uri,
                headers: HTTPHeaders([("Host", host)] + headers + signed))
            seeds.append([0] + ServerFuzzing.text(of: head))
        }
        add("GET", "/photos/originals/a b+c.jpg", host: "127.0.0.1:9000", headers: [("range", "bytes=0-99")])
        add(
            "GET", "/photos", query: [("list-type", "2"), ("prefix", "originals/"), ("max-keys", "1000")],
            host: "127.0.0.1:9000")
        add(
            "PUT", "/photos/é/ü%?#.png", host: "127.0.0.1:9000",
            headers: [("content-type", "image/png"), ("x-amz-meta-note", "  two  spaces ")],
            payloadHash: SigV4.sha256Hex("body"))
        add("POST", "/photos/big.mov", query: [("uploads", "")], host: "127.0.0.1:9000")
        add(
            "PUT", "/k/a.jpg", query: [("partNumber", "3"), ("uploadId", "abc")], host: "photos.s3.localhost:9000",
            headers: [("x-amz-decoded-content-length", "66560")], payloadHash: SigV4.streamingPayload)
        add("DELETE", "/photos/gone", host: "localhost:9000", headers: [("if-match", "\"abc\"")])
        let presigned = signer.presignedQuery(
            method: "GET", path: "/photos/a.jpg", query: [("response-content-type", "image/jpeg")],
            host: "127.0.0.1:9000", expires: 3600, date: signingDate)
        seeds.append(Array("\0GET /photos/a.jpg?\(presigned) HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n\r\n".utf8))
        seeds.append(
            Array(
                ("\u{2}GET /photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=\(v2Expires)"
                    + "&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D HTTP/1.1\r\nHost: johnsmith.s3.amazonaws.com\r\n\r\n")
                    .utf8))
        seeds.append(
            Array(
                ("\u{2}GET /photos/puppy.jpg HTTP/1.1\r\nHost: johnsmith.s3.amazonaws.com\r\n"
                    + "Date: Tue, 27 Mar 2007 19:36:42 GMT\r\n"
                    + "Authorization: AWS AKIAIOSFODNN7EXAMPLE:l5OyHwmFwM1eA82pf/bAJD+zbsk=\r\n\r\n").utf8))
        // Signed-input form: header and presigned SigV4 with each change, SigV2 with each of its changes.
        for form: UInt8 in 0..<2 {
            for change in 0..<Change.allCases.count {
                var input: [UInt8] = [1, form, 0, form, 0]
                func add(_ text: String) { input += [UInt8(text.utf8.count)] + Array(text.utf8) }
                add("k/é?")
                input.append(1)
                add("pa")
                add("x")
                input += [1, 0]
                add("bytes=0-9")
                input += [1, 1, 0, 10, 3, UInt8(change), 5, 1, 2, 3, 4, 5]
                seeds.append(input)
            }
        }
        for presigned: UInt8 in 0..<2 {
            for change: UInt8 in 0..<9 { seeds.append([1, 2, presigned, 0, 10, change, 3, 65, 66, 67]) }
        }
        return seeds
    }
}
