import Foundation
import StrataClient
import StrataWire

/// Where to connect and how, as given on the command line (each part
/// optional).
///
/// Precedence: options after the command, then options before it, then
/// `STRATA_HOST`, `STRATA_PORT`, `STRATA_AUTH_TOKEN`, `STRATA_TLS`,
/// `STRATA_TLS_CA`, `STRATA_TLS_CERT` and `STRATA_TLS_KEY`, then
/// 127.0.0.1:7420 over plain TCP.
struct ConnectionSettings: Sendable {
    var host: String?
    var port: Int?
    var authToken: String?
    var tls: Bool?
    var tlsCA: String?
    var tlsCertificate: String?
    var tlsKey: String?
    var insecure: Bool?

    /// The option names, each taking one value.
    static let optionNames: Set<String> = ["--host", "--port", "--auth-token", "--tls-ca", "--tls-cert", "--tls-key"]
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
            } else if optionNames.contains(argument) {
                guard index + 1 < arguments.count else { throw .usage("missing value for '\(argument)'") }
                name = argument
                value = arguments[index + 1]
                index += 2
            } else {
                break
            }
            switch name {
            case "--host": settings.host = value
            case "--port":
                guard let port = Int(value) else { throw .usage("--port: '\(value)' is not a port number") }
                settings.port = port
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
        let host = self.host ?? fallback.host ?? variable("STRATA_HOST") ?? "127.0.0.1"
        var port = self.port ?? fallback.port
        if port == nil, let text = variable("STRATA_PORT") {
            guard let value = Int(text) else { throw .usage("STRATA_PORT: '\(text)' is not a port number") }
            port = value
        }
        let resolvedPort = port ?? WireProtocol.defaultPort
        guard (1...65_535).contains(resolvedPort) else { throw .usage("port \(resolvedPort) is not within 1…65535") }
        let token = authToken ?? fallback.authToken ?? variable("STRATA_AUTH_TOKEN")
        let tls: ClientTLS?
        do {
            tls = try ClientTLS.resolve(flag: self.tls ?? fallback.tls, trustedCA: tlsCA ?? fallback.tlsCA,
                                        certificateChain: tlsCertificate ?? fallback.tlsCertificate, privateKey: tlsKey ?? fallback.tlsKey,
                                        environment: environment)
        } catch {
            throw .usage(error.message)
        }
        return ClientConfiguration(host: host, port: resolvedPort, clientName: "strata", authToken: token, tls: tls,
                                   allowsPlaintextToken: insecure ?? fallback.insecure ?? false)
    }
}
