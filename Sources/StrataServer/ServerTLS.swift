import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import StrataAuth

/// TLS for a ``StrataServer``: its certificate chain and key (PEM), and
/// optionally the CA whose certificates clients must present (mutual TLS).
/// TLS 1.2 and later only. The files can be read again while the server
/// runs (``reload()``): connections accepted afterwards use the new ones.
public final class ServerTLS: Sendable {
    /// Where the PEM files are.
    public struct Files: Sendable, Equatable {
        /// The server's certificate, followed by any intermediates.
        public var certificateChain: String
        /// The certificate's private key.
        public var privateKey: String
        /// When set, clients must present a certificate this CA signed.
        public var clientCA: String?

        /// Creates the file set.
        public init(certificateChain: String, privateKey: String, clientCA: String? = nil) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
            self.clientCA = clientCA
        }
    }

    private struct Loaded: Sendable {
        var context: NIOSSLContext
        var expiry: Date?
    }

    /// The files the context is read from.
    public let files: Files
    private let loaded: NIOLockedValueBox<Loaded>

    /// Reads the files and builds the TLS context; an unreadable or
    /// mismatched file is a `ConfigurationFileError` naming it.
    public init(files: Files) throws(ConfigurationFileError) {
        self.files = files
        loaded = NIOLockedValueBox(try Self.load(files))
    }

    /// The context new connections use.
    public var context: NIOSSLContext { loaded.withLockedValue { $0.context } }

    /// When the server's certificate (the chain's first) stops being valid.
    public var certificateExpiry: Date? { loaded.withLockedValue { $0.expiry } }

    /// Whether clients must present a certificate.
    public var requiresClientCertificates: Bool { files.clientCA != nil }

    /// Reads the files again; on failure the current context stays.
    public func reload() throws(ConfigurationFileError) {
        let fresh = try Self.load(files)
        loaded.withLockedValue { $0 = fresh }
    }

    private static func load(_ files: Files) throws(ConfigurationFileError) -> Loaded {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateChain)
        } catch {
            throw ConfigurationFileError(file: files.certificateChain, "cannot be read as PEM certificates: \(error)")
        }
        guard let leaf = chain.first else {
            throw ConfigurationFileError(file: files.certificateChain, "holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.privateKey, format: .pem)
        } catch {
            throw ConfigurationFileError(file: files.privateKey, "cannot be read as a PEM private key: \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = .tlsv12
        if let clientCA = files.clientCA {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(clientCA)
            } catch {
                throw ConfigurationFileError(file: clientCA, "cannot be read as PEM certificates: \(error)")
            }
            guard !roots.isEmpty else { throw ConfigurationFileError(file: clientCA, "holds no certificate") }
            configuration.trustRoots = .certificates(roots)
            configuration.certificateVerification = .noHostnameVerification
            configuration.sendCANameList = true
        }
        do {
            let context = try NIOSSLContext(configuration: configuration)
            return Loaded(context: context, expiry: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)))
        } catch {
            throw ConfigurationFileError(file: files.privateKey, "does not go with the certificate in \(files.certificateChain): \(error)")
        }
    }
}
