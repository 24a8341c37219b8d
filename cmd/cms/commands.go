package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	httpapi "github.com/halocms/halocms/adapters/http"
	httpanalytics "github.com/halocms/halocms/adapters/http/analytics"
	httpappuser "github.com/halocms/halocms/adapters/http/appuser"
	httpcontent "github.com/halocms/halocms/adapters/http/content"
	httpidentity "github.com/halocms/halocms/adapters/http/identity"
	httployalty "github.com/halocms/halocms/adapters/http/loyalty"
	httpmedia "github.com/halocms/halocms/adapters/http/media"
	httppush "github.com/halocms/halocms/adapters/http/push"
	cmdidentity "github.com/halocms/halocms/commands/identity"
	"github.com/halocms/halocms/domain/access"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
)

func serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Migrate, start the projections and serve the HTTP API",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cfg)
		},
	}
}

func migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded SQL migrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			fmt.Println("database is migrated")
			return nil
		},
	}
}

func auditCmd() *cobra.Command {
	c := &cobra.Command{Use: "audit", Short: "Replay histories from the event log"}
	var user, app, at string
	var asJSON bool
	rc := &cobra.Command{
		Use:   "rights",
		Short: "A user's grants and revokes, and their effective rights as of a moment",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return fmt.Errorf("--user is required")
			}
			var t time.Time
			if at != "" {
				var err error
				if t, err = time.Parse(time.RFC3339, at); err != nil {
					return fmt.Errorf("--at: want an RFC 3339 time such as 2026-01-02T15:04:05Z: %w", err)
				}
			}
			return runAudit(cmd.Context(), asJSON, func(ctx context.Context, a *rmaudit.Auditor) (rmaudit.RightsReport, error) {
				return a.Rights(ctx, rmaudit.RightsQuery{User: user, App: app, At: t})
			}, httpidentity.RightsAudit, printRightsReport)
		},
	}
	rc.Flags().StringVar(&user, "user", "", "user id (required)")
	rc.Flags().StringVar(&app, "app", "", "only this app")
	rc.Flags().StringVar(&at, "at", "", "as of this moment (RFC 3339; default now)")
	rc.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.AddCommand(rc, auditLoyaltyCmd())
	return c
}

// runAudit opens the database, runs one audit as the system and prints
// its report with print, or as indented JSON of what wire makes of it.
func runAudit[R any](ctx context.Context, asJSON bool, run func(context.Context, *rmaudit.Auditor) (R, error), wire func(R) any, print func(R)) error {
	a, err := openOneShot(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := run(access.WithActor(ctx, access.SystemActor), a.auditor)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(wire(rep))
	}
	print(rep)
	return nil
}

// auditLoyaltyCmd is `cms audit loyalty`: a loyalty account's events
// replayed from the log, each with the running balance, who, when and
// from where; the last line is the final balance and, without --to, the
// read model's set against it.
func auditLoyaltyCmd() *cobra.Command {
	var user, from, to string
	var asJSON bool
	c := &cobra.Command{
		Use:   "loyalty",
		Short: "A loyalty account's transactions with the running balance, replayed from the event log",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return fmt.Errorf("--user is required")
			}
			f, err := cliMoment(from, "--from")
			if err != nil {
				return err
			}
			t, err := cliMoment(to, "--to")
			if err != nil {
				return err
			}
			return runAudit(cmd.Context(), asJSON, func(ctx context.Context, a *rmaudit.Auditor) (rmaudit.LoyaltyReport, error) {
				return a.Loyalty(ctx, rmaudit.LoyaltyQuery{User: user, From: f, To: t})
			}, loyaltyReportJSON, printLoyaltyReport)
		},
	}
	c.Flags().StringVar(&user, "user", "", "identified user id (required)")
	c.Flags().StringVar(&from, "from", "", "from this moment (RFC 3339 or epoch milliseconds; default the beginning)")
	c.Flags().StringVar(&to, "to", "", "up to this moment (RFC 3339 or epoch milliseconds; default now)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// loyaltyReportJSON is what `cms audit loyalty --json` prints: the report
// itself, under its Go field names, as it always has (unlike the rights
// audit, which prints the API's body); scripts read those names.
func loyaltyReportJSON(rep rmaudit.LoyaltyReport) any { return rep }

// cliMoment reads an RFC 3339 time or epoch milliseconds ("": none).
func cliMoment(s, flag string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(n), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("%s: want an RFC 3339 time such as 2026-01-02T15:04:05Z or epoch milliseconds", flag)
	}
	return t, nil
}

