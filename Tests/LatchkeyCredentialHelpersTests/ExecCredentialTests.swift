import Foundation
import LatchkeyLauncher
import Testing

@testable import LatchkeyBrokerWire
@testable import LatchkeyCredentialHelpers
@testable import LatchkeyVault

/// The client-go credential plugin exchange, pinned field by field against the Kubernetes
/// documentation's `client.authentication.k8s.io` v1 and v1beta1 types (docs/kubernetes-and-registries.md).
@Suite("kubectl credential plugin: KUBERNETES_EXEC_INFO and the ExecCredential answer")
struct ExecCredentialTests {
    /// The answer as a JSON object, through the encoder `Output.json` uses.
    func answer(_ credential: ExecCredential) throws -> [String: Any] {
        let text = try ReportJSON.text(of: credential)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(
        "kubectl's request is read for its apiVersion and spec.interactive, in both versions",
        arguments: ExecCredentialAPIVersion.allCases)
    func readsRequest(version: ExecCredentialAPIVersion) throws {
        let interactive = try ExecCredentialRequest(
            parsing: #"{"kind":"ExecCredential","apiVersion":"\#(version.rawValue)","spec":{"interactive":true}}"#)
        #expect(interactive == ExecCredentialRequest(apiVersion: version, interactive: true))
        // A spec without interactive: not interactive.
        let quiet = try ExecCredentialRequest(parsing: #"{"kind":"ExecCredential","apiVersion":"\#(version.rawValue)","spec":{}}"#)
        #expect(quiet == ExecCredentialRequest(apiVersion: version, interactive: false))
    }

    @Test("spec.cluster (provideClusterInfo) and members a later Kubernetes adds are ignored")
    func ignoresUnknownMembers() throws {
        let request = try ExecCredentialRequest(
            parsing: """
                {"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","metadata":{},
                 "spec":{"cluster":{"server":"https://127.0.0.1:6443","certificate-authority-data":"AA=="},"interactive":false,"future":1}}
                """)
        #expect(request == ExecCredentialRequest(apiVersion: .v1, interactive: false))
    }

    @Test("an apiVersion Latchkey does not answer is refused, naming it and the ones it answers")
    func unknownVersion() {
        let text = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1","spec":{}}"#
        #expect(throws: ExecCredentialError.unknownAPIVersion("client.authentication.k8s.io/v1alpha1")) {
            try ExecCredentialRequest(parsing: text)
        }
        let message = ExecCredentialError.unknownAPIVersion("client.authentication.k8s.io/v1alpha1").description
        #expect(message.contains("\"client.authentication.k8s.io/v1alpha1\""))
        #expect(message.contains("client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1"))
        #expect(!message.contains("\n"))
    }

    @Test(
        "a malformed KUBERNETES_EXEC_INFO is refused with what was wrong",
        arguments: [
            (nil, ExecCredentialError.notSet),
            ("", .notJSON),
            ("{", .notJSON),
            ("[]", .notJSON),
            (#"{"apiVersion":"client.authentication.k8s.io/v1"}"#, .notAnExecCredential),
            (#"{"kind":"Config","apiVersion":"client.authentication.k8s.io/v1"}"#, .notAnExecCredential),
            (#"{"kind":"ExecCredential"}"#, .noAPIVersion),
            (#"{"kind":"ExecCredential","apiVersion":1}"#, .noAPIVersion),
            (
                #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":[]}"#,
                .badMember("spec", expected: "an object")
            ),
            (
                #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":"yes"}}"#,
                .badMember("spec.interactive", expected: "true or false")
            ),
        ] as [(String?, ExecCredentialError)])
    func malformed(text: String?, expected: ExecCredentialError) {
        #expect(throws: expected) { try ExecCredentialRequest(parsing: text) }
        #expect(expected.category == .usage)
        #expect(expected.description.hasPrefix("KUBERNETES_EXEC_INFO"))
    }

    @Test(
        "the answer is apiVersion, kind ExecCredential and status {token, expirationTimestamp}, nothing else",
        arguments: ExecCredentialAPIVersion.allCases)
    func answerShape(version: ExecCredentialAPIVersion) throws {
        let expiry = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
        let object = try answer(ExecCredential(apiVersion: version, token: Secret("fake-access-token"), expiresAt: expiry))
        #expect(Set(object.keys) == ["apiVersion", "kind", "status"])
        #expect(object["apiVersion"] as? String == version.rawValue)
        #expect(object["kind"] as? String == "ExecCredential")
        let status = try #require(object["status"] as? [String: Any])
        #expect(Set(status.keys) == ["token", "expirationTimestamp"])
        #expect(status["token"] as? String == "fake-access-token")
        #expect(status["expirationTimestamp"] as? String == "2026-01-01T00:00:00Z")
    }

    @Test("expirationTimestamp is RFC 3339 UTC rounded down to the second: never after the token expires")
    func expiryRoundsDown() {
        let credential = ExecCredential(
            apiVersion: .v1, token: Secret("t"), expiresAt: Date(timeIntervalSince1970: 1_767_225_600 + 59.999))
        #expect(credential.expirationTimestamp == "2026-01-01T00:00:59Z")
    }

    @Test("a token without a known lifetime is answered without expirationTimestamp")
    func noExpiry() throws {
        let object = try answer(ExecCredential(apiVersion: .v1beta1, token: Secret("t"), expiresAt: nil))
        let status = try #require(object["status"] as? [String: Any])
        #expect(Set(status.keys) == ["token"])
    }
}

@Suite("latchkey kubeconfig: the users[].exec and contexts[] entries")
struct KubeconfigEntryTests {
    @Test("the v1beta1 entry runs latchkey kubectl-credential SELECTOR and ties the cluster to the user")
    func v1beta1() {
        let entry = KubeconfigEntry(
            selector: AccountSelector(parsing: "google:alice@example.com"), cluster: "prod", apiVersion: .v1beta1, command: "latchkey")
        #expect(
            entry.yaml == """
                users:
                - name: "latchkey-google:alice@example.com"
                  user:
                    exec:
                      apiVersion: "client.authentication.k8s.io/v1beta1"
                      command: "latchkey"
                      args:
                      - "kubectl-credential"
                      - "google:alice@example.com"
                contexts:
                - name: "prod"
                  context:
                    cluster: "prod"
                    user: "latchkey-google:alice@example.com"

                """)
        #expect(
            entry.setCredentialsArguments == [
                "config", "set-credentials", "latchkey-google:alice@example.com", "--exec-command=latchkey",
                "--exec-api-version=client.authentication.k8s.io/v1beta1", "--exec-arg=kubectl-credential",
                "--exec-arg=google:alice@example.com",
            ])
        #expect(
            entry.setContextArguments == ["config", "set-context", "prod", "--cluster=prod", "--user=latchkey-google:alice@example.com"])
    }

    @Test("a v1 entry says interactiveMode, which v1 requires")
    func v1() {
        let entry = KubeconfigEntry(selector: AccountSelector(parsing: "a"), cluster: "c", apiVersion: .v1, command: "/opt/bin/latchkey")
        #expect(entry.yaml.contains("      interactiveMode: \"IfAvailable\"\n"))
        #expect(entry.setCredentialsArguments.last == "--exec-interactive-mode=IfAvailable")
        #expect(entry.yaml.contains("command: \"/opt/bin/latchkey\""))
    }

    @Test("--write changes --kubeconfig, else KUBECONFIG's one file, else ~/.kube/config; several files are refused")
    func fileToWrite() throws {
        #expect(try KubeconfigWriter.file(option: "/k/c", environment: ["KUBECONFIG": "/a:/b", "HOME": "/h"]) == "/k/c")
        #expect(try KubeconfigWriter.file(option: nil, environment: ["KUBECONFIG": "/a", "HOME": "/h"]) == "/a")
        #expect(try KubeconfigWriter.file(option: nil, environment: ["KUBECONFIG": "", "HOME": "/h"]) == "/h/.kube/config")
        #expect(throws: KubeconfigError.severalFiles) { try KubeconfigWriter.file(option: nil, environment: ["KUBECONFIG": "/a:/b"]) }
        #expect(throws: KubeconfigError.noHome) { try KubeconfigWriter.file(option: nil, environment: [:]) }
    }

    @Test("names with quotes, colons or line breaks stay one YAML string each")
    func quoting() {
        let entry = KubeconfigEntry(
            selector: AccountSelector(parsing: "a:x\"y\nz"), cluster: "c: #1", apiVersion: .v1beta1, command: "latchkey")
        #expect(entry.yaml.contains(#"- "a:x\"y\nz""#))
        #expect(entry.yaml.contains(#"- name: "c: #1""#))
    }
}
