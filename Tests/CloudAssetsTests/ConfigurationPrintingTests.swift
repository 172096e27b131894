import CloudAssets
import Foundation
import Testing

/// A configuration printed, logged or dumped shows no secret.
@Suite struct ConfigurationPrintingTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let token = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"

    @Test("print, debugPrint and dump of a configuration with fixed keys show the key id, never the secret or token")
    func secretsAreRedacted() {
        var configuration = AssetLibrary.Configuration(storeURL: URL(fileURLWithPath: "/tmp/library"))
        configuration.credentials = .static(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: Self.secret, sessionToken: Self.token)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), dumped] {
            #expect(!text.contains(Self.secret) && !text.contains(Self.token))
            #expect(text.contains("AKIDEXAMPLE") && text.contains("<redacted>"))
        }
        #expect("\(Credentials.profile("work"))" == "profile(work)")
    }

    @Test("a network policy prints as its name")
    func policiesPrintAsNames() {
        #expect(String(reflecting: NetworkPolicy.offline) == "offline")
        #expect("\(NetworkPolicy.userRequestsOnly)" == "userRequestsOnly")
    }
}