func printLoyaltyReport(rep rmaudit.LoyaltyReport) {
	fmt.Printf("Loyalty history of user %s (app %s)", rep.User, rep.App)
	if !rep.From.IsZero() {
		fmt.Printf(" from %s", rep.From.UTC().Format(time.RFC3339))
	}
	if !rep.To.IsZero() {
		fmt.Printf(" to %s", rep.To.UTC().Format(time.RFC3339))
	}
	fmt.Printf("\n\nOpening balance: %d\n\n", rep.Opening)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "WHEN\tTYPE\tTRANSACTION\tAMOUNT\tBALANCE\tRECORDED\tBY\tFROM\tDETAIL\t")
	for _, e := range rep.Entries {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", e.RecordedAt.UTC().Format(time.RFC3339Nano), e.Type,
			dash(e.Transaction), e.Amount, e.Balance, e.Recorded, e.By, dash(e.ClientIP), loyaltyDetail(e))
	}
	_ = w.Flush()
	state := "consistent"
	if !rep.Consistent {
		state = "INCONSISTENT: a rebalance would record a correction"
	}
	fmt.Printf("\nFinal balance: %d (recorded %d, %s)%s\n", rep.Balance, rep.Recorded, state, readModelText(rep.ReadModel))
}

// readModelText says how the read model's balance compares with the
// replay ("" when the report has no comparison: a to in the past).
func readModelText(m *rmaudit.LoyaltyReadModelCheck) string {
	switch {
	case m == nil:
		return ""
	case !m.CaughtUp:
		return fmt.Sprintf("; read model %d, NOT CAUGHT UP (applied version %d of %d)", m.Balance, m.Applied, m.Last)
	case !m.Matches:
		return fmt.Sprintf("; read model %d, caught up, DIFFERS FROM THE REPLAY", m.Balance)
	}
	return fmt.Sprintf("; read model %d, caught up, matches", m.Balance)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// loyaltyDetail is what else an entry says: its reason and reference, the
// lot it expired, the card and stamps.
func loyaltyDetail(e rmaudit.LoyaltyEntry) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+strconv.Quote(v))
		}
	}
	add("reason", e.Reason)
	add("reference", e.Reference)
	add("key", e.IdempotencyKey)
	add("lot", e.Lot)
	add("card", e.Card)
	add("userCard", e.UserCard)
	if e.Stamps != 0 {
		parts = append(parts, "stamps="+strconv.Itoa(e.Stamps))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func scopeText(kind, id string) string {
	if kind == "app" || kind == "" {
		return "whole app"
	}
	return kind + " " + id
}

func printRightsReport(rep rmaudit.RightsReport) {
	fmt.Printf("Rights history of user %s", rep.User)
	if rep.App != "" {
		fmt.Printf(" on app %s", rep.App)
	}
	fmt.Printf(" as of %s\n\n", rep.At.UTC().Format(time.RFC3339))
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WHEN\tACTION\tAPP\tSCOPE\tPERMISSIONS\tBY\tFROM")
	for _, c := range rep.Changes {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%v\t%s\t%s\n", c.RecordedAt.UTC().Format(time.RFC3339Nano), c.Action, c.App,
			scopeText(c.Scope.Kind.String(), c.Scope.ID), c.Permissions, c.By, c.ClientIP)
	}
	_ = w.Flush()
	fmt.Println("\nEffective rights:")
	if len(rep.Effective) == 0 {
		fmt.Println("  (none)")
	}
	for _, e := range rep.Effective {
		fmt.Printf("  app %s, %s: %v\n", e.App, scopeText(e.Scope.Kind.String(), e.Scope.ID), e.Permissions)
	}
}

