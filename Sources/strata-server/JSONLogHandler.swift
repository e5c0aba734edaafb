import Foundation
import Logging

/// `--log-format json`: one JSON object per line on standard error, with
/// the time (ISO 8601, UTC), level, label, message, source location and
/// metadata, for log collectors that read JSON lines.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    /// Serializes writes from every handler of the process.
    private static let output = FileHandle.standardError
    private static let lock = NSLock()

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var record: [String: Any] = [
            "time": Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)),
            "level": event.level.rawValue,
            "label": label,
            "message": "\(event.message)",
            "source": "\(event.file.split(separator: "/").last ?? ""):\(event.line)",
        ]
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        if !all.isEmpty {
            record["metadata"] = all.mapValues { Self.json($0) }
        }
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        Self.lock.lock()
        defer { Self.lock.unlock() }
        Self.output.write(line)
    }

    private static func json(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }
}
