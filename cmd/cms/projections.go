package main

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/halocms/halocms/adapters/projection"
)

func projectionsCmd() *cobra.Command {
	c := &cobra.Command{Use: "projections", Short: "Inspect, rebuild and unblock projections"}
	c.AddCommand(projectionsStatusCmd(), projectionsRebuildCmd(), projectionsParkCmd(), projectionsReplayCmd())
	return c
}

func projectionsStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Checkpoint, lag, state, last failure and parked events of every projection",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			sts, err := a.runtime.FullStatus(cmd.Context())
			if err != nil {
				return err
			}
			return printProjectionStatus(cmd.OutOrStdout(), sts)
		},
	}
}

// printProjectionStatus prints the table of projections, then what is
// wrong with each: its last failure, the events parked for it.
func printProjectionStatus(out io.Writer, sts []projection.Status) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PROJECTION\tVERSION\tCHECKPOINT\tLAG EVENTS\tLAG SECONDS\tUPDATED\tSTATE\tPARKED")
	for _, s := range sts {
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%.1f\t%s\t%s\t%d\n", s.Name, s.Version, s.Checkpoint, s.LagEvents,
			s.LagSeconds, s.UpdatedAt.Format(time.RFC3339), projectionState(s), len(s.Parked))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, s := range sts {
		if s.Outdated != "" {
			fmt.Fprintf(out, "\n%s needs a rebuild: %s (run `cms projections rebuild %s`)\n", s.Name, s.Outdated, s.Name)
		}
		if f := s.Failure; f != nil {
			fmt.Fprintf(out, "\n%s is failing since %s (%d batches in a row in %s, last at %s):\n  %s\n", s.Name,
				f.Since.UTC().Format(time.RFC3339), f.Failures, f.Process, f.At.UTC().Format(time.RFC3339), f.Error)
		}
		if len(s.Parked) > 0 {
			fmt.Fprintf(out, "\n%s goes on past %d parked event(s) (applied again by `cms projections replay %s`):\n", s.Name, len(s.Parked), s.Name)
			for _, p := range s.Parked {
				fmt.Fprintf(out, "  %s  %s  stream %s  id %s  parked %s by %s: %s\n", p.Position, p.EventType, p.StreamID, p.EventID,
					p.ParkedAt.UTC().Format(time.RFC3339), p.By, p.Reason)
			}
		}
	}
	return nil
}

// projectionState is what the status table says of a projection's state,
// as the database knows it (the runners' own state is in /readyz).
func projectionState(s projection.Status) string {
	switch {
	case !s.Registered:
		return "unknown projection"
	case s.Outdated != "":
		return "needs rebuild"
	case s.Failure != nil && s.Failure.Event != nil:
		return "failing at " + s.Failure.Event.String()
	case s.Failure != nil:
		return "failing"
	case s.Rebuild != nil:
		return fmt.Sprintf("rebuilding v%d at %s", s.Rebuild.Version, s.Rebuild.Checkpoint)
	}
	return "ok"
}

func projectionsRebuildCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild NAME",
		Short: "Replay the whole log into a new version of a projection, then switch reads to it",
		Long: "Replay the whole log into a new version of a projection, then switch reads to it.\n" +
			"Events parked for the projection are left out, as its live runners leave them out;\n" +
			"`cms projections replay` applies them.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			var bar *progressbar.ProgressBar
			start := time.Now()
			var last int64
			err = a.runtime.Rebuild(cmd.Context(), args[0], func(done, total int64) {
				if bar == nil {
					bar = progressbar.NewOptions64(total,
						progressbar.OptionSetDescription("rebuilding "+args[0]),
						progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("events"),
						progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
						progressbar.OptionSetWriter(os.Stderr), progressbar.OptionFullWidth())
				}
				if total > bar.GetMax64() {
					bar.ChangeMax64(total)
				}
				_ = bar.Set64(done)
				last = done
			})
			if bar != nil {
				_ = bar.Finish()
				fmt.Fprintln(os.Stderr)
			}
			if err != nil {
				return err
			}
			el := time.Since(start)
			fmt.Fprintf(cmd.OutOrStdout(), "rebuilt %s: %d events in %s (%.0f events/s); reads switched to the new version\n",
				args[0], last, el.Round(time.Millisecond), float64(last)/el.Seconds())
			return nil
		},
	}
}

func projectionsParkCmd() *cobra.Command {
	var req projection.ParkRequest
	c := &cobra.Command{
		Use:   "park NAME --event TX/POS --reason TEXT",
		Short: "Let a projection go on past an event it cannot apply (recorded in the log; nothing is lost)",
		Long: "Park an event for a projection that cannot apply it: the projection's runners (in every process)\n" +
			"and its rebuilds go on past it without applying it, /readyz and `cms projections status` list it,\n" +
			"and `cms projections replay NAME` applies it once a fixed projector is deployed. The event stays\n" +
			"in the log; the parking is recorded there too (operations.event_parked: who, when, why).\n" +
			"--event is the position the error names (TX/POS, as the log, /readyz and status print it) or the event's id.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Projection = args[0]
			if req.By == "" {
				req.By = osUser()
			}
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			p, err := a.runtime.Park(cmd.Context(), req)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "parked %s (%s, stream %s, id %s) for %s, by %s; the projection goes on past it\n",
				p.Position, p.EventType, p.StreamID, p.EventID, p.Projection, p.By)
			return nil
		},
	}
	c.Flags().StringVar(&req.Event, "event", "", "the event: its position TX/POS or its id (required)")
	c.Flags().StringVar(&req.Reason, "reason", "", "why it is parked, for the audit trail (required)")
	c.Flags().StringVar(&req.By, "by", "", "who parks it (default: the operating-system user)")
	_ = c.MarkFlagRequired("event")
	_ = c.MarkFlagRequired("reason")
	return c
}

func projectionsReplayCmd() *cobra.Command {
	var by, reason string
	c := &cobra.Command{
		Use:   "replay NAME",
		Short: "Apply the events parked for a projection (once a fixed projector is deployed), and unpark them",
		Long: "Apply the events parked for a projection to its live tables, in log order, in one transaction\n" +
			"with them, and unpark them; the replay is recorded in the log (operations.parked_events_replayed).\n" +
			"If the projector still fails on one, nothing changes and the error names it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if by == "" {
				by = osUser()
			}
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			res, err := a.runtime.Replay(cmd.Context(), args[0], by, reason)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(res.Applied)+len(res.Released) == 0 {
				fmt.Fprintf(out, "nothing is parked for %s\n", args[0])
				return nil
			}
			for _, p := range res.Applied {
				fmt.Fprintf(out, "applied %s (%s, stream %s)\n", p.Position, p.EventType, p.StreamID)
			}
			for _, p := range res.Released {
				fmt.Fprintf(out, "unparked %s (%s, stream %s): the projection applies it when it gets there\n", p.Position, p.EventType, p.StreamID)
			}
			fmt.Fprintf(out, "%s: %d parked event(s) applied, %d unparked\n", args[0], len(res.Applied), len(res.Released))
			return nil
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why, for the audit trail (required)")
	c.Flags().StringVar(&by, "by", "", "who replays (default: the operating-system user)")
	_ = c.MarkFlagRequired("reason")
	return c
}

// osUser is the operating-system user running the command, for the audit
// trail of parkings and replays.
func osUser() string {
	if u, err := user.Current(); err == nil && strings.TrimSpace(u.Username) != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}
