import FakeS3
import Foundation
import TestSupport
import Testing

@Suite("Admin endpoint", .heavy)
struct AdminEndpointTests {
    @Test func adminEndpointIsAbsentUnlessFaultsAreEnabled() async throws {
        try await withServer { server, client in
            let r = try await TestHTTPClient.send(
                port: client.port, method: "POST", uri: "/_fake-s3/faults", headers: [],
                body: Data(#"{"fault":{"type":"internalError"}}"#.utf8))
            // Without faults enabled the path is just an (invalid) S3 request.
            #expect(r.status >= 400)
            #expect(r.errorCode != nil)
            #expect(server.faults.all.isEmpty)
        }
    }

    @Test func faultsCanBeAddedListedAndClearedOverHTTP() async throws {
        try await withServer(configure: { $0.faultsEnabled = true }) { server, client in
            try server.putObject(bucket: "photos", key: "originals/a", data: Data("a".utf8))
            let rule =
                #"{"keyPattern":"originals/*","method":"GET","times":1,"fault":{"type":"slowDown","retryAfterSeconds":3}}"#
            let added = try await TestHTTPClient.send(
                port: client.port, method: "POST", uri: "/_fake-s3/faults", headers: [], body: Data(rule.utf8))
            #expect(added.status == 200)
            #expect(server.faults.all.count == 1)
            let failed = try await client.send("GET", "/photos/originals/a")
            #expect(failed.status == 503)
            #expect(failed.header("Retry-After") == "3")
            let log = try await TestHTTPClient.send(port: client.port, method: "GET", uri: "/_fake-s3/log", headers: [])
            #expect(log.text.contains("\"status\":503"))
            let cleared = try await TestHTTPClient.send(
                port: client.port, method: "DELETE", uri: "/_fake-s3/faults", headers: [])
            #expect(cleared.status == 204)
            #expect(server.faults.all.isEmpty)
        }
    }

    @Test func invalidFaultDocumentIs400() async throws {
        try await withServer(configure: { $0.faultsEnabled = true }) { server, client in
            let r = try await TestHTTPClient.send(
                port: client.port, method: "POST", uri: "/_fake-s3/faults", headers: [],
                body: Data(#"{"fault":{"type":"explode"}}"#.utf8))
            #expect(r.status == 400)
            #expect(server.faults.all.isEmpty)
        }
    }
}
