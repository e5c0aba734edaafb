import NIOCore
import NIOSSL

/// TLS to a server: whom to trust, and the client's own certificate when
/// the server asks for one (mutual TLS). TLS 1.2 and later only; the
/// server's certificate must chain to ``trustedCA`` (or to the system's
/// roots) and name the host connected to, or the connection fails: there
/// is no fallback to plain TCP.
public struct ClientTLS: Sendable {
    /// A PEM file of the CA certificates to trust; nil trusts the system's.
    public var trustedCA: String?
    /// The client's certificate chain (PEM), for a server that requires one.
    public var certificateChain: String?
    /// The key of ``certificateChain`` (PEM).
    public var privateKey: String?
    /// The name the server's certificate must carry when it differs from
    /// the host connected to (an address, say); nil checks the host.
    public var serverName: String?

    /// Creates a TLS setting.
    public init(trustedCA: String? = nil, certificateChain: String? = nil, privateKey: String? = nil, serverName: String? = nil) {
        self.trustedCA = trustedCA
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.serverName = serverName
    }

    /// TLS as a tool's options ask for it, each option falling back on its
    /// environment variable (`STRATA_TLS`, `STRATA_TLS_CA`,
    /// `STRATA_TLS_CERT`, `STRATA_TLS_KEY`); nil for plain TCP. A CA or a
    /// client certificate means TLS, so that naming one never ends in a
    /// silent plain connection.
    public static func resolve(flag: Bool?, trustedCA: String?, certificateChain: String?, privateKey: String?,
                               environment: [String: String]) throws(StrataClientError) -> ClientTLS? {
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var flag = flag
        if flag == nil, let text = variable("STRATA_TLS") {
            switch text.lowercased() {
            case "1", "true", "yes", "on": flag = true
            case "0", "false", "no", "off": flag = false
            default: throw StrataClientError(.invalidArgument, "STRATA_TLS: '\(text)' is not 1 or 0")
            }
        }
        let ca = trustedCA ?? variable("STRATA_TLS_CA")
        let certificate = certificateChain ?? variable("STRATA_TLS_CERT")
        let key = privateKey ?? variable("STRATA_TLS_KEY")
        guard (certificate == nil) == (key == nil) else {
            throw StrataClientError(.invalidArgument, "a client certificate (--tls-cert) and its key (--tls-key) go together")
        }
        guard flag == true || ca != nil || certificate != nil else { return nil }
        return ClientTLS(trustedCA: ca, certificateChain: certificate, privateKey: key)
    }

    /// The TLS context these settings describe; an unreadable file is a
    /// ``StrataClientError`` (INVALID_ARGUMENT) naming it.
    public func makeContext() throws(StrataClientError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let trustedCA {
            do {
                let roots = try NIOSSLCertificate.fromPEMFile(trustedCA)
                guard !roots.isEmpty else { throw StrataClientError(.invalidArgument, "\(trustedCA) holds no certificate") }
                configuration.trustRoots = .certificates(roots)
            } catch let error as StrataClientError {
                throw error
            } catch {
                throw StrataClientError(.invalidArgument, "the CA file \(trustedCA) cannot be read as PEM certificates: \(error)")
            }
        }
        switch (certificateChain, privateKey) {
        case (let chain?, let key?):
            do {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(chain).map { .certificate($0) }
            } catch {
                throw StrataClientError(.invalidArgument, "the certificate file \(chain) cannot be read as PEM certificates: \(error)")
            }
            do {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            } catch {
                throw StrataClientError(.invalidArgument, "the key file \(key) cannot be read as a PEM private key: \(error)")
            }
        case (nil, nil):
            break
        default:
            throw StrataClientError(.invalidArgument, "a client certificate needs both its certificate file and its key file")
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw StrataClientError(.invalidArgument, "the TLS settings cannot be used: \(error)")
        }
    }

    /// The handler that starts TLS on a new connection to `host`, with a
    /// context from ``makeContext()``.
    public func makeHandler(context: NIOSSLContext, host: String) throws -> NIOSSLClientHandler {
        let name = serverName ?? host
        // SNI and the name check take a host name; for an address NIOSSL
        // checks the certificate's IP addresses against the peer's.
        let isAddress = (try? SocketAddress(ipAddress: name, port: 0)) != nil
        return try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : name)
    }

    /// What failed, for an error raised by TLS on a connection to
    /// `endpoint`; nil for an error that is not TLS's.
    public static func describe(_ error: any Error, endpoint: String) -> String? {
        if let error = error as? NIOSSLExtraError {
            if error == .failedToValidateHostname {
                return "TLS handshake with \(endpoint) failed: the server's certificate does not name the host connected to (\(error)); connect by a name it carries"
            }
            return "TLS handshake with \(endpoint) failed: \(error)"
        }
        guard let error = error as? NIOSSLError else { return nil }
        switch error {
        case .handshakeFailed(let reason):
            return "TLS handshake with \(endpoint) failed: \(reason) (is the server's certificate signed by the trusted CA, and does it name the host?)"
        case .unableToValidateCertificate:
            return "TLS with \(endpoint) failed: the server's certificate could not be validated"
        default:
            return "TLS with \(endpoint) failed: \(error)"
        }
    }
}
