import ArgumentParser
import Dispatch
import StrataClient
import Synchronization

/// Entity names for the shells' completion scripts (`strata
/// --generate-completion-script`): when Tab is pressed after `strata
/// fetch`, the script runs `strata` again, which asks the server the typed
/// connection options (or the environment) name for its model, waiting at
/// most a second; no server, no names.
enum EntityCompletion {
    /// Completes an entity argument.
    static let kind = CompletionKind.custom { words, _, prefix in names(words: words, prefix: prefix) }

    /// The served model's entity names that start with `prefix`.
    static func names(words: [String], prefix: String) -> [String] {
        // The connection options typed before the command.
        guard let (settings, _) = try? ConnectionSettings.extractLeading(Array(words.dropFirst())),
              var configuration = try? settings.configuration() else { return [] }
        configuration.connectTimeout = .seconds(1)
        let found = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let client = StrataClient(configuration: configuration)
        // The completion hook is synchronous: a detached task asks, and
        // this thread waits for it, or gives up after two seconds.
        Task.detached {
            if let model = try? await client.model() {
                found.withLock { $0 = model.entities.map(\.name) }
            }
            await client.close()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 2)
        return found.withLock { $0 }.filter { $0.hasPrefix(prefix) }.sorted()
    }
}
