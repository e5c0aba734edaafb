import ArgumentParser
import Foundation
import StrataClient
import StrataWire

/// `strata-bench`: a load tester for strata-server in the conventions of
/// ghz, wrk and redis-benchmark.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Load-test a Strata server.",
        discussion: """
        Closed loop by default: --concurrency requests in flight over -c \
        connections (pipelined when concurrency exceeds connections). With \
        --rps the load is open loop at a fixed rate and latency counts from \
        each request's intended send time.
        """,
        version: StrataVersion.description
    )

    @Option(help: "Server host (also STRATA_HOST).")
    var host: String?
    @Option(help: "Server port (also STRATA_PORT).")
    var port: Int?
    @Option(help: "Auth token (also STRATA_AUTH_TOKEN).")
    var authToken: String?
    @Flag(help: "Connect with TLS, trusting the system's CAs (also STRATA_TLS=1).")
    var tls = false
    @Option(name: .customLong("tls-ca"), help: ArgumentHelp("Connect with TLS, trusting the CAs of this PEM file (also STRATA_TLS_CA).", valueName: "file"))
    var tlsCA: String?
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Client certificate (PEM) for a server that requires one (also STRATA_TLS_CERT).", valueName: "file"))
    var tlsCertificate: String?
    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The key of --tls-cert (PEM) (also STRATA_TLS_KEY).", valueName: "file"))
    var tlsKey: String?
    @Flag(help: "Send the auth token to a host other than loopback without TLS (anyone on the way can read it).")
    var insecure = false
    @Option(name: [.customShort("c"), .customLong("connections")], help: "Connections.")
    var connections: Int = 10
    @Option(help: "Requests in flight across all connections (default: one per connection).")
    var concurrency: Int?
    @Option(name: [.customShort("n"), .customLong("requests")], help: "Stop after this many requests.")
    var requests: Int?
    @Option(name: [.customShort("d"), .customLong("duration")], help: "Stop after this long (e.g. 10s, 500ms, 2m).")
    var duration: String?
    @Option(help: "Open loop at this many requests per second.")
    var rps: Double?
    @Option(help: "Operation weights.")
    var mix: String = "get=70,query=10,insert=10,update=5,refresh=5,count=0"
    @Option(help: "Seed this many Book objects (with feedback) first.")
    var dataset: Int?
    @Option(help: "Feedback objects per seeded Book.")
    var feedbackPerBook: Int = 1
    @Option(help: "Entity the query and count operations read.")
    var entity: String = "Book"
    @Option(name: .customLong("where"), help: "Predicate of query and count ($LOW and $HIGH are bound to a random 10-page range).")
    var predicate: String = "pages >= $LOW AND pages <= $HIGH"
    @Option(help: "Objects per query.")
    var queryLimit: Int = 20
    @Option(help: "Run the load this long first without recording.")
    var warmup: String?
    @Flag(help: "Ask for compressed frames (and compress large requests).")
    var compression = false
    @Flag(help: "Print one JSON object instead of the report.")
    var json = false
    @Option(help: "Also write the JSON report to this file.")
    var out: String?
    @Option(help: ArgumentHelp("Write the latency distribution of every request (HdrHistogram's percentile distribution, in milliseconds) to this file, for HdrHistogram's plotter.", valueName: "file"))
    var hgrm: String?
    @Option(help: "Port of another server on the same store: subscribe there and measure how long each acknowledged insert takes to be announced (notification latency).")
    var watchPort: Int?
    @Option(help: "Host of the --watch-port server (default: --host).")
    var watchHost: String?
    @Option(help: "How requests are sent: 'wire' drives them from the connections' event loops (like wrk and redis-benchmark, so the load tester costs little beside the server); 'client' goes through the Swift client library (measures the library too).")
    var driver: Driver = .wire
    @Option(help: "Event-loop threads of the wire driver (like wrk -t; redis-benchmark uses one).")
    var threads: Int = 1

    /// How `strata-bench` sends its requests.
    enum Driver: String, ExpressibleByArgument, Sendable {
        case wire
        case client
    }

    func validate() throws {
        guard connections > 0 else { throw ValidationError("-c must be at least 1") }
        guard threads > 0 else { throw ValidationError("--threads must be at least 1") }
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        if requests != nil, duration != nil { throw ValidationError("give -n or -d, not both") }
        if let requests, requests < 1 { throw ValidationError("-n must be at least 1") }
        if let duration, DurationParsing.parse(duration) == nil { throw ValidationError("-d: '\(duration)' is not a duration (10s, 500ms, 2m)") }
        if let warmup, DurationParsing.parse(warmup) == nil { throw ValidationError("--warmup: '\(warmup)' is not a duration") }
        if let rps, !(rps > 0) { throw ValidationError("--rps must be positive") }
        if let dataset, dataset < 0 { throw ValidationError("--dataset must not be negative") }
        do { _ = try OperationMix(parsing: mix) } catch { throw ValidationError("\(error)") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let host = self.host ?? environment["STRATA_HOST"] ?? "127.0.0.1"
        let port = self.port ?? environment["STRATA_PORT"].flatMap(Int.init) ?? WireProtocol.defaultPort
        let token = authToken ?? environment["STRATA_AUTH_TOKEN"]
        let tls: ClientTLS?
        do {
            tls = try ClientTLS.resolve(flag: self.tls ? true : nil, trustedCA: tlsCA, certificateChain: tlsCertificate, privateKey: tlsKey, environment: environment)
        } catch {
            throw ValidationError(error.message)
        }
        let plain = ClientConfiguration(host: host, port: port, authToken: token, tls: tls, allowsPlaintextToken: insecure)
        if let refusal = plain.plaintextTokenRefusal {
            Self.stderr("strata-bench: \(refusal)")
            throw ExitCode(2)
        }
        let mix = try OperationMix(parsing: mix)
        let interactive = isatty(STDOUT_FILENO) == 1 && !json

        // The client driver sends through `connections` clients; the wire
        // driver has its own connections and one client seeds the store.
        let clients = (0..<(driver == .client ? connections : 1)).map { index in
            StrataClient(configuration: ClientConfiguration(
                host: host, port: port, clientName: "strata-bench-\(index)", authToken: token,
                acceptCompression: compression, compressRequests: compression, tls: tls, allowsPlaintextToken: insecure
            ))
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in clients { group.addTask { _ = try await client.connect() } }
                try await group.waitForAll()
            }
        } catch {
            Self.stderr("strata-bench: cannot connect to \(host):\(port): \(ClientTLS.describe(error, endpoint: "\(host):\(port)") ?? "\(error)")")
            throw ExitCode(2)
        }
        defer { Task { for client in clients { await client.close() } } }

        var versions: [String: Int64]
        if let dataset, dataset > 0 {
            let started = ContinuousClock.now
            versions = try await Workload.seed(count: dataset, feedback: feedbackPerBook, client: clients[0]) { made in
                if interactive { Self.progressLine("seeding \(made)/\(dataset) books") }
            }
            if interactive { Self.progressLine("") }
            let elapsed = ContinuousClock.now - started
            Self.stderr("seeded \(dataset) books (\(feedbackPerBook) feedback each) in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .abbreviated)))")
        } else {
            versions = try await Workload.existing(entity: "Book", limit: 100_000, client: clients[0])
        }
        let needsIDs = mix.includes(.get) || mix.includes(.update) || mix.includes(.refresh)
        if versions.isEmpty, needsIDs {
            Self.stderr("no Book objects to read: seeding 1000 (use --dataset N to choose)")
            versions = try await Workload.seed(count: 1000, feedback: feedbackPerBook, client: clients[0]) { _ in }
        }
        var probe: NotificationProbe?
        if let watchPort {
            let watcher = StrataClient(configuration: ClientConfiguration(host: watchHost ?? host, port: watchPort, clientName: "strata-bench-watch", authToken: token, tls: tls, allowsPlaintextToken: insecure))
            do {
                let started = NotificationProbe(client: watcher)
                try await started.start(entity: "Book")
                probe = started
            } catch {
                Self.stderr("strata-bench: cannot subscribe on \(watchHost ?? host):\(watchPort): \(error)")
                throw ExitCode(2)
            }
        }
        // Connected after the seeding, so a long seed does not leave the
        // load's connections idle long enough for the server to close them.
        let wire: WireDriver?
        do {
            wire = driver == .wire
                ? try await WireDriver.connect(host: host, port: port, count: connections, threads: threads, clientName: "strata-bench", authToken: token, compression: compression, tls: tls)
                : nil
        } catch {
            Self.stderr("strata-bench: cannot connect to \(host):\(port): \(ClientTLS.describe(error, endpoint: "\(host):\(port)") ?? "\(error)")")
            throw ExitCode(2)
        }
        defer { if let wire { Task { await wire.close() } } }
        let workload = Workload(
            entity: entity, predicate: predicate,
            sortsByPages: predicate == "pages >= $LOW AND pages <= $HIGH",
            queryLimit: UInt32(clamping: queryLimit),
            ids: versions.keys.sorted(), versions: versions,
            preparesGets: driver == .wire && mix.includes(.get), probe: probe
        )
        let concurrency = self.concurrency ?? connections
        func load(requestLimit: Int?, duration: Duration?, progress: LoadRunner.Progress, seed: UInt64) async -> (Recorder, Duration) {
            if let wire {
                return await wire.run(workload: workload, mix: mix, concurrency: concurrency, requestLimit: requestLimit, duration: duration, rate: rps, progress: progress, seed: seed)
            }
            let runner = LoadRunner(clients: clients, workload: workload, mix: mix, concurrency: concurrency, requestLimit: requestLimit, duration: duration, rate: rps)
            return await runner.run(progress: progress, seed: seed)
        }
        if let warmup, let warmupDuration = DurationParsing.parse(warmup), warmupDuration > .zero {
            _ = await load(requestLimit: nil, duration: warmupDuration, progress: LoadRunner.Progress(), seed: 7)
        }
        let limit = duration == nil ? (requests ?? 10_000) : nil
        let progress = LoadRunner.Progress()
        let ticker = interactive ? Task { await Self.showProgress(progress) } : nil
        let (recorder, elapsed) = await load(requestLimit: limit, duration: duration.flatMap(DurationParsing.parse), progress: progress, seed: 42)
        ticker?.cancel()
        if interactive { Self.progressLine("") }

        let settings: [String: Any] = [
            "host": host, "port": port, "connections": connections, "concurrency": concurrency,
            "mix": mix.description, "rps": rps ?? 0, "requests_limit": limit ?? 0,
            "duration_limit_s": duration.flatMap(DurationParsing.parse).map { Double($0.components.seconds) } ?? 0,
            "dataset": versions.count, "compression": compression, "where": predicate, "driver": driver.rawValue, "threads": threads,
        ]
        var report = Report(recorder: recorder, duration: elapsed, settings: settings)
        if let probe {
            let (latencies, matched, missing) = await probe.finish()
            report.notification = .init(latencies: latencies, matched: matched, missing: missing)
        }
        let jsonText = try report.jsonText()
        if let out {
            try Data((jsonText + "\n").utf8).write(to: URL(fileURLWithPath: out))
        }
        if let hgrm {
            try Data(report.percentileDistribution.utf8).write(to: URL(fileURLWithPath: hgrm))
        }
        print(json ? jsonText : report.text)
        if let limit, recorder.requests < limit {
            // Every connection closed before the count was reached.
            Self.stderr("strata-bench: only \(recorder.requests) of \(limit) requests were made: the server closed the connections")
            throw ExitCode(1)
        }
    }

    private static func showProgress(_ progress: LoadRunner.Progress) async {
        let clock = ContinuousClock()
        let start = clock.now
        var last = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let done = progress.done.load(ordering: .relaxed)
            let failed = progress.failed.load(ordering: .relaxed)
            let elapsed = clock.now - start
            progressLine(String(format: "%6.1f s   %8d req/s now   %9d done   %d errors", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, done - last, done, failed))
            last = done
        }
    }

    /// Rewrites the terminal's current line.
    private static func progressLine(_ text: String) {
        FileHandle.standardOutput.write(Data(("\r\u{1B}[2K" + text).utf8))
    }

    static func stderr(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
