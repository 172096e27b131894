import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite("Credentials: the shared files' INI dialect", .heavy)
struct ProfileFileTests {
    @Test func readsSectionsKeysCommentsContinuationsAsBotocoreDoes() throws {
        let text =
            "\u{FEFF}# a comment\r\n[default]\r\naws_access_key_id = AKID \r\n; another\nAWS_Secret_Access_Key:sec#ret\n"
            + "\n[profile photos]\nregion=eu-west-1\ns3 =\n  addressing_style = path\n  max_concurrent_requests = 4\n"
        let sections = try ProfileFile.parse(Data(text.utf8), path: "/x")
        #expect(sections.map(\.name) == ["default", "profile photos"])
        #expect(sections[0].values == ["aws_access_key_id": "AKID", "aws_secret_access_key": "sec#ret"])
        #expect(sections[1].values["region"] == "eu-west-1")
        #expect(sections[1].values["s3"] == "\naddressing_style = path\nmax_concurrent_requests = 4")
    }

    @Test(arguments: [
        ("key = value\n[default]\n", 1, "before any [section]"),
        ("[default]\njust words\n", 2, "expected key = value"),
        ("[a]\nx = 1\n[a]\n", 3, "[a] appears twice"),
        ("[a]\nx = 1\nX = 2\n", 3, "x appears twice in [a]"),
        ("[a]\n = 2\n", 2, "without a key"),
        ("[a]\n[]\n", 2, "expected key = value"),
    ])
    func refusesMalformedFilesNamingTheLine(text: String, line: Int, reason: String) {
        #expect(throws: (any Error).self) { try ProfileFile.parse(Data(text.utf8), path: "/home/u/.aws/credentials") }
        do {
            _ = try ProfileFile.parse(Data(text.utf8), path: "/home/u/.aws/credentials")
        } catch {
            guard case .malformedFile(let path, let at, let why) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == "/home/u/.aws/credentials" && at == line && why.contains(reason), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func refusesBytesThatAreNotUTF8() {
        #expect(throws: CredentialError.malformedFile(path: "/f", line: 1, reason: "it is not UTF-8 text")) {
            try ProfileFile.parse(Data([0x5B, 0x61, 0x5D, 0x0A, 0xFF, 0xFE]), path: "/f")
        }
    }

    @Test func profilesAreBracketedNamesInTheCredentialsFileAndProfileSectionsInTheConfigFile() throws {
        let credentials = try ProfileFile.parse(Data("[photos]\na = 1\n[profile odd]\nb = 2\n".utf8), path: "c")
        let config = try ProfileFile.parse(
            Data(
                "[default]\nregion = r0\n[profile photos]\na = config\nregion = r1\n[photos2]\nx = 1\n[sso-session s]\n"
                    .utf8),
            path: "f")
        let profiles = SharedProfiles(
            credentialsPath: "c", configPath: "f", credentialsSections: credentials, configSections: config)
        #expect(profiles.contains("photos") && profiles.contains("default") && profiles.contains("profile odd"))
        #expect(!profiles.contains("photos2"), "[photos2] in the config file is not a profile")
        #expect(!profiles.contains("s"))
        #expect(profiles.merged("photos") == ["a": "1", "region": "r1"], "the credentials file's keys win")
        #expect(profiles.merged("default") == ["region": "r0"])
        #expect(profiles.merged("nobody") == nil)
    }
}

@Suite("Credentials: credential_process is split as shlex.split does, never run by a shell", .heavy)
struct ShellWordsTests {
    @Test(arguments: [
        ("/bin/tool --profile x", ["/bin/tool", "--profile", "x"]),
        ("a\"b c\"d", ["ab cd"]),
        ("'x y'z", ["x yz"]),
        ("a\\ b", ["a b"]),
        ("\"a\\qb\"", ["a\\qb"]),
        ("\"a\\\"b\"", ["a\"b"]),
        ("\"\"", [""]),
        ("  a \t b  ", ["a", "b"]),
        ("tool; rm -rf ~ $(id) `id` | cat", ["tool;", "rm", "-rf", "~", "$(id)", "`id`", "|", "cat"]),
    ])
    func splitsLikeShlex(line: String, words: [String]) throws {
        #expect(try ShellWords.split(line) == words)
    }

    @Test func refusesUnclosedQuotesAndATrailingBackslash() {
        #expect(throws: ShellWords.Failure.unclosedQuote) { try ShellWords.split("tool 'open") }
        #expect(throws: ShellWords.Failure.unclosedQuote) { try ShellWords.split("tool \"open") }
        #expect(throws: ShellWords.Failure.trailingBackslash) { try ShellWords.split("tool \\") }
    }
}