func usersCmd() *cobra.Command {
	c := &cobra.Command{Use: "users", Short: "Manage CMS users"}
	var u cmdidentity.CreateUser
	var ips []string
	cc := &cobra.Command{
		Use:   "create",
		Short: "Create a CMS user (the password is read from CMS_NEW_PASSWORD or --password)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if u.Password == "" {
				u.Password = os.Getenv("CMS_NEW_PASSWORD")
			}
			u.AllowedIPs = ips
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			ctx := access.WithActor(cmd.Context(), access.SystemActor)
			created, err := a.identity.CreateUser(ctx, u)
			if err != nil {
				return err
			}
			fmt.Printf("created user %s (id %s, admin %v)\n", created.Username, created.ID, created.Admin)
			return nil
		},
	}
	cc.Flags().StringVar(&u.Username, "username", "", "login name (required)")
	cc.Flags().StringVar(&u.Password, "password", "", "password (prefer CMS_NEW_PASSWORD)")
	cc.Flags().StringVar(&u.Email, "email", "", "email")
	cc.Flags().StringVar(&u.Name, "name", "", "display name")
	cc.Flags().BoolVar(&u.Admin, "admin", false, "make an administrator")
	cc.Flags().StringSliceVar(&ips, "allowed-ip", nil, "allowed CIDR (repeatable; none = any)")
	c.AddCommand(cc)
	return c
}

// openOneShot opens the app for a command that runs no projections.
func openOneShot(ctx context.Context) (*app, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	return open(ctx, cfg, false)
}

func moduleTypesCmd() *cobra.Command {
	c := &cobra.Command{Use: "moduletypes", Short: "Export and import module types (reusable field configurations)"}
	c.AddCommand(&cobra.Command{
		Use:   "export",
		Short: "Print the module types as the JSON document GET /api/core/moduletype/download returns",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			ts, err := a.contents.ModuleTypes(cmd.Context())
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(httpcontent.ExportModuleTypes(ts))
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "import FILE",
		Short: "Create or replace the module types of an exported document (FILE, or - for stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			specs, err := httpcontent.ParseModuleTypes(in)
			if err != nil {
				return err
			}
			a, err := openOneShot(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			ctx := access.WithActor(cmd.Context(), access.SystemActor)
			ts, err := a.content.ImportModuleTypes(ctx, specs)
			if err != nil {
				return err
			}
			for _, t := range ts {
				fmt.Fprintf(cmd.OutOrStdout(), "saved module type %s (%s)\n", t.Name, t.ID)
			}
			return nil
		},
	})
	return c
}

func openapiCmd() *cobra.Command {
	var asYAML bool
	c := &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI document the server serves (JSON; --yaml for YAML)",
		Long: "Print the OpenAPI document that `cms serve` serves at /openapi.json, without a database.\n" +
			"The web CMS's API client is generated from it (make web-client).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			y, j, err := httpapi.OpenAPIDocument(apiFragments()...)
			if err != nil {
				return err
			}
			if asYAML {
				_, err = os.Stdout.Write(y)
			} else {
				_, err = os.Stdout.Write(append(j, '\n'))
			}
			return err
		},
	}
	c.Flags().BoolVar(&asYAML, "yaml", false, "print YAML instead of JSON")
	return c
}

// apiFragments are the contexts' parts of the OpenAPI document, in the
// order serve mounts them (the merged document is the same).
func apiFragments() [][]byte {
	return [][]byte{(&httpidentity.API{}).OpenAPI(), (&httpcontent.API{}).OpenAPI(), (&httppush.API{}).OpenAPI(),
		(&httpappuser.API{}).OpenAPI(), (&httployalty.API{}).OpenAPI(), (&httpanalytics.API{}).OpenAPI(), (&httpmedia.API{}).OpenAPI()}
}
