# halocms: see README.md and docs/.
#
# Without DATABASE_URL, PostgreSQL is set up automatically: a local server
# that lets us in (127.0.0.1:5432 or /var/run/postgresql, no password), else
# a private cluster under .data/pg started with the machine's own PostgreSQL
# binaries (installed with apt-get when missing and running as root).
# See .ci/ensure-postgres and adapters/postgres/localcluster.go.
#
#   make run              build and serve
#   make test             lint, then all tests against real PostgreSQL
#   make lint             gofmt, go vet, staticcheck and the layout's rules (cmd/archcheck)
#   make bench            benchmarks (BENCH_ARGS=... passes flags)
#   make clean            stop the private cluster, remove bin/
#
# Environment: DATABASE_URL (use this server, skip all set-up),
# CMS_DATA_DIR (default .data), CMS_FORCE_PRIVATE_PG=1 (ignore local servers),
# CMS_PG_BINDIR (where initdb/pg_ctl are).

GO         ?= go
BENCH_ARGS ?=

# Prefix for recipe lines that need a database: exports DATABASE_URL from
# cmd/devdb (which starts the private cluster if needed) unless it is set.
WITH_DB = if [ -z "$${DATABASE_URL:-}" ]; then \
	  DATABASE_URL="$$($(GO) run ./cmd/devdb)" || exit 1; export DATABASE_URL; \
	  echo "DATABASE_URL=$$DATABASE_URL" >&2; \
	fi;

.PHONY: all build run test lint bench clean pg-deps

all: build

build:
	$(GO) build -o bin/cms ./cmd/cms

# The server finds or starts PostgreSQL itself when DATABASE_URL is unset.
run: pg-deps build
	./bin/cms serve

test: lint pg-deps
	@$(WITH_DB) $(GO) test -count=1 -timeout 20m ./...

# staticcheck is pinned as a tool in go.mod (go tool fetches it once).
lint:
	@out="$$(gofmt -l cmd domain commands projections readmodels adapters)"; \
	  if [ -n "$$out" ]; then echo "gofmt -w these files:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) run ./cmd/archcheck

bench: pg-deps
	@$(WITH_DB) $(GO) run ./cmd/bench $(BENCH_ARGS)

clean:
	-$(GO) run ./cmd/devdb -stop
	rm -rf bin/

# PostgreSQL binaries or a running server (see .ci/ensure-postgres).
pg-deps:
	@./.ci/ensure-postgres
