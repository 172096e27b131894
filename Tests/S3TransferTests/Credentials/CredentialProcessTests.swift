import AWSSigV4
import Foundation
import TestSupport
import Testing

@testable import S3Transfer

@Suite("Credentials: credential_process", .heavy)
struct CredentialProcessTests {
    /// A profile whose credential_process is `command`.
    func sandbox(_ command: (CredentialSandbox) throws -> String) throws -> CredentialSandbox {
        let sandbox = try CredentialSandbox()
        try sandbox.writeConfig("[profile tool]\ncredential_process = \(try command(sandbox))\n")
        return sandbox
    }

    @Test func runsTheCommandWithItsArgumentsAndReadsItsJSON() async throws {
        let expiration = Date(timeIntervalSince1970: 1_900_000_000)
        let json = credentialsJSON(key: "ARGS", expiration: expiration)
        // The script prints the JSON with the access key id made of its arguments, one per `|`.
        let sandbox = try sandbox { sandbox in
            let path = try sandbox.script(
                "tool.sh", "IFS='|'; printf '%s' '\(json)' | sed \"s/ARGS/$*/\"")
            return "\(path) \"two words\" 'single' back\\ slash"
        }
        defer { sandbox.remove() }
        let found = try await sandbox.resolve(sandbox.context(profile: "tool"))
        #expect(
            found?.credentials
                == AWSCredentials(
                    accessKeyID: "two words|single|back slash", secretAccessKey: "secret", sessionToken: "token"))
        #expect(found?.expiration == expiration)
        #expect(found?.origin.provider == "custom-process" && found?.origin.profile == "tool")
    }

    @Test func noShellEverSeesTheCommand() async throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("injected-\(UUID().uuidString)")
        let sandbox = try sandbox { sandbox in
            let path = try sandbox.script("ok.sh", "printf '%s' '\(credentialsJSON(key: "OK"))'")
            return "\(path) ; touch \(marker.path) $(touch \(marker.path)) `touch \(marker.path)`"
        }
        defer { sandbox.remove() }
        #expect(try await sandbox.resolve(sandbox.context(profile: "tool"))?.credentials.accessKeyID == "OK")
        #expect(!FileManager.default.fileExists(atPath: marker.path), "a shell ran part of the command")
    }

    @Test func outputThatIsNotTheCredentialsJSONIsAnErrorThatNeverQuotesIt() async throws {
        for (output, reason) in [
            ("AKIA-SECRET-LOOKING garbage", "not a JSON object"),
            (#"{"Version": 1, "AccessKeyId": "K"}"#, "SecretAccessKey is missing"),
            (#"{"Version": 1, "AccessKeyId": 7, "SecretAccessKey": "s"}"#, "AccessKeyId is not a string"),
            (#"{"Version": 2, "AccessKeyId": "K", "SecretAccessKey": "s"}"#, "Version is 2"),
            (#"{"AccessKeyId": "K", "SecretAccessKey": "s"}"#, "Version is missing"),
            (#"{"Version": 1, "AccessKeyId": "K", "SecretAccessKey": "s", "Expiration": "soon"}"#, "not an ISO 8601"),
        ] {
            let sandbox = try sandbox { try $0.script("bad.sh", "printf '%s' '\(output)'") }
            defer { sandbox.remove() }
            let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(profile: "tool")) }
            guard case .processFailed(let command, let why) = error else {
                Issue.record("expected processFailed for \(output), got \(String(describing: error))")
                continue
            }
            #expect(command == "/bin/sh")
            #expect(why.contains(reason), "\(why)")
            #expect(!error!.description.contains("AKIA-SECRET"), "the output is never quoted")
        }
    }

    @Test func aFailingCommandReportsItsStatusAndFirstErrorLine() async throws {
        let sandbox = try sandbox {
            try $0.script("fail.sh", "echo 'token expired, run login' >&2; echo more >&2; exit 3")
        }
        defer { sandbox.remove() }
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(profile: "tool")) }
        #expect(
            error?.description.contains("exited with status 3: token expired, run login") == true,
            "\(String(describing: error))")
        #expect(error?.description.contains("more") == false)
    }

    @Test func aCommandThatDoesNotEndInTimeIsKilled() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("pid-\(UUID().uuidString)")
        let sandbox = try sandbox { try $0.script("hang.sh", "echo $$ > \(pidFile.path); exec sleep 30") }
        defer { sandbox.remove() }
        var settings = CredentialSettings(profile: "tool")
        settings.processTimeout = 0.5
        // (Had it run its 30 s, it would have ended without printing credentials: another error.)
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(settings: settings)) }
        #expect(
            error?.description.contains("did not finish within 0.5 s and was killed") == true,
            "\(String(describing: error))")
        let pid = Int32(
            try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(kill(pid, 0) != 0, "the process was killed and reaped")
        try? FileManager.default.removeItem(at: pidFile)
    }

    /// Whether process `pid` is gone (`kill(pid, 0)` fails with `ESRCH`).
    static func isGone(_ pid: Int32) -> Bool { kill(pid, 0) != 0 && errno == ESRCH }

    @Test func aTimeoutKillsTheProcessesTheCommandStarted() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("pid-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        // The shell starts a child of its own and waits for it: the child is the command's grandchild.
        let sandbox = try sandbox { try $0.script("hang.sh", "sleep 3600 & echo $! > \(pidFile.path); wait") }
        defer { sandbox.remove() }
        var settings = CredentialSettings(profile: "tool")
        settings.processTimeout = 0.5
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(settings: settings)) }
        #expect(error?.description.contains("was killed") == true, "\(String(describing: error))")
        let grandchild = try #require(
            Int32(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let gone = Self.isGone(grandchild)
        if !gone { kill(grandchild, SIGKILL) }
        #expect(gone, "the command's child \(grandchild) outlived the timeout")
    }

    @Test func cancellingTheRunKillsTheCommandAndItsChildren() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("pids").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let script = folder.appendingPathComponent("hang.sh")
        try "#!/bin/sh\nsleep 3600 & echo \"$$ $!\" > \(fifo); wait\n".write(
            to: script, atomically: true, encoding: .utf8)
        #expect(chmod(script.path, 0o755) == 0)
        let run = Task {
            await CredentialProcessRunner.run(
                [script.path], environment: ["PATH": "/usr/bin:/bin"], timeout: 600, outputLimit: 1000)
        }
        // Opening the FIFO waits for the script to write both pids: the run is under way.
        let text = await Task.detached { () -> String in
            let fd = open(fifo, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return "" }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 256)
            var count = 0
            while count < bytes.count {
                let n = read(fd, &bytes[count], bytes.count - count)
                if n <= 0 { break }
                count += n
            }
            return String(decoding: bytes[..<count], as: UTF8.self)
        }.value
        let pids = text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(pids.count == 2, "\(pids)")
        run.cancel()
        let result = await run.value
        guard case .failure(.cancelled) = result else {
            Issue.record("expected a cancelled run, got \(result)")
            return
        }
        for pid in pids {
            let gone = Self.isGone(pid)
            if !gone { kill(pid, SIGKILL) }
            #expect(gone, "process \(pid) outlived the cancellation")
        }
    }

    @Test func outputBeyondTheLimitIsRefused() async throws {
        let sandbox = try sandbox { try $0.script("flood.sh", "exec yes credentials") }
        defer { sandbox.remove() }
        var settings = CredentialSettings(profile: "tool")
        settings.processOutputLimit = 1000
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(settings: settings)) }
        #expect(error?.description.contains("more than 1000 bytes") == true, "\(String(describing: error))")
    }

    @Test func aCommandThatCannotStartNamesIt() async throws {
        let sandbox = try sandbox { _ in "/nonexistent/tool --flag" }
        defer { sandbox.remove() }
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(profile: "tool")) }
        #expect(
            error?.description.hasPrefix("credential_process /nonexistent/tool failed: it cannot be started") == true,
            "\(String(describing: error))")
    }

    @Test func anUnclosedQuoteIsRefusedBeforeAnythingRuns() async throws {
        let sandbox = try sandbox { _ in "/bin/echo 'open" }
        defer { sandbox.remove() }
        let error = await credentialError { _ = try await sandbox.resolve(sandbox.context(profile: "tool")) }
        #expect(error?.description.contains("a quote is never closed") == true, "\(String(describing: error))")
    }

    @Test func theCommandGetsTheChainsEnvironment() async throws {
        let sandbox = try sandbox {
            try $0.script(
                "env.sh", "printf '{\"Version\":1,\"AccessKeyId\":\"%s\",\"SecretAccessKey\":\"s\"}' \"$TOOL_ACCOUNT\"")
        }
        defer { sandbox.remove() }
        let found = try await sandbox.resolve(sandbox.context(["TOOL_ACCOUNT": "acct-7"], profile: "tool"))
        #expect(found?.credentials.accessKeyID == "acct-7")
        #expect(found?.credentials.sessionToken == nil && found?.expiration == nil)
    }
}
