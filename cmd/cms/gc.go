package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// Garbage collector defaults of `cms serve`, each applied only when the
// operator did not set Go's own variable (GOGC, GOMEMLIMIT; AUTOMEMLIMIT
// "off" or a ratio, see memlimit.Set):
//
//   - serveMemRatio: a soft memory limit of half the memory the process
//     may use (its cgroup's limit, else the machine's). Past it the
//     collector runs as often as it must to stay under, whatever GOGC says.
//   - serveGOGC: the heap may grow to five times what is live before a
//     collection (Go's default: twice). A batch import allocates most of
//     what it decodes and encodes for a moment only; collecting less often
//     gave imports about 7–13% more items a second (docs/benchmarks-history.md).
//     Only with a memory limit in place: without one, nothing would bound
//     the larger heap.
const (
	serveGOGC     = 400
	serveMemRatio = 0.5
)

// tuneGC applies those defaults and logs the memory limit the collector
// runs with.
func tuneGC(log *slog.Logger) {
	limit, err := memlimit.Set(memlimit.WithRatio(serveMemRatio),
		memlimit.WithProvider(memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.FromSystem)))
	if err != nil {
		log.Warn("no memory limit found; the collector keeps its defaults", "err", err)
	}
	gogc := -1 // unchanged
	if _, set := os.LookupEnv("GOGC"); !set && err == nil && limit > 0 && limit < 1<<62 {
		gogc = serveGOGC
		debug.SetGCPercent(gogc)
	}
	log.Info("garbage collector", "gogc_default_applied", gogc > 0, "memory_limit_bytes", debug.SetMemoryLimit(-1))
}
