// Package projection is the projection engine: it runs the projectors of
// package projections, feeding each the event log in log order through
// its own watermill subscriber, with exactly-once effect (a batch's
// writes and its checkpoint commit in one transaction).
//
// Where to look:
//   - runtime.go: Runtime, its Options, registration and Start;
//   - runner.go and batch.go: a projection's live runner, its
//     subscription and the handling of one batch;
//   - versions.go: a projection's versions (one PostgreSQL schema each),
//     the public views over the live one, and what makes a version
//     outdated;
//   - rebuild.go and verify.go: Rebuild, which replays the log into a new
//     version and switches reads to it;
//   - waitfor.go: WaitFor, the read-your-writes wait on checkpoints;
//   - changes.go: the announcements of what batches changed, for readers
//     that keep rows in memory (Options.OnChange);
//   - horizon.go: Horizon, up to when a read model can vouch for the log;
//   - parking.go, replay.go, rebuild_parked.go: Park, which lets a
//     projection go on past an event it cannot apply, and Replay, which
//     applies the parked events later; locate.go finds the event a failed
//     batch fails on; failures.go records the runners' last failure;
//   - status.go: Status, Health and Ready, for operators and probes;
//   - decode.go, checkpoints.go, statistics.go: reading and decoding the
//     log, the checkpoint rows, and the planner statistics of growing
//     tables.
package projection
