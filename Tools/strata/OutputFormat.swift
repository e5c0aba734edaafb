import ArgumentParser

/// How `strata fetch` prints objects (`--format`).
enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Aligned columns for people (read whole first: the widths depend on
    /// every row).
    case table
    /// One JSON array, one object per line, streamed as batches arrive.
    case json
    /// One JSON object per line (newline-delimited JSON), streamed.
    case ndjson
    /// RFC 4180 CSV with a header of the entity's properties, streamed.
    case csv
}
