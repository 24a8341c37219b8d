package main

// CPU time: the bench's own and the machine's, read beside each
// measurement so that a slow figure can be told from a busy machine.

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTimes are the jiffies of all CPUs since boot (Linux /proc/stat):
// busy (user, nice, system, irq, softirq), stolen by the hypervisor, and
// all of them with idle and iowait.
type cpuTimes struct{ busy, steal, total float64 }

// machineCPU reads the machine's cpuTimes; zero when /proc/stat is not
// there.
func machineCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		if i >= 8 { // guest time is already in user
			break
		}
		t.total += x
		switch i {
		case 3, 4: // idle, iowait
		case 7:
			t.steal += x
		default:
			t.busy += x
		}
	}
	return t
}

// since describes the machine's CPU between before and t: how busy it
// was, and how much the hypervisor took (steal: time a CPU of this
// machine was ready to run and another guest ran), which explains a
// slower run better than any figure of this program.
func (t cpuTimes) since(before cpuTimes) string {
	d := t.total - before.total
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(", machine %.0f%% busy of %d CPUs, %.0f%% stolen by the hypervisor",
		100*(t.busy-before.busy)/d, runtime.NumCPU(), 100*(t.steal-before.steal)/d)
}

func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
