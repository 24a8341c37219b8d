package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// Garbage collector defaults of `cms serve`, each applied only when the
// operator did not set Go's own variable (GOGC, GOMEMLIMIT; AUTOMEMLIMIT
// "off" or another ratio, see memlimit.Set); an empty variable counts as
// unset, as Go itself reads it:
//
//   - serveMemRatio: a soft memory limit of 80% of the memory the process
//     may use (its cgroup's limit, at most the machine's memory). Near it
//     the collector runs more often (up to about half the CPU) to stay
//     under, whatever GOGC says; the rest is left to stacks, buffers and
//     the limit's overshoot.
//   - serveGOGC: the heap may grow to five times what is live before a
//     collection (Go's default: twice). A batch import allocates most of
//     what it decodes and encodes for a moment only; collecting less often
//     gave imports about 7–13% more items a second (docs/benchmarks-history.md).
//     Only under a memory limit: without one, nothing would bound the
//     larger heap.
const (
	serveGOGC     = 400
	serveMemRatio = 0.8
)

// tuneGC applies those defaults and logs what the collector runs with.
func tuneGC(log *slog.Logger) {
	if v, set := os.LookupEnv("GOMEMLIMIT"); set && v == "" {
		os.Unsetenv("GOMEMLIMIT") // memlimit.Set would take it for the operator's
	}
	limit, err := memlimit.Set(memlimit.WithRatio(serveMemRatio), memlimit.WithProvider(memoryOfProcess))
	if err != nil {
		log.Warn("the memory limit was left as it was", "err", err)
	}
	applied := false
	if os.Getenv("GOGC") == "" && limit > 0 && limit < 1<<62 {
		debug.SetGCPercent(serveGOGC)
		applied = true
	}
	log.Info("garbage collector", "gogc", gcPercent(), "gogc_default", applied, "memory_limit_bytes", debug.SetMemoryLimit(-1))
}

// gcPercent is the collector's GOGC now (-1: off); the runtime tells it
// only by setting another.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// memoryOfProcess is the memory the process may use: its cgroup's limit
// when there is one below the machine's memory, else the machine's.
func memoryOfProcess() (uint64, error) {
	total, err := memlimit.FromSystem()
	if err != nil {
		return 0, err
	}
	if cg, err := memlimit.FromCgroup(); err == nil && cg < total {
		return cg, nil
	}
	return total, nil
}
