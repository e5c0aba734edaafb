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
        Works against any model the server serves: --entity picks the entity; \
        inserts and updates get values made up for every attribute from the \
        model (or from --values). The default mix only reads; writing needs a \
        --mix with writes, seeding needs --dataset: it never writes unasked. \
        --workload books runs the bundled sample's Books workload.

        Closed loop by default: --concurrency requests in flight over -c \
        connections (pipelined when concurrency exceeds connections). With \
        --rps the load is open loop at a fixed rate and latency counts from \
        each request's intended send time.

        Exit status: 0 success, 1 usage, 2 cannot connect or connection lost, \
        5 a request failed (beyond --max-error-rate), 6 a latency threshold \
        was breached.
        """,
        version: StrataVersion.description,
        helpNames: [.long]
    )

    @Option(name: [.customShort("h"), .long], help: "Server host (also STRATA_HOST).")
    var host: String?
    @Option(name: [.customShort("p"), .long], help: "Server port (also STRATA_PORT).")
    var port: Int?
    @Option(help: ArgumentHelp("The server as a URL: tcp://HOST:PORT, or tls://HOST:PORT for TLS (also STRATA_URL).", valueName: "url"))
    var url: String?
    @Option(help: "Auth token (also STRATA_AUTH_TOKEN; --auth-token-file keeps it out of ps).")
    var authToken: String?
    @Option(name: .customLong("auth-token-file"), help: ArgumentHelp("A file whose first line is the token.", valueName: "file"))
    var authTokenFile: String?
    @Option(help: ArgumentHelp("Seconds to wait for each TCP connection to be made (default 5; strata's --timeout).", valueName: "seconds"))
    var connectTimeout: Double?
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
    @Option(help: "Operation weights: get, query, count, insert, update, refresh (the default only reads).")
    var mix: String = "get=80,query=10,count=10"
    @Option(help: "model (any model: --entity, generated values) or books (the bundled sample's Books).")
    var workload: WorkloadKind = .model
    @Option(help: "The entity every operation acts on (needed when the model has several).")
    var entity: String?
    @Option(help: ArgumentHelp("JSON lines of property values for inserts (one object per line, taken in turn); properties they give are not generated.", valueName: "file"))
    var values: String?
    @Option(help: "Insert this many objects first (books: Books with feedback).")
    var dataset: Int?
    @Option(help: "Feedback objects per seeded Book (--workload books).")
    var feedbackPerBook: Int = 1
    @Option(name: .customLong("where"), help: "Predicate of query and count, and of the existing objects gets and updates pick among (books: $LOW and $HIGH are bound to a random 10-page range).")
    var predicate: String?
    @Option(help: "Objects per query.")
    var queryLimit: Int = 20
    @Option(help: ArgumentHelp("Fail (exit 5) when more than this fraction of requests fail (0.01 or 1%); by default any failure does.", valueName: "rate"))
    var maxErrorRate: String?
    @Option(help: ArgumentHelp("Fail (exit 6) unless the median latency is under this (e.g. 2ms).", valueName: "duration"))
    var p50Under: String?
    @Option(help: ArgumentHelp("Fail (exit 6) unless the 99th percentile latency is under this (e.g. 5ms).", valueName: "duration"))
    var p99Under: String?
    @Option(help: "Run the load this long first without recording.")
    var warmup: String?
    @Option(help: ArgumentHelp("Grow the load linearly from nothing to full over this long (closed loop: requests in flight; --rps: the rate), as k6's ramping stages.", valueName: "duration"))
    var ramp: String?
    @Option(help: ArgumentHelp("Count a request as failed (DEADLINE_EXCEEDED) when its answer takes longer than this (e.g. 500ms); its answer is ignored.", valueName: "duration"))
    var timeout: String?
    @Flag(help: "Ask for compressed frames (and compress large requests).")
    var compression = false
    @Flag(help: "Print one JSON object instead of the report.")
    var json = false
    @Flag(help: "Print the per-operation figures as CSV instead of the report.")
    var csv = false
    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "No progress line and no report; only errors and the exit status (with --out, --hgrm, --timeseries still written).")
    var quiet = false
    @Option(help: "Also write the JSON report to this file.")
    var out: String?
    @Option(help: ArgumentHelp("Write one CSV line per second of the run: requests, errors, throughput, p50 and p99 latency.", valueName: "file"))
    var timeseries: String?
    @Option(help: ArgumentHelp("Write the latency distribution of every request (HdrHistogram's percentile distribution, in milliseconds) to this file, for HdrHistogram's plotter.", valueName: "file"))
    var hgrm: String?
    @Option(help: "Port of another server on the same store: subscribe there and measure how long each acknowledged insert takes to be announced (notification latency).")
    var watchPort: Int?
    @Option(help: "Host of the --watch-port server (default: --host).")
    var watchHost: String?
    @Option(help: "How requests are sent: 'wire' drives them from the connections' event loops (like wrk and redis-benchmark, so the load tester costs little beside the server); 'client' goes through the Swift client library (measures the library too).")
    var driver: Driver = .wire
    @Option(name: [.customShort("t"), .customLong("threads")], help: "Event-loop threads of the wire driver (like wrk -t; redis-benchmark uses one).")
    var threads: Int = 1

    /// What the load acts on.
    enum WorkloadKind: String, ExpressibleByArgument, Sendable {
        /// Any model's entity, with generated values.
        case model
        /// The bundled sample's Books.
        case books
    }

    /// The exit statuses (the table shared with `strata`, docs/cli.md).
    enum Status {
        static let usage: Int32 = 1
        static let connection: Int32 = 2
        static let requestsFailed: Int32 = 5
        static let threshold: Int32 = 6
    }

    /// Parses and runs; usage errors exit 1, as in `strata`. psql's
    /// `-p7420` is taken as `-p 7420`.
    static func main() async {
        do {
            let arguments = CommandLine.arguments.dropFirst().flatMap { argument -> [String] in
                guard argument.count > 2, argument.hasPrefix("-p"), argument.dropFirst(2).allSatisfy(\.isNumber) else { return [argument] }
                return ["-p", String(argument.dropFirst(2))]
            }
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code.isSuccess {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            stderr(fullMessage(for: error))
            Foundation.exit(code == .validationFailure ? Status.usage : code.rawValue)
        }
    }

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
        if let ramp, DurationParsing.parse(ramp) == nil { throw ValidationError("--ramp: '\(ramp)' is not a duration") }
        if let timeout, (DurationParsing.parse(timeout) ?? .zero) <= .zero { throw ValidationError("--timeout: '\(timeout)' is not a duration above zero") }
        if let rps, !(0.001...10_000_000).contains(rps) { throw ValidationError("--rps must be from 0.001 to 10000000") }
        if let dataset, dataset < 0 { throw ValidationError("--dataset must not be negative") }
        if let url, ServerURL(url) == nil { throw ValidationError("--url: '\(url)' is not tcp://HOST:PORT or tls://HOST:PORT") }
        if let connectTimeout, !(connectTimeout > 0 && connectTimeout <= 86_400) { throw ValidationError("--connect-timeout must be more than 0 and at most 86400 seconds") }
        if let maxErrorRate, Self.rate(maxErrorRate) == nil { throw ValidationError("--max-error-rate: '\(maxErrorRate)' is not a fraction (0.01) or a percentage (1%)") }
        for (name, value) in [("--p50-under", p50Under), ("--p99-under", p99Under)] {
            if let value, DurationParsing.parse(value) == nil { throw ValidationError("\(name): '\(value)' is not a duration (5ms, 1.5ms, 200us)") }
        }
        if json, csv { throw ValidationError("give --json or --csv, not both") }
        if workload == .books, values != nil { throw ValidationError("--values is for --workload model") }
        do { _ = try OperationMix(parsing: mix) } catch { throw ValidationError("\(error)") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let serverURL = (url ?? variable("STRATA_URL")).map({ ServerURL($0) }) ?? ServerURL("tcp://127.0.0.1") else {
            throw ValidationError("STRATA_URL: '\(variable("STRATA_URL") ?? "")' is not tcp://HOST:PORT or tls://HOST:PORT")
        }
        let fromURL = url != nil
        let host = self.host ?? (fromURL ? serverURL.host : nil) ?? variable("STRATA_HOST") ?? serverURL.host
        let port = self.port ?? (fromURL ? serverURL.port : nil) ?? variable("STRATA_PORT").flatMap(Int.init) ?? serverURL.port ?? WireProtocol.defaultPort
        var token = authToken
        if token == nil, let authTokenFile {
            guard let text = try? String(contentsOfFile: authTokenFile, encoding: .utf8),
                  let line = text.split(separator: "\n", omittingEmptySubsequences: false).first?.trimmingCharacters(in: .whitespacesAndNewlines), !line.isEmpty else {
                throw ValidationError("--auth-token-file: cannot read a token from the first line of \(authTokenFile)")
            }
            token = line
        }
        token = token ?? variable("STRATA_AUTH_TOKEN")
        let connectTimeout = Duration.milliseconds(Int64(((self.connectTimeout ?? 5) * 1000).rounded()))
        let tls: ClientTLS?
        do {
            tls = try ClientTLS.resolve(flag: self.tls || serverURL.usesTLS ? true : nil, trustedCA: tlsCA, certificateChain: tlsCertificate, privateKey: tlsKey, environment: environment)
        } catch {
            throw ValidationError(error.message)
        }
        let plain = ClientConfiguration(host: host, port: port, authToken: token, tls: tls, allowsPlaintextToken: insecure)
        if let refusal = plain.plaintextTokenRefusal {
            Self.stderr("error: \(refusal)")
            throw ExitCode(Status.usage)
        }
        let mix = try OperationMix(parsing: mix)
        let interactive = isatty(STDOUT_FILENO) == 1 && !json && !csv && !quiet

        // The client driver sends through `connections` clients; the wire
        // driver has its own connections and one client seeds the store.
        let clients = (0..<(driver == .client ? connections : 1)).map { index in
            StrataClient(configuration: ClientConfiguration(
                host: host, port: port, clientName: "strata-bench-\(index)", authToken: token,
                acceptCompression: compression, compressRequests: compression, connectTimeout: connectTimeout, tls: tls, allowsPlaintextToken: insecure
            ))
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in clients { group.addTask { _ = try await client.connect() } }
                try await group.waitForAll()
            }
        } catch {
            throw Self.connectionFailure(error, endpoint: "\(host):\(port)")
        }
        defer { Task { for client in clients { await client.close() } } }

        // What the load acts on: any model's entity, or the sample's Books.
        var generator: ObjectGenerator?
        let entity: String
        let predicate: String
        if workload == .books {
            entity = self.entity ?? "Book"
            predicate = self.predicate ?? "pages >= $LOW AND pages <= $HIGH"
        } else {
            predicate = self.predicate ?? ""
            do {
                let model = try await clients[0].model()
                let concrete = model.entities.filter { !$0.isAbstract }.map(\.name).sorted()
                guard let chosen = self.entity ?? (concrete.count == 1 ? concrete[0] : nil) else {
                    throw BenchError.usage("--entity: name the entity to load (the model '\(model.name)' has \(concrete.joined(separator: ", "))), or give --workload books for the bundled sample's Books workload")
                }
                entity = chosen
                let lines: [String] = try values.map { file -> [String] in
                    do {
                        return try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                    } catch {
                        throw BenchError.usage("--values: cannot read \(file): \(error.localizedDescription)")
                    }
                } ?? []
                // Only a mix that inserts, or a dataset, needs values.
                if mix.includes(.insert) || mix.includes(.update) || (dataset ?? 0) > 0 {
                    generator = try ObjectGenerator(model: model, entity: chosen, valueLines: lines)
                    if mix.includes(.update), generator?.updatable == nil {
                        throw BenchError.usage("--mix update: \(chosen) has no attribute strata-bench can change (every one is unique, patterned or given by --values)")
                    }
                }
            } catch let error as BenchError {
                Self.stderr("error: \(error)")
                throw ExitCode(Status.usage)
            }
        }

        let needsIDs = mix.includes(.get) || mix.includes(.update) || mix.includes(.refresh)
        var versions: [String: Int64] = [:]
        do {
            if let dataset, dataset > 0 {
                let started = ContinuousClock.now
                if let generator {
                    versions = try await Workload.seed(count: dataset, generator: generator, client: clients[0]) { made in
                        if interactive { Self.progressLine("seeding \(made)/\(dataset) \(entity) objects") }
                    }
                } else {
                    versions = try await Workload.seed(count: dataset, feedback: feedbackPerBook, client: clients[0]) { made in
                        if interactive { Self.progressLine("seeding \(made)/\(dataset) books") }
                    }
                }
                if interactive { Self.progressLine("") }
                let elapsed = ContinuousClock.now - started
                if !quiet {
                    Self.stderr("seeded \(dataset) \(generator == nil ? "books (\(feedbackPerBook) feedback each)" : "\(entity) objects") in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .abbreviated)))")
                }
            } else if needsIDs {
                // The objects already there that the predicate selects
                // (the Books workload's range predicate has variables).
                versions = try await Workload.existing(entity: entity, predicate: generator == nil && workload == .books ? "" : predicate, limit: 100_000, client: clients[0])
            }
        } catch let error as StrataClientError {
            Self.stderr("error: cannot prepare the load: \(error)")
            // The table of docs/cli.md: a refused predicate or value is 1.
            switch error.code {
            case .unavailable, .cancelled, .deadlineExceeded: throw ExitCode(Status.connection)
            case .internal, .unknown, .dataLoss, .resourceExhausted, .unimplemented: throw ExitCode(Status.requestsFailed)
            default: throw ExitCode(Status.usage)
            }
        }
        if versions.isEmpty, needsIDs {
            Self.stderr("error: no \(entity) objects to get, update or refresh\(predicate.isEmpty || workload == .books ? "" : " match --where"): insert some with --dataset N (strata-bench never writes unasked), or leave get, update and refresh out of --mix")
            throw ExitCode(Status.usage)
        }
        var probe: NotificationProbe?
        if let watchPort {
            let watcher = StrataClient(configuration: ClientConfiguration(host: watchHost ?? host, port: watchPort, clientName: "strata-bench-watch", authToken: token, tls: tls, allowsPlaintextToken: insecure))
            do {
                let started = NotificationProbe(client: watcher)
                try await started.start(entity: entity)
                probe = started
            } catch {
                Self.stderr("error: cannot subscribe on \(watchHost ?? host):\(watchPort): \(error)")
                throw ExitCode(2)
            }
        }
        // Connected after the seeding, so a long seed does not leave the
        // load's connections idle long enough for the server to close them.
        let wire: WireDriver?
        do {
            wire = driver == .wire
                ? try await WireDriver.connect(host: host, port: port, count: connections, threads: threads, clientName: "strata-bench", authToken: token, compression: compression, tls: tls, connectTimeout: connectTimeout)
                : nil
        } catch {
            throw Self.connectionFailure(error, endpoint: "\(host):\(port)")
        }
        defer { if let wire { Task { await wire.close() } } }
        let workload = Workload(
            entity: entity, predicate: predicate, generator: generator,
            sortsByPages: generator == nil && predicate == "pages >= $LOW AND pages <= $HIGH",
            queryLimit: UInt32(clamping: queryLimit),
            ids: versions.keys.sorted(), versions: versions,
            preparesGets: driver == .wire && mix.includes(.get),
            preparesQueries: driver == .wire && mix.includes(.query), probe: probe
        )
        let concurrency = self.concurrency ?? connections
        let shape = LoadShape(
            rate: rps,
            ramp: ramp.flatMap(DurationParsing.parse).map(Report.seconds) ?? 0,
            timeout: timeout.flatMap(DurationParsing.parse).map(Report.seconds)
        )
        func load(requestLimit: Int?, duration: Duration?, progress: LoadRunner.Progress, seed: UInt64, shape: LoadShape) async -> (Recorder, Duration) {
            if let wire {
                return await wire.run(workload: workload, mix: mix, concurrency: concurrency, requestLimit: requestLimit, duration: duration, rate: rps, shape: shape, progress: progress, seed: seed)
            }
            let runner = LoadRunner(clients: clients, workload: workload, mix: mix, concurrency: concurrency, requestLimit: requestLimit, duration: duration, rate: rps, shape: shape)
            return await runner.run(progress: progress, seed: seed)
        }
        if let warmup, let warmupDuration = DurationParsing.parse(warmup), warmupDuration > .zero {
            // The warmup runs at full load (no ramp).
            _ = await load(requestLimit: nil, duration: warmupDuration, progress: LoadRunner.Progress(), seed: 7, shape: LoadShape(rate: rps, ramp: 0, timeout: shape.timeout))
        }
        let limit = duration == nil ? (requests ?? 10_000) : nil
        let progress = LoadRunner.Progress()
        let ticker = interactive ? Task { await Self.showProgress(progress) } : nil
        let (recorder, elapsed) = await load(requestLimit: limit, duration: duration.flatMap(DurationParsing.parse), progress: progress, seed: 42, shape: shape)
        ticker?.cancel()
        if interactive { Self.progressLine("") }

        let settings: [String: Any] = [
            "host": host, "port": port, "connections": connections, "concurrency": concurrency,
            "mix": mix.description, "rps": rps ?? 0, "requestsLimit": limit ?? 0,
            "durationLimitSeconds": duration.flatMap(DurationParsing.parse).map(Report.seconds) ?? 0,
            "dataset": versions.count, "compression": compression, "where": predicate, "driver": driver.rawValue, "threads": threads,
            "workload": self.workload.rawValue, "entity": entity, "rampSeconds": shape.ramp, "timeoutSeconds": shape.timeout ?? 0,
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
        if let timeseries {
            try Data(report.timeSeriesCSV.utf8).write(to: URL(fileURLWithPath: timeseries))
        }
        if !quiet {
            print(json ? jsonText : csv ? report.csv : report.text)
        }
        if let limit, recorder.requests < limit {
            // Every connection closed before the count was reached.
            Self.stderr("error: only \(recorder.requests) of \(limit) requests were made: the server closed the connections")
            throw ExitCode(Status.connection)
        }
        // k6-style thresholds: latencies, then failures.
        var breached: [String] = []
        let overall = recorder.overall
        for (name, limit, percentile) in [("p50", p50Under, 50.0), ("p99", p99Under, 99.0)] {
            guard let limit, let bound = DurationParsing.parse(limit) else { continue }
            let micros = overall.totalCount > 0 ? overall.valueAtPercentile(percentile) : 0
            if Double(micros) / 1e6 >= Report.seconds(bound) {
                breached.append(String(format: "%@ latency %.3f ms is not under %@", name, Double(micros) / 1000, limit))
            }
        }
        let failed = recorder.errors.values.flatMap(\.values).reduce(0, +)
        let allowed = maxErrorRate.flatMap(Self.rate) ?? 0
        let rate = recorder.requests > 0 ? Double(failed) / Double(recorder.requests) : 0
        if !breached.isEmpty {
            for line in breached { Self.stderr("error: threshold breached: \(line)") }
            throw ExitCode(Status.threshold)
        }
        if failed > 0, rate > allowed {
            Self.stderr(String(format: "error: %d of %d requests failed (%.2f%%%@)", failed, recorder.requests, rate * 100, maxErrorRate.map { ", more than --max-error-rate \($0)" } ?? ""))
            for (code, message) in recorder.messages.sorted(by: { $0.key < $1.key }) { Self.stderr("  first \(code): \(message)") }
            // Only lost connections: the server went away (2), else 5.
            let statuses = Set(recorder.errors.values.flatMap(\.keys))
            throw ExitCode(statuses == ["UNAVAILABLE"] ? Status.connection : Status.requestsFailed)
        }
    }

    /// Says why connecting failed, as `strata` does, and returns the exit
    /// status of the table: 1 for a refused token or certificate (as
    /// `strata`), 2 for a server that cannot be reached.
    static func connectionFailure(_ error: any Error, endpoint: String) -> ExitCode {
        let text = "\(error)"
        if let tls = ClientTLS.describe(error, endpoint: endpoint) {
            stderr("error: \(tls)")
            return ExitCode(Status.connection)
        }
        if let client = error as? StrataClientError, client.code == .unauthenticated || client.code == .permissionDenied {
            stderr("error: \(client.code.name): \(client.message)")
            return ExitCode(Status.usage)
        }
        if text.contains("UNAUTHENTICATED") || text.contains("PERMISSION_DENIED") {
            stderr("error: \(text)")
            return ExitCode(Status.usage)
        }
        let reason = text.contains("Connection refused") || text.contains("errno: 111")
            ? "connection refused (is strata-server running there?)"
            : text.contains("connectTimeout") || text.contains("timed out") ? "timed out" : text
        stderr("error: cannot connect to \(endpoint): \(reason)")
        return ExitCode(Status.connection)
    }

    /// `0.01` or `1%` as a fraction in 0...1.
    static func rate(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let value = trimmed.hasSuffix("%") ? Double(trimmed.dropLast()).map { $0 / 100 } : Double(trimmed)
        guard let value, (0...1).contains(value) else { return nil }
        return value
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
