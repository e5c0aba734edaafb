import ArgumentParser
import Foundation
import StrataAuth

/// `strata auth hash-token`: prints the auth-file entry for a token, so
/// the server's file holds the token's SHA-256 and never the token.
struct AuthHashTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-token",
        abstract: "Print the auth-file entry (JSON) for a token read from standard input.",
        discussion: """
            The token is the first line of standard input (so that it shows neither in ps nor in \
            the shell's history): printf '%s' "$TOKEN" | strata auth hash-token --subject alice --role editor. \
            With --generate, a new random token is made instead and written to standard error. \
            Paste the entry into the "tokens" array of the file given to strata-server --auth-file.
            """
    )

    @Option(help: "The subject the token speaks for.")
    var subject: String

    @Option(name: .customLong("role"), help: "A role of the subject (repeatable).")
    var roles: [String] = []

    @Flag(help: "Make a new random token (256 bits, base64url) and print it on standard error.")
    var generate = false

    func validate() throws {
        guard !subject.isEmpty else { throw ValidationError("--subject must not be empty") }
    }

    func run() throws {
        let token: String
        if generate {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            token = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            FileHandle.standardError.write(Data("token (give it to the client; it is stored nowhere): \(token)\n".utf8))
        } else {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw CLIError.usage("no token on standard input (or give --generate)")
            }
            token = line
        }
        let entry = JSONValue.object([
            ("sha256", .string(TokenDigest.hex(of: token))),
            ("subject", .string(subject)),
            ("roles", .array(roles.map { .string($0) })),
        ])
        Console.line(entry.rendered())
    }
}
