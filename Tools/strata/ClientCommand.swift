import ArgumentParser

/// A command that talks to a server. It runs in a ``Session`` so the shell
/// can run many over one connection; run alone, it gets a session of its own.
protocol ClientCommand: AsyncParsableCommand {
    /// `--host`, `--port`, `--auth-token` given after the command name.
    var connection: ConnectionOptions { get }

    /// Does the work with `session`.
    func execute(in session: Session) async throws
}

extension ClientCommand {
    mutating func run() async throws {
        let session = Session(configuration: try connection.settings.configuration())
        do {
            try await execute(in: session)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}
