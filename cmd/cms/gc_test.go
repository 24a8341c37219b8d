package main

import (
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// keepGC restores the collector's settings after a test of tuneGC.
func keepGC(t *testing.T) {
	gogc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(gogc); debug.SetMemoryLimit(limit) })
}

func gcNow() (gogc int, limit int64) { return gcPercent(), debug.SetMemoryLimit(-1) }

// unsetenv unsets the variables for the test (t.Setenv restores them).
func unsetenv(t *testing.T, names ...string) {
	for _, n := range names {
		t.Setenv(n, "")
		os.Unsetenv(n)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestTuneGCDefaults(t *testing.T) {
	keepGC(t)
	unsetenv(t, "GOGC", "GOMEMLIMIT", "AUTOMEMLIMIT")
	tuneGC(quiet)
	gogc, limit := gcNow()
	if gogc != serveGOGC {
		t.Errorf("GOGC %d, want %d", gogc, serveGOGC)
	}
	wantLimit(t, limit)
}

// wantLimit checks that limit is serveMemRatio of the process's memory.
func wantLimit(t *testing.T, limit int64) {
	t.Helper()
	total, err := memoryOfProcess()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(float64(total) * serveMemRatio); limit < want*99/100 || limit > want*101/100 {
		t.Errorf("memory limit %d, want about %d (%.0f%% of %d)", limit, want, serveMemRatio*100, total)
	}
	if sys, _ := memlimit.FromSystem(); total > sys {
		t.Errorf("the process's memory %d is more than the machine's %d", total, sys)
	}
}

// Empty variables are unset ones, as Go reads them.
func TestTuneGCEmptyVariables(t *testing.T) {
	keepGC(t)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	unsetenv(t, "AUTOMEMLIMIT")
	tuneGC(quiet)
	gogc, limit := gcNow()
	if gogc != serveGOGC {
		t.Errorf("GOGC %d, want %d", gogc, serveGOGC)
	}
	wantLimit(t, limit)
}

// GOGC set alone: the operator's GOGC, the default limit.
func TestTuneGCWithTheOperatorsGOGCOnly(t *testing.T) {
	keepGC(t)
	t.Setenv("GOGC", "150")
	unsetenv(t, "GOMEMLIMIT", "AUTOMEMLIMIT")
	tuneGC(quiet)
	gogc, limit := gcNow()
	if gogc != 100 { // what keepGC left: tuneGC does not change it
		t.Errorf("GOGC %d, want the operator's left as it was", gogc)
	}
	wantLimit(t, limit)
}

func TestTuneGCLeavesTheOperatorsChoice(t *testing.T) {
	keepGC(t)
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	tuneGC(quiet)
	if gogc, limit := gcNow(); gogc != 100 || limit != 1<<30 {
		t.Errorf("GOGC %d, memory limit %d: want both left as they were (100, %d)", gogc, limit, 1<<30)
	}
}

func TestTuneGCWithTheOperatorsLimitOnly(t *testing.T) {
	keepGC(t)
	t.Setenv("GOMEMLIMIT", "1GiB")
	unsetenv(t, "GOGC")
	debug.SetMemoryLimit(1 << 30)
	tuneGC(quiet)
	if gogc, limit := gcNow(); gogc != serveGOGC || limit != 1<<30 {
		t.Errorf("GOGC %d, memory limit %d: want %d under the operator's %d", gogc, limit, serveGOGC, 1<<30)
	}
}

func TestTuneGCWithoutALimit(t *testing.T) {
	keepGC(t)
	t.Setenv("AUTOMEMLIMIT", "off")
	unsetenv(t, "GOGC", "GOMEMLIMIT")
	tuneGC(quiet)
	if gogc, limit := gcNow(); gogc != 100 || limit != math.MaxInt64 {
		t.Errorf("GOGC %d, memory limit %d: with no limit, want Go's defaults", gogc, limit)
	}
}
