import Metrics

/// A SQLite store's figures for swift-metrics (no-ops unless a backend is
/// bootstrapped before the store opens, as `strata-server` does with
/// `--admin-port`): how many saves each group commit wrote, how long its
/// transaction took (writes, history, `COMMIT` and its WAL sync), and the
/// checkpoints of its write-ahead log. Labelled with the store's
/// configuration (`default` without one).
struct SQLiteStoreMetrics: Sendable {
    /// Saves per group commit.
    let groupSize: Recorder
    /// Time per group commit.
    let commitDuration: Metrics.Timer
    /// Checkpoints run after saves.
    let checkpoints: Counter

    init(configuration: String?) {
        let dimensions = [("store", configuration ?? "default")]
        groupSize = Recorder(label: "strata_commit_group_size", dimensions: dimensions)
        commitDuration = Metrics.Timer(label: "strata_commit_duration", dimensions: dimensions)
        checkpoints = Counter(label: "strata_wal_checkpoints_total", dimensions: dimensions)
    }

    /// Records one group commit.
    func recordCommit(saves: Int, duration: Duration) {
        groupSize.record(saves)
        commitDuration.record(duration: duration)
    }
}
