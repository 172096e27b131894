import AWSSigV4
import Essentials
import Foundation
import Testing

/// Vectors from the S3 documentation's "Signature Calculations for the
/// Authorization Header" examples (examplebucket, 2013-05-24).
struct SigV4Tests {
    let signer = SigV4Signer(
        credentials: AWSCredentials(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    let date = SigV4.parseAmzDate("20130524T000000Z")!

    @Test func getObjectWithRangeMatchesAWSExample() {
        let headers = signer.sign(
            method: "GET", path: "/test.txt", host: "examplebucket.s3.amazonaws.com",
            headers: [("Range", "bytes=0-9")], payloadHash: SigV4.emptyPayloadHash, date: date)
        let auth = headers.first { $0.name == "Authorization" }!.value
        #expect(
            auth
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
    }

    @Test func listObjectsQueryMatchesAWSExample() {
        let headers = signer.sign(
            method: "GET", path: "/", query: [("max-keys", "2"), ("prefix", "J")],
            host: "examplebucket.s3.amazonaws.com", payloadHash: SigV4.emptyPayloadHash, date: date)
        let auth = headers.first { $0.name == "Authorization" }!.value
        #expect(auth.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
    }

    @Test func presignedURLMatchesAWSExample() {
        let query = signer.presignedQuery(
            method: "GET", path: "/test.txt", host: "examplebucket.s3.amazonaws.com", expires: 86400, date: date)
        #expect(query.contains("X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
    }

    @Test func uriEncodeEncodesReservedBytesButKeepsSlashInPaths() {
        #expect(SigV4.uriEncode("a b+c~d=e@f/ü%", encodeSlash: false) == "a%20b%2Bc~d%3De%40f/%C3%BC%25")
        #expect(SigV4.uriEncode("a/b") == "a%2Fb")
        #expect(SigV4.percentDecode("a%20b%2Bc+") == "a b+c+")
        #expect(SigV4.percentDecode("%zz") == nil)
        #expect(SigV4.percentDecode("%ff") == nil)
    }

    @Test func authorizationHeaderRoundTrips() {
        let headers = signer.sign(method: "GET", path: "/x", host: "h", date: date)
        let auth = SigV4Authorization(header: headers[0].value)
        #expect(auth?.accessKeyID == "AKIAIOSFODNN7EXAMPLE")
        #expect(auth?.region == "us-east-1")
        #expect(auth?.signedHeaders == ["host", "x-amz-content-sha256", "x-amz-date"])
        #expect(SigV4Authorization(header: "Basic abc") == nil)
    }

    @Test func chunkSignaturesMatchAWSStreamingExample() {
        // From "Signature Calculations for the Authorization Header: Transferring
        // Payload in Multiple Chunks": 64 KiB of 'a', then 1 KiB of 'a', then the final chunk.
        var chunker = SigV4ChunkSigner(
            secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", amzDate: "20130524T000000Z", region: "us-east-1",
            service: "s3", seedSignature: "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
        #expect(
            chunker.nextSignature(for: [UInt8](repeating: 97, count: 65536))
                == "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648")
        #expect(
            chunker.nextSignature(for: [UInt8](repeating: 97, count: 1024))
                == "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497")
        #expect(
            chunker.nextSignature(for: [UInt8]())
                == "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9")
    }

    @Test func repeatedAndMixedCaseHeaderNamesMergeInOrderInTheCanonicalRequest() {
        let canonical = SigV4.canonicalRequest(
            method: "GET", canonicalURI: "/k", canonicalQuery: "",
            headers: [("X-Amz-Meta-B", " 2 "), ("host", "h"), ("x-amz-meta-b", "1"), ("X-Amz-Meta-A", "a  z")],
            payloadHash: SigV4.unsignedPayload)
        #expect(canonical.signedHeaders == "host;x-amz-meta-a;x-amz-meta-b")
        #expect(
            canonical.request
                == "GET\n/k\n\nhost:h\nx-amz-meta-a:a z\nx-amz-meta-b:2,1\n\nhost;x-amz-meta-a;x-amz-meta-b\nUNSIGNED-PAYLOAD"
        )
    }

    @Test func headerValuesAreTrimmedAndTheirSpaceRunsCollapsed() {
        #expect(SigV4.canonicalHeaderValue("  a   b  c ") == "a b c")
        #expect(SigV4.canonicalHeaderValue("\tvalue\t") == "value")
        #expect(SigV4.canonicalHeaderValue("plain") == "plain")
        #expect(SigV4.canonicalHeaderValue("   ") == "")
        #expect(SigV4.canonicalHeaderValue(" caf\u{E9}  \u{1F4F7} ") == "caf\u{E9} \u{1F4F7}")
        #expect(ASCII.trimmingSpaces("\t x y \t") == "x y")
        #expect(ASCII.trimmingSpaces("") == "")
    }

    @Test func theDerivedSigningKeyIsTheSameWhetherComputedOrRemembered() {
        // The key from the AWS documentation's derivation example, twice (the second comes from the cache).
        for _ in 0..<2 {
            let key = SigV4.signingKey(
                secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", date: "20120215", region: "us-east-1",
                service: "iam")
            #expect(
                key.withUnsafeBytes { SigV4.hex($0) }
                    == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
        }
        // A different scope is not served the remembered key.
        let other = SigV4.signingKey(
            secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", date: "20120216", region: "us-east-1", service: "iam")
        #expect(
            other.withUnsafeBytes { SigV4.hex($0) }
                != "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    @Test func amzDateRoundTripsThroughItsParser() {
        for text in ["20130524T000000Z", "19700101T000000Z", "20261122T235959Z", "20000229T120102Z"] {
            #expect(SigV4.amzDate(SigV4.parseAmzDate(text)!) == text)
        }
    }
}
