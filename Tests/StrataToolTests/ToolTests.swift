import Testing

/// Every suite that runs the built executables, one at a time. Their tests
/// wait for processes synchronously (a server's log line, a command's
/// exit), which holds a thread of the shared pool meanwhile: on two cores,
/// two such suites at once stalled every other test of the run for
/// seconds, long enough for in-process tests' deadlines to pass.
@Suite(.serialized) enum ToolTests {}
