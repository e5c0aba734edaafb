import Foundation
import StrataClient
import StrataWire

/// Where to connect and how, as given on the command line (each part
/// optional).
///
/// Precedence: options after the command, then options before it, then
/// `STRATA_HOST`, `STRATA_PORT`, `STRATA_URL`, `STRATA_AUTH_TOKEN`,
/// `STRATA_TIMEOUT`, `STRATA_TLS`, `STRATA_TLS_CA`, `STRATA_TLS_CERT` and
/// `STRATA_TLS_KEY`, then 127.0.0.1:7420 over plain TCP. `--host` and
/// `--port` win over a `--url` given at the same level.
struct ConnectionSettings: Sendable {
    var host: String?
    var port: Int?
    var url: String?
    var authToken: String?
    var authTokenFile: String?
    var timeout: Double?
    var tls: Bool?
    var tlsCA: String?
    var tlsCertificate: String?
    var tlsKey: String?
    var insecure: Bool?

    /// The option names, each taking one value.
    static let optionNames: Set<String> = [
        "--host", "-h", "--port", "-p", "--url", "--auth-token", "--auth-token-file", "--timeout", "--tls-ca", "--tls-cert", "--tls-key",
    ]
    /// The option names taking no value.
    static let flagNames: Set<String> = ["--tls", "--insecure"]

    /// Splits the connection options placed before the command name off
    /// `arguments` (`--host H`, `--host=H`, `--tls`, …), returning them and
    /// the rest of the arguments to parse as usual.
    static func extractLeading(_ arguments: [String]) throws(CLIError) -> (ConnectionSettings, [String]) {
        var settings = ConnectionSettings()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if flagNames.contains(argument) {
                if argument == "--insecure" { settings.insecure = true } else { settings.tls = true }
                index += 1
                continue
            }
            let name: String, value: String
            if let equals = argument.firstIndex(of: "="), optionNames.contains(String(argument[..<equals])) {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
                index += 1
            } else if argument.count > 2, ["-h", "-p"].contains(String(argument.prefix(2))), !argument.hasPrefix("--") {
                // psql's attached form: -p7420, -hdb.example.com.
                name = String(argument.prefix(2))
                value = String(argument.dropFirst(2))
                index += 1
            } else if optionNames.contains(argument) {
                guard index + 1 < arguments.count else {
                    throw .usage("missing value for '\(argument)'" + (argument == "-h" ? " (-h is the host, as in psql; help is --help)" : ""))
                }
                name = argument
                value = arguments[index + 1]
                index += 2
            } else {
                break
            }
            switch name {
            case "--host", "-h": settings.host = value
            case "--port", "-p":
                guard let port = Int(value) else { throw .usage("\(name): '\(value)' is not a port number") }
                settings.port = port
            case "--url": settings.url = value
            case "--auth-token-file": settings.authTokenFile = value
            case "--timeout":
                guard let seconds = Double(value) else { throw .usage("--timeout: '\(value)' is not a number of seconds") }
                settings.timeout = seconds
            case "--tls-ca": settings.tlsCA = value
            case "--tls-cert": settings.tlsCertificate = value
            case "--tls-key": settings.tlsKey = value
            default: settings.authToken = value
            }
        }
        return (settings, Array(arguments[index...]))
    }

    /// The client configuration: these settings over `fallback` over the
    /// environment over the defaults.
    func configuration(over fallback: ConnectionSettings = ConnectionSettings()) throws(CLIError) -> ClientConfiguration {
        let environment = ProcessInfo.processInfo.environment
        func variable(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        // A URL gives a host, a port and TLS, below the explicit options of
        // its own level.
        func parts(_ text: String?, _ source: String) throws(CLIError) -> (host: String?, port: Int?, tls: Bool?) {
            guard let text else { return (nil, nil, nil) }
            guard let url = ServerURL(text) else {
                throw .usage("\(source): '\(text)' is not tcp://HOST:PORT or tls://HOST:PORT")
            }
            return (url.host, url.port, url.usesTLS)
        }
        let own = try parts(url, "--url"), fallen = try parts(fallback.url, "--url"), environmental = try parts(variable("STRATA_URL"), "STRATA_URL")
        let host = self.host ?? own.host ?? fallback.host ?? fallen.host ?? variable("STRATA_HOST") ?? environmental.host ?? "127.0.0.1"
        var port = self.port ?? own.port ?? fallback.port ?? fallen.port
        if port == nil, let text = variable("STRATA_PORT") {
            guard let value = Int(text) else { throw .usage("STRATA_PORT: '\(text)' is not a port number") }
            port = value
        }
        let resolvedPort = port ?? environmental.port ?? WireProtocol.defaultPort
        guard (1...65_535).contains(resolvedPort) else { throw .usage("port \(resolvedPort) is not within 1…65535") }
        var token = authToken ?? fallback.authToken
        if token == nil, let file = authTokenFile ?? fallback.authTokenFile {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw .usage("--auth-token-file: cannot read \(file): \(FileManager.default.fileExists(atPath: file) ? "not readable" : "no such file")")
            }
            guard let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }),
                  !line.isEmpty else {
                throw .usage("--auth-token-file: the first line of \(file) is empty")
            }
            token = line
        }
        token = token ?? variable("STRATA_AUTH_TOKEN")
        var timeout = self.timeout ?? fallback.timeout
        if timeout == nil, let text = variable("STRATA_TIMEOUT") {
            guard let value = Double(text) else { throw .usage("STRATA_TIMEOUT: '\(text)' is not a number of seconds") }
            timeout = value
        }
        if let timeout, !(timeout > 0 && timeout <= 86_400) { throw .usage("--timeout must be more than 0 and at most 86400 seconds") }
        let urlTLS = own.tls ?? fallen.tls ?? environmental.tls
        let tls: ClientTLS?
        do {
            tls = try ClientTLS.resolve(flag: self.tls ?? fallback.tls ?? urlTLS, trustedCA: tlsCA ?? fallback.tlsCA,
                                        certificateChain: tlsCertificate ?? fallback.tlsCertificate, privateKey: tlsKey ?? fallback.tlsKey,
                                        environment: environment)
        } catch {
            throw .usage(error.message)
        }
        var configuration = ClientConfiguration(host: host, port: resolvedPort, clientName: "strata", authToken: token, tls: tls,
                                                allowsPlaintextToken: insecure ?? fallback.insecure ?? false)
        if let timeout { configuration.connectTimeout = .milliseconds(Int64((timeout * 1000).rounded())) }
        return configuration
    }
}
