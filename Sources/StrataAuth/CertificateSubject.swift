import X509

/// The subject a client certificate names, as identities use it.
public enum CertificateSubject {
    /// The certificate's common name when it has one, else its whole
    /// distinguished name (RFC 4514 form); nil for bytes that are not a
    /// DER certificate.
    public static func name(fromDER bytes: [UInt8]) -> String? {
        guard let certificate = try? Certificate(derEncoded: bytes) else { return nil }
        for relativeName in certificate.subject {
            for attribute in relativeName where attribute.type == .RDNAttributeType.commonName {
                let text = commonNameText(attribute.value)
                if !text.isEmpty { return text }
            }
        }
        let whole = certificate.subject.description
        return whole.isEmpty ? nil : whole
    }

    /// An attribute value's text (the printable or UTF-8 string it holds).
    private static func commonNameText(_ value: RelativeDistinguishedName.Attribute.Value) -> String {
        if let text = String(value) { return text }
        return value.description
    }
}
