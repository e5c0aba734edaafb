import ArgumentParser
import Foundation
import StrataClient
import StrataModel
import StrataWire

/// Concurrent writers inserting Books with unique titles, each logging a
/// save's batch only once the server has acknowledged it. Half of the
/// writers save one object at a time, half `--batch` objects at a time.
/// Runs until the server goes away (or `--seconds` pass).
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Insert Books until the server dies, logging every acknowledged save.")

    @Option(help: "The server's port on 127.0.0.1.")
    var port: Int

    @Option(help: "Concurrent writers (even ones save single objects, odd ones --batch at a time).")
    var writers = 4

    @Option(help: "Objects per multi-object save.")
    var batch = 500

    @Option(help: "A prefix making this run's titles unique (e.g. the round).")
    var prefix: String

    @Option(help: "File to append acknowledged saves to: one line 'BATCH COUNT' per save.")
    var log: String

    @Option(help: "Stop after this many seconds even if the server lives.")
    var seconds = 30.0

    func run() async throws {
        if !FileManager.default.fileExists(atPath: log) {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: log) else {
            throw ValidationError("cannot write \(log)")
        }
        handle.seekToEndOfFile()
        let logger = AckLog(handle: handle)
        let deadline = ContinuousClock.now + .seconds(seconds)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    await write(writer: writer, size: writer % 2 == 0 ? 1 : batch, deadline: deadline, log: logger)
                }
            }
        }
        await logger.close()
    }

    private func write(writer: Int, size: Int, deadline: ContinuousClock.Instant, log: AckLog) async {
        let client = StrataClient(configuration: ClientConfiguration(host: "127.0.0.1", port: port, clientName: "crash-\(prefix)-\(writer)", connectTimeout: .seconds(2)))
        var sequence = 0
        while ContinuousClock.now < deadline {
            let batchID = "\(prefix)-w\(writer)-s\(sequence)"
            sequence += 1
            let request = Strata_V1_SaveRequest.with { save in
                for i in 0..<size {
                    save.inserts.append(Strata_V1_InsertedObject.with {
                        $0.temporaryID = "t\(i)"
                        $0.entity = "Book"
                        $0.values["uuid"] = PropertyValue.uuid(UUID()).wire
                        $0.values["title"] = PropertyValue.string("\(batchID)-\(i)").wire
                        $0.values["author"] = PropertyValue.string(batchID).wire
                        $0.values["pages"] = PropertyValue.integer(Int64(size)).wire
                    })
                }
            }
            do {
                let response = try await client.save(request)
                guard response.inserted.count == size else { break }
                await log.acknowledged(batchID, count: size)
            } catch {
                // The server is gone (or refused): this save may or may not
                // have committed; it was not acknowledged.
                break
            }
        }
        await client.close()
    }
}

/// Appends acknowledged saves to the log, one line each, flushed at once.
actor AckLog {
    private let handle: FileHandle

    init(handle: FileHandle) {
        self.handle = handle
    }

    func acknowledged(_ batch: String, count: Int) {
        handle.write(Data("\(batch) \(count)\n".utf8))
    }

    func close() {
        try? handle.synchronize()
        try? handle.close()
    }
}
