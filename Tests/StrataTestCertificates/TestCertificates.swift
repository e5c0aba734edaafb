import Crypto
import Foundation
import SwiftASN1
import X509

/// Certificates made at test time (never committed keys): a CA, a server
/// certificate for 127.0.0.1 and localhost signed by it, client
/// certificates signed by it, and a second CA that signed nothing the
/// server presents. Written as PEM files into a fresh temporary folder.
public struct TestCertificates: Sendable {
    /// The folder holding the files.
    public let directory: URL
    /// The CA's certificate (PEM), which signed the server's and the clients'.
    public let caFile: String
    /// Another CA's certificate (PEM): trusting it alone must fail.
    public let otherCAFile: String
    /// The server's certificate (PEM), for 127.0.0.1, ::1 and localhost.
    public let serverCertificateFile: String
    /// The server's key (PEM).
    public let serverKeyFile: String

    /// Makes a CA, another CA and the server's certificate in a new folder.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ca = try Self.authority(named: "Strata Test CA")
        let other = try Self.authority(named: "Some Other CA")
        caFile = try Self.write(ca.certificate, to: directory.appendingPathComponent("ca.pem"))
        otherCAFile = try Self.write(other.certificate, to: directory.appendingPathComponent("other-ca.pem"))
        caKey = ca.key
        caName = ca.certificate.subject
        let server = try Self.leaf(commonName: "localhost", usage: .serverAuth,
                                   names: [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                                           .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1])))],
                                   issuerKey: ca.key, issuerName: ca.certificate.subject)
        serverCertificateFile = try Self.write(server.certificate, to: directory.appendingPathComponent("server.pem"))
        serverKeyFile = try Self.write(key: server.key, to: directory.appendingPathComponent("server-key.pem"))
    }

    private let caKey: P256.Signing.PrivateKey
    private let caName: DistinguishedName

    /// A client certificate whose common name is `commonName`, signed by
    /// the CA (or, with `selfSigned`, by nobody the server trusts); returns
    /// its certificate and key files.
    public func client(_ commonName: String, selfSigned: Bool = false) throws -> (certificate: String, key: String) {
        let issuer = selfSigned ? try Self.authority(named: commonName) : (certificate: nil, key: caKey)
        let issuerName = issuer.certificate?.subject ?? caName
        let made = try Self.leaf(commonName: commonName, usage: .clientAuth, names: [], issuerKey: issuer.key, issuerName: issuerName)
        let base = "client-\(commonName)-\(selfSigned ? "self" : "ca")"
        return (try Self.write(made.certificate, to: directory.appendingPathComponent("\(base).pem")),
                try Self.write(key: made.key, to: directory.appendingPathComponent("\(base)-key.pem")))
    }

    /// A server certificate from the CA that names only `host` (no
    /// address): valid, but not for 127.0.0.1. Returns its certificate and
    /// key files.
    public func server(namingOnly host: String) throws -> (certificate: String, key: String) {
        let made = try Self.leaf(commonName: host, usage: .serverAuth, names: [.dnsName(host)], issuerKey: caKey, issuerName: caName)
        return (try Self.write(made.certificate, to: directory.appendingPathComponent("server-\(host).pem")),
                try Self.write(key: made.key, to: directory.appendingPathComponent("server-\(host)-key.pem")))
    }

    /// Deletes the folder.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private static func authority(named name: String) throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600),
            notValidAfter: Date().addingTimeInterval(86_400),
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return (certificate, key)
    }

    private static func leaf(commonName: String, usage: ExtendedKeyUsage.Usage, names: [GeneralName],
                             issuerKey: P256.Signing.PrivateKey, issuerName: DistinguishedName) throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600),
            notValidAfter: Date().addingTimeInterval(86_400),
            issuer: issuerName,
            subject: try DistinguishedName { CommonName(commonName) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([usage])
                if !names.isEmpty { SubjectAlternativeNames(names) }
            },
            issuerPrivateKey: Certificate.PrivateKey(issuerKey)
        )
        return (certificate, key)
    }

    private static func write(_ certificate: Certificate, to url: URL) throws -> String {
        try certificate.serializeAsPEM().pemString.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    private static func write(key: P256.Signing.PrivateKey, to url: URL) throws -> String {
        try key.pemRepresentation.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
