import Foundation

/// `strata-embedded-bench`: side-by-side figures for the embedded stack.
///
/// 1. Predicate evaluation in memory vs the same predicate compiled to SQL
///    over the same rows (issue: model and predicate language).
/// 2. 100k `Book` inserts through a context with one save, and a fetch of
///    them all with a predicate and a sort, vs raw SQLite through its C API
///    with prepared statements in one transaction (issue: embedded stack).
///
/// Build in release: `swift run -c release strata-embedded-bench [--rows N] [--runs R]`.
@main
struct BenchmarkMain {
    static func main() async {
        var rows = 100_000
        var runs = 3
        var only: String?
        var saves = 20_000
        var concurrency = 50
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--rows": rows = arguments.next().flatMap(Int.init) ?? rows
            case "--runs": runs = arguments.next().flatMap(Int.init) ?? runs
            case "--only": only = arguments.next()
            case "--saves": saves = arguments.next().flatMap(Int.init) ?? saves
            case "--concurrency": concurrency = arguments.next().flatMap(Int.init) ?? concurrency
            case "-h", "--help":
                print("usage: strata-embedded-bench [--rows N] [--runs R] [--only predicates|embedded|strata|small-saves] [--saves N] [--concurrency C]")
                print("  strata: only Strata's side of the embedded benchmark, for profiling (no baseline, no ratio)")
                print("  small-saves: N saves of one object, C at a time, through the store and through contexts, vs raw SQLite")
                return
            default:
                FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
                exit(1)
            }
        }
        do {
            if only == nil || only == "predicates" {
                try PredicateBenchmark(rows: rows, runs: runs).run()
            }
            if only == nil || only == "embedded" {
                try await EmbeddedBenchmark(rows: rows, runs: runs).run()
            }
            if only == "small-saves" {
                try await SmallSaveBenchmark(saves: saves, concurrency: concurrency, runs: runs).run()
            }
            if only == "strata" {
                try await EmbeddedBenchmark(rows: rows, runs: runs).runStrataOnly()
            }
        } catch {
            FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
            exit(1)
        }
    }
}

/// Wall-clock timing helpers.
enum Stopwatch {
    /// Seconds taken by `body`.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return seconds(ContinuousClock.now - start)
    }

    /// Seconds taken by an async `body`.
    static func time(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return seconds(ContinuousClock.now - start)
    }

    /// CPU seconds the process has used (every thread), for comparing
    /// builds on a machine whose wall times vary from run to run.
    static func processCPU() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    static func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return Double(s) + Double(atto) / 1e18
    }
}

/// Prints an aligned table row.
func printRow(_ columns: [String], widths: [Int]) {
    var line = ""
    for (column, width) in zip(columns, widths) {
        line += column.padding(toLength: max(width, column.count), withPad: " ", startingAt: 0) + "  "
    }
    print(line)
}
