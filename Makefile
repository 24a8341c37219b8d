# halocms: see README.md and docs/.
#
# Without DATABASE_URL, PostgreSQL is set up automatically: a local server
# that lets us in (127.0.0.1:5432 or /var/run/postgresql, no password), else
# a private cluster under .data/pg started with the machine's own PostgreSQL
# binaries (installed with apt-get when missing and running as root).
# See .ci/ensure-postgres and adapters/postgres/localcluster.go.
#
#   make run              build (front end included) and serve
#   make test             lint, then all tests against real PostgreSQL, then
#                         the web CMS's checks and browser tests (Chromium)
#   make lint             gofmt, go vet, staticcheck and the layout's rules (cmd/archcheck)
#   make fuzz             every Go fuzz target for FUZZTIME each (default 1m;
#                         make test runs each for 5s)
#   make bench            benchmarks (BENCH_ARGS=... passes flags)
#   make clean            stop the private cluster, remove bin/
#   make web              build the web CMS (adapters/web, npm ci from the lockfile)
#   make web-client       regenerate the CMS's API client from the OpenAPI document
#   make web-test         the CMS's browser tests against a fresh database
#   make screenshots      the same, refreshing docs/screenshots/
#
# Environment: DATABASE_URL (use this server, skip all set-up),
# CMS_DATA_DIR (default .data), CMS_FORCE_PRIVATE_PG=1 (ignore local servers),
# CMS_PG_BINDIR (where initdb/pg_ctl are).

GO         ?= go
NPM        ?= npm
BENCH_ARGS ?=
WEB        := adapters/web
CHROMIUM   ?= /usr/bin/chromium
E2E_DB     ?= halocms_e2e
E2E_PORT   ?= 18765
E2E_ARGS   ?=
E2E_SCREENSHOTS ?=
FUZZTIME   ?= 1m

# Prefix for recipe lines that need a database: exports DATABASE_URL from
# cmd/devdb (which starts the private cluster if needed) unless it is set.
WITH_DB = if [ -z "$${DATABASE_URL:-}" ]; then \
	  DATABASE_URL="$$($(GO) run ./cmd/devdb)" || exit 1; export DATABASE_URL; \
	  echo "DATABASE_URL=$$DATABASE_URL" >&2; \
	fi;

.PHONY: all build run test fuzz lint bench clean pg-deps web web-deps web-client web-check web-test screenshots chromium vips s3-testserver

all: build

# The front end is built first so that the binary embeds it.
build: web vips
	$(GO) build -o bin/cms ./cmd/cms

# The server finds or starts PostgreSQL itself when DATABASE_URL is unset.
run: vips pg-deps build
	./bin/cms serve

test: vips lint pg-deps web-check s3-testserver
	@$(WITH_DB) $(GO) test -count=1 -timeout 20m -p 2 -parallel 2 ./...
	@$(WITH_DB) GO=$(GO) ./.ci/fuzz 5s
	@$(MAKE) --no-print-directory web-test

# Go's native fuzzing: every FuzzX target for FUZZTIME each (a crasher
# lands in the package's testdata/fuzz/; commit it with the fix).
fuzz: vips pg-deps
	@$(WITH_DB) GO=$(GO) ./.ci/fuzz $(FUZZTIME)

# staticcheck is pinned as a tool in go.mod (go tool fetches it once).
lint: vips
	@out="$$(gofmt -l cmd domain commands projections readmodels adapters)"; \
	  if [ -n "$$out" ]; then echo "gofmt -w these files:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) run ./cmd/archcheck

bench: vips pg-deps web chromium
	@$(WITH_DB) $(GO) run ./cmd/bench $(BENCH_ARGS)

clean:
	-$(GO) run ./cmd/devdb -stop
	rm -rf bin/ $(WEB)/node_modules
	find $(WEB)/embedded -mindepth 1 ! -name README.md -delete

# --- The web CMS (adapters/web): Node and npm from the machine, packages
# from the committed lockfile. Built files (adapters/web/embedded) are never
# committed; a binary built without them serves a page saying how to build.

web-deps: $(WEB)/node_modules/.ci-stamp
$(WEB)/node_modules/.ci-stamp: $(WEB)/package-lock.json
	@command -v $(NPM) >/dev/null || { echo "npm is needed to build the web CMS (Node.js 20 or later)"; exit 1; }
	cd $(WEB) && $(NPM) ci --no-audit --no-fund
	@touch $@

web: web-deps
	cd $(WEB) && $(NPM) run build

# The API client is generated from the server's own OpenAPI document.
web-client: web-deps
	@mkdir -p .data
	$(GO) run ./cmd/cms openapi > .data/openapi.json
	cd $(WEB) && npx openapi-typescript ../../.data/openapi.json -o src/api/schema.d.ts

# The S3 server that the media storage tests run against (versitygw, built
# once into the user cache from adapters/mediastore/s3/testserver).
s3-testserver:
	$(GO) test -count=1 -run '^TestServerBuilds$$' ./adapters/mediastore/s3/s3test

# Fails when the committed client is stale, then type-checks the front end.
web-check: web-deps
	@mkdir -p .data
	@$(GO) run ./cmd/cms openapi > .data/openapi.json
	@cd $(WEB) && npx openapi-typescript ../../.data/openapi.json -o ../../.data/schema.d.ts >/dev/null
	@cmp -s .data/schema.d.ts $(WEB)/src/api/schema.d.ts || { \
	  echo "adapters/web/src/api/schema.d.ts is stale: the OpenAPI document changed; run make web-client"; exit 1; }
	cd $(WEB) && npx tsc -b

# Browser tests: a real `cms serve` (this build, front end embedded) on a
# fresh database, driven by Playwright in Debian's Chromium.
web-test: build chromium pg-deps
	@$(WITH_DB) E2E_DATABASE_URL="$$(DATABASE_URL=$$DATABASE_URL $(GO) run ./cmd/devdb -fresh $(E2E_DB))" && \
	  cd $(WEB) && CMS_BIN=../../bin/cms CHROMIUM=$(CHROMIUM) E2E_PORT=$(E2E_PORT) E2E_SCREENSHOTS=$(E2E_SCREENSHOTS) \
	  E2E_DATABASE_URL="$$E2E_DATABASE_URL" npx playwright test $(E2E_ARGS)

# The browser tests again, keeping their screenshots in docs/screenshots/
# (the README shows them); commit them when the screens changed.
screenshots:
	@$(MAKE) --no-print-directory web-test E2E_SCREENSHOTS=docs

# Debian's Chromium, installed when missing (as root, like PostgreSQL).
chromium:
	@test -x $(CHROMIUM) || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# libvips for the image transforms (adapters/imaging calls it through cgo,
# so every build of the module needs its headers): Debian's libvips-dev,
# installed when pkg-config cannot find it (as root, like Chromium).
vips:
	@{ command -v pkg-config >/dev/null && pkg-config --exists vips; } || { \
	  echo "installing Debian's libvips-dev for the image transforms"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config libvips-dev >/dev/null; }

# PostgreSQL binaries or a running server (see .ci/ensure-postgres).
pg-deps:
	@./.ci/ensure-postgres
