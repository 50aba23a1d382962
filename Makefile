# Bulwark's two commands:
#   make run    install what is missing, build, migrate, serve http://127.0.0.1:3000
#   make test   every test: unit, integration (SQLite; PostgreSQL when
#               BULWARK_TEST_POSTGRES_URL is set), lint, and the browser tests
#
# The build is cargo-leptos's recipe done by hand (`make site`), so a fresh machine does not
# need its 50-minute install; Cargo.toml keeps [workspace.metadata.leptos] for `cargo leptos
# watch`. LEPTOS_OUTPUT_NAME stays unset at compile time: the hydration script then asks for
# pkg/bulwark_bg.wasm, which is the name wasm-bindgen writes.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export CARGO_TARGET_DIR ?= $(HOME)/.cache/bulwark/target
export PATH := $(HOME)/.cargo/bin:$(PATH)
unexport LEPTOS_OUTPUT_NAME

PROFILE ?= debug
ifeq ($(PROFILE),release)
  WASM_PROFILE_FLAG := --profile wasm-release
  WASM_DIR := wasm-release
  BIN_PROFILE_FLAG := --profile server-release
  BIN_DIR := server-release
else
  WASM_PROFILE_FLAG :=
  WASM_DIR := debug
  BIN_PROFILE_FLAG :=
  BIN_DIR := debug
endif

# A debug and a release site apart, so switching profiles does not re-embed each time.
SITE := $(CARGO_TARGET_DIR)/$(if $(filter release,$(PROFILE)),site-release,site)
BIN := $(CARGO_TARGET_DIR)/$(BIN_DIR)/bulwark
WASM := $(CARGO_TARGET_DIR)/wasm32-unknown-unknown/$(WASM_DIR)/frontend.wasm
WASM_BINDGEN_VERSION := $(shell sed -n '/^name = "wasm-bindgen"$$/{n;s/^version = "\(.*\)"/\1/p;}' Cargo.lock)
# The splitter reads the sections wasm_split_helpers (a Leptos dependency) writes; its minor
# version must follow that crate's.
WASM_SPLIT_VERSION := 0.2.4
# Crates shared by the server and the test binaries: test only these, never `--workspace`,
# which would build `app` with its `ssr` and `hydrate` features together.
HOST_PACKAGES := -p app -p server -p migration

.PHONY: help
help:
	@echo "make run    build and serve Bulwark on http://127.0.0.1:3000 (installs what is missing)"
	@echo "make test   run every test, lints and the browser tests"
	@echo "make site   build the browser bundle into $(SITE)"
	@echo "make build  build the server binary, the site inside it"
	@echo "make dist   the release binary in dist/, with its sizes; make install PREFIX=/usr/local"
	@echo "make docs   write the command-line reference again (docs/reference/cli.md)"

# ---------------------------------------------------------------------------------------------
# Tools. Each step checks first, so a second run costs nothing.

# Installs Debian packages (through sudo unless root).
APT_INSTALL = if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq

.PHONY: tools tools-test
tools:
	@command -v cargo >/dev/null || { echo "error: cargo is missing: install Rust with rustup"; exit 1; }
	@command -v npm >/dev/null || { echo "error: npm is missing: install Node.js (apt-get install nodejs npm)"; exit 1; }
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@if [ "$$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $(WASM_BINDGEN_VERSION)" ]; then \
	  echo "installing wasm-bindgen-cli $(WASM_BINDGEN_VERSION) to match Cargo.lock (about 15 minutes, once)"; \
	  cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --force; \
	fi
	@[ frontend/node_modules/.package-lock.json -nt frontend/package-lock.json ] || npm ci --prefix frontend --no-audit --no-fund
	@if ! cargo install --list | grep -qx "wasm_split_cli_support v$(WASM_SPLIT_VERSION):"; then \
	  echo "installing wasm-split-cli $(WASM_SPLIT_VERSION) to match Cargo.lock (a few minutes, once)"; \
	  cargo install wasm_split_cli_support --version $(WASM_SPLIT_VERSION) --features build-binary --locked --force; \
	fi
	@if [ "$(PROFILE)" = release ] && ! command -v wasm-opt >/dev/null; then \
	  npm install --global --no-audit --no-fund binaryen; fi

tools-test: tools
	@command -v chromium >/dev/null || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  $(APT_INSTALL) chromium; }
	@[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || { \
	  echo "installing Debian's faketime (the cluster test runs nodes with skewed clocks)"; \
	  $(APT_INSTALL) faketime; }
	@[ -x /usr/sbin/pgbouncer ] || { \
	  echo "installing Debian's pgbouncer (a test runs instances behind it in transaction mode)"; \
	  $(APT_INSTALL) pgbouncer; }
	@[ end2end/node_modules/.package-lock.json -nt end2end/package-lock.json ] || \
	  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix end2end --no-audit --no-fund

# ---------------------------------------------------------------------------------------------
# Build

.PHONY: site build
# Each page is a wasm chunk of its own (app/src/pages/routes.rs): the linker keeps its
# relocations (--emit-relocs, set in .cargo/config.toml) so wasm-split-cli can cut the module
# at the `#[lazy_route]` points; wasm-bindgen then binds the main part, keeping the exports the
# chunks import.
site: tools
	cargo build -p frontend --lib --target wasm32-unknown-unknown $(WASM_PROFILE_FLAG)
	@rm -rf $(SITE)/pkg && mkdir -p $(SITE)/pkg $(SITE)/vendor
	wasm-split-cli --target web --out-name bulwark $(WASM) $(SITE)/pkg
	wasm-bindgen --target web --no-typescript --keep-lld-exports --no-demangle \
	  --out-dir $(SITE)/pkg --out-name bulwark $(SITE)/pkg/bulwark.wasm
	@rm $(SITE)/pkg/bulwark.wasm
	@if [ "$(PROFILE)" = release ]; then for wasm in $(SITE)/pkg/*.wasm; do \
	  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int -o $$wasm $$wasm; done; fi
	@cp style/main.css $(SITE)/pkg/bulwark.css
	@cp -R frontend/public/. $(SITE)/
	@frontend/node_modules/.bin/esbuild frontend/echarts.mjs --bundle --minify --format=iife \
	  --legal-comments=eof --target=es2020 --log-level=warning --outfile=$(SITE)/vendor/echarts.min.js
	@echo "site built in $(SITE)"

# The binary with the site inside it (server/build.rs), so it serves from any directory.
build: site
	BULWARK_EMBED_SITE=$(SITE) cargo build -p server --bin bulwark --features embed-site $(BIN_PROFILE_FLAG)

# ---------------------------------------------------------------------------------------------
# Release: one self-contained binary in dist/, its assets within budget.

DIST ?= dist
PREFIX ?= /usr/local
# The wasm a first visit to any page downloads before the page responds (Brotli, in bytes): the
# main module, its glue, the split loader and the page's group of chunks, as `bulwark assets`
# prints them. The aim is 400 KB.
WASM_BUDGET ?= 600000

.PHONY: dist install
dist:
	@$(MAKE) --no-print-directory PROFILE=release build
	@mkdir -p $(DIST)
	@cp $(CARGO_TARGET_DIR)/server-release/bulwark $(DIST)/bulwark
	@$(DIST)/bulwark --version
	@$(DIST)/bulwark assets
	@echo "binary: $$(du -h $(DIST)/bulwark | cut -f1) ($$(stat -c %s $(DIST)/bulwark) bytes) in $(DIST)/bulwark"
	@$(DIST)/bulwark assets --tsv | awk -F'\t' -v budget=$(WASM_BUDGET) ' \
	  $$1 == "pkg/bulwark_bg.wasm" { main = $$3 } \
	  $$1 ~ /^first-load:/ { group = substr($$1, 12); pages++; \
	    if ($$3 > budget) over = over sprintf(" %s (%d)", group, $$3); \
	    if ($$3 > largest) { largest = $$3; biggest = group } } \
	  END { if (!main || !pages) { print "error: no wasm in the binary"; exit 1 } \
	    if (over != "") { printf "error: first loads over the wasm budget of %d bytes compressed:%s\n", budget, over; exit 1 } \
	    printf "wasm budget: every page within %d bytes compressed (largest %s, %d; main module %d)\n", \
	      budget, biggest, largest, main }'

# Cold-cache page loads of the release binary, on localhost and on Chrome's "Fast 4G" profile
# (end2end/load/): numbers for docs/PERFORMANCE.md, never pass/fail.
LOAD_ENV = BULWARK_BIN=$(abspath $(DIST)/bulwark) BULWARK_E2E_PORT=3150 BULWARK_E2E_SMTP_PORT=3175
.PHONY: bench-load
bench-load: tools-test
	@[ -x $(DIST)/bulwark ] || $(MAKE) --no-print-directory dist
	cd end2end && $(LOAD_ENV) npm exec -- playwright test -c load.config.ts

# The same behind Caddy over TLS and HTTP/2 (end2end/load/Caddyfile), as in production.
.PHONY: bench-load-h2
bench-load-h2: tools-test
	@command -v caddy >/dev/null || { \
	  echo "installing Debian's caddy for the HTTP/2 benchmark"; \
	  $(APT_INSTALL) caddy; }
	@[ -x $(DIST)/bulwark ] || $(MAKE) --no-print-directory dist
	cd end2end && $(LOAD_ENV) BULWARK_LOAD_TLS_PORT=3443 BULWARK_LOAD_CADDY_DATA=$$(mktemp -d) \
	  npm exec -- playwright test -c load.config.ts

install:
	@[ -x $(DIST)/bulwark ] || { echo "error: run \`make dist\` first"; exit 1; }
	install -D -m 0755 $(DIST)/bulwark $(DESTDIR)$(PREFIX)/bin/bulwark
	@echo "installed $(DESTDIR)$(PREFIX)/bin/bulwark; docs/deploy/ has a systemd unit and proxy examples"

# ---------------------------------------------------------------------------------------------
# Run

.PHONY: run
run: site build
	@$(BIN) migrate
	@$(BIN) jobs seed-demo
	@$(BIN) traffic generate --days 14 --per-day 400 --if-empty
	@echo
	@echo "  Bulwark: http://127.0.0.1:3000 — sign in as 'admin'."
	@echo "  On the very first start the password is printed below, once (or set"
	@echo "  BULWARK_ADMIN_PASSWORD before it). Start over with: rm -rf data && make run"
	@echo
	exec $(BIN) serve

# ---------------------------------------------------------------------------------------------
# Test

.PHONY: test test-rust test-e2e lint fmt
test: tools-test lint test-rust test-e2e
	@echo "make test: all suites passed"

lint: tools
	cargo fmt --all -- --check
	cargo clippy $(HOST_PACKAGES) --all-targets -- -D warnings
	cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings

test-rust:
	@if [ -z "$${BULWARK_TEST_POSTGRES_URL:-}" ]; then \
	  echo "note: BULWARK_TEST_POSTGRES_URL is not set: PostgreSQL tests are skipped (.ci/run sets it)"; fi
	cargo test $(HOST_PACKAGES)

test-e2e: tools-test build
	BULWARK_BIN=$(BIN) npm --prefix end2end test

fmt:
	cargo fmt --all

# Each crate in vendor/ is its crates.io release with vendor/NAME.patch applied (and a LICENSE
# the package lacked): this checks that, from a fresh download of the version its Cargo.toml
# names (vendor/README.md).
.PHONY: vendor-check
vendor-check:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for patch in vendor/*.patch; do \
	  name=$$(basename "$$patch" .patch); \
	  version=$$(sed -n 's/^version = "\(.*\)"/\1/p' "vendor/$$name/Cargo.toml" | head -n 1); \
	  curl -sSfL "https://static.crates.io/crates/$$name/$$name-$$version.crate" | tar xz -C "$$tmp"; \
	  patch -s -d "$$tmp/$$name-$$version" -p1 < "$$patch"; \
	  diff -r -x LICENSE "$$tmp/$$name-$$version" "vendor/$$name"; \
	  echo "vendor/$$name is $$name $$version with $$patch"; \
	done

# The command-line reference (docs/reference/cli.md) written again from the binary's help;
# server/tests/api/docs.rs fails while it differs.
.PHONY: docs
docs:
	BULWARK_WRITE_DOCS=1 cargo test -p server --test api docs::the_cli_reference_is_current

# The tests whose figures depend on the date and on the traffic flush, with the wall clock
# moved to AT (UTC, today): `make test-clock AT=23:59:30` crosses midnight in the first
# minute, AT=00:04:50 a scheduled flush (docs/ARCHITECTURE.md, "Time in tests"). libfaketime
# moves the tests, the server and the commands, not the browser (end2end/playwright.config.ts
# says why); PostgreSQL keeps its own clock, so the API tests run on SQLite only.
AT ?= 23:59:30
LIBFAKETIME := /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
MOVED_CLOCK = offset=$$(( $$(date -u -d "today $(AT)" +%s) - $$(date -u +%s) )); \
  export LD_PRELOAD=$(LIBFAKETIME) FAKETIME="$$(printf '%+d' $$offset)" FAKETIME_DONT_FAKE_MONOTONIC=1
.PHONY: test-clock
# The API tests build `bulwark` without the site, so the binary is built again after them.
test-clock: tools-test
	cargo test -p server --test api --no-run
	@$(MOVED_CLOCK); env -u BULWARK_TEST_POSTGRES_URL cargo test -p server --test api traffic
	@$(MAKE) --no-print-directory build
	@$(MOVED_CLOCK); BULWARK_BIN=$(BIN) npm --prefix end2end test -- dashboard traffic

# The screenshots of the Overview in the README and the book (desktop and phone), from a fresh server with the
# demo jobs, into docs/screenshots/. Takes about two minutes.
.PHONY: screenshots
screenshots: tools-test build
	@fc-list :lang=zh | grep -q . || { \
	  echo "installing Debian's fonts-noto-cjk (the Chinese screenshot needs a CJK font)"; \
	  $(APT_INSTALL) fonts-noto-cjk; }
	cd end2end && BULWARK_BIN=$(BIN) npm exec -- playwright test -c screenshots.config.ts

# ---------------------------------------------------------------------------------------------
# Benchmarks: numbers to read, never pass/fail.

.PHONY: bench-traffic bench-cluster bench-engine bench-soak bench-logs bench-shapes
# Engine throughput and lateness on fresh databases (PostgreSQL too when
# BULWARK_TEST_POSTGRES_URL is set); add ARGS=--json for one JSON object.
bench-engine:
	cargo build -p server --bin bulwark --profile server-release
	$(CARGO_TARGET_DIR)/server-release/bulwark bench engine $(ARGS)

# The shapes installations have: 10,000 ticks at one instant, 100,000 idle jobs, one-second
# work spread over one or three instances by labels (PostgreSQL too when
# BULWARK_TEST_POSTGRES_URL is set); ARGS=--json for one JSON object.
bench-shapes:
	cargo build -p server --bin bulwark --profile server-release
	$(CARGO_TARGET_DIR)/server-release/bulwark bench shapes $(ARGS)

# An ordinary busy day: one node under a mixed load for MINUTES (30 by default), counting
# interrupted attempts, repeated side effects, memory and tick lateness; ARGS=--json, or e.g.
# ARGS="--nodes 3" (PostgreSQL).
MINUTES ?= 30
bench-soak:
	cargo build -p server --bin bulwark --profile server-release
	$(CARGO_TARGET_DIR)/server-release/bulwark bench soak --minutes $(MINUTES) $(ARGS)

# Run logs: storing a 15 MB log, its first screen, a search over 1,000 runs, memory while a job
# prints 1 GB (PostgreSQL too when BULWARK_TEST_POSTGRES_URL is set); ARGS=--json.
bench-logs:
	cargo build -p server --bin bulwark --profile server-release
	$(CARGO_TARGET_DIR)/server-release/bulwark bench logs $(ARGS)

# The multi-instance proof at full size: 3 nodes, 200 jobs every second, 60 s, one SIGKILL.
bench-cluster:
	cargo build -p server --bin bulwark --profile server-release
	BULWARK_BIN=$(CARGO_TARGET_DIR)/server-release/bulwark BULWARK_CLUSTER_JOBS=200 BULWARK_CLUSTER_SECONDS=60 \
	  cargo test -p server --test api cluster:: -- --include-ignored --nocapture --test-threads 1

bench-traffic:
	$(MAKE) site build PROFILE=release
	BIN=$(CARGO_TARGET_DIR)/server-release/bulwark SITE=$(SITE) bash server/bench/traffic.sh

# ---------------------------------------------------------------------------------------------
# Data. The bot patterns come from the npm package `isbot` (docs/BOTS.md, "Keeping the data
# current"); ISBOT picks the release.

.PHONY: bot-data bench-bots
ISBOT ?= 5.2.3
bot-data:
	rm -rf $(CURDIR)/target/isbot && mkdir -p $(CURDIR)/target/isbot
	cd $(CURDIR)/target/isbot && npm pack --silent isbot@$(ISBOT) && tar xzf isbot-$(ISBOT).tgz
	node -e 'process.stdout.write(JSON.stringify(require("$(CURDIR)/target/isbot/package/index.js").list, null, 1) + "\n")' \
	  > server/data/bots/isbot-patterns.json
	cp $(CURDIR)/target/isbot/package/LICENSE server/data/bots/LICENSE-isbot
	@echo "isbot $(ISBOT): record the version in server/data/bots/README.md, then: cargo test -p server traffic::bots"

# Countries of addresses (docs/guide/traffic.md): the npm package
# @ip-location-db/geo-whois-asn-country-mmdb (CC0; its data CC BY 4.0 by the NRO).
.PHONY: geo-data
GEO ?= 2.3.2026061719
geo-data:
	rm -rf $(CURDIR)/target/geo && mkdir -p $(CURDIR)/target/geo
	cd $(CURDIR)/target/geo && npm pack --silent @ip-location-db/geo-whois-asn-country-mmdb@$(GEO) \
	  && tar xzf ip-location-db-geo-whois-asn-country-mmdb-$(GEO).tgz
	cp $(CURDIR)/target/geo/package/geo-whois-asn-country.mmdb $(CURDIR)/target/geo/package/NRO_LICENSE server/data/geo/
	@echo "country data $(GEO): record the version in server/data/geo/README.md, then: cargo test -p server traffic::geo"

# People's User-Agents by device type (docs/BOTS.md): Matomo's fixtures from the PyPI package
# device_detector, the npm package user-agents and the PyPI package fake-useragent.
.PHONY: people-data
DEVICE_DETECTOR ?= 6.5.1
USER_AGENTS ?= 2.1.198
FAKE_USERAGENT ?= 2.2.0
people-data:
	rm -rf $(CURDIR)/target/people && mkdir -p $(CURDIR)/target/people/fake
	cd $(CURDIR)/target/people && pip download --quiet --no-deps --no-binary :all: device_detector==$(DEVICE_DETECTOR) \
	  && tar xzf device_detector-$(DEVICE_DETECTOR).tar.gz
	cd $(CURDIR)/target/people && npm pack --silent user-agents@$(USER_AGENTS) && tar xzf user-agents-$(USER_AGENTS).tgz
	cd $(CURDIR)/target/people && pip download --quiet --no-deps fake-useragent==$(FAKE_USERAGENT) \
	  && cd fake && unzip -q ../fake_useragent-$(FAKE_USERAGENT)-py3-none-any.whl
	python3 server/data/bots/build_people_set.py \
	  $(CURDIR)/target/people/device_detector-$(DEVICE_DETECTOR)/device_detector/tests/fixtures/upstream \
	  $(CURDIR)/target/people/package/dist/user-agents.json \
	  $(CURDIR)/target/people/fake/fake_useragent/data/browsers.jsonl server/tests/data
	@echo "people sets rebuilt: record the versions in server/data/bots/README.md, then: cargo test -p server traffic::bots"

# Browsers and operating systems: the uap-core regexes (npm package `uap-core`), as JSON.
.PHONY: uap-data
UAP ?= 0.18.0
uap-data:
	rm -rf $(CURDIR)/target/uap && mkdir -p $(CURDIR)/target/uap
	cd $(CURDIR)/target/uap && npm pack --silent uap-core@$(UAP) && tar xzf uap-core-$(UAP).tgz \
	  && npm install --silent --no-save js-yaml@4
	cd $(CURDIR)/target/uap && node -e 'const y=require("js-yaml"),f=require("fs"); \
	  f.writeFileSync("$(CURDIR)/server/data/uap/regexes.json", JSON.stringify(y.load(f.readFileSync("package/regexes.yaml","utf8"))))'
	cp $(CURDIR)/target/uap/package/LICENSE server/data/uap/LICENSE
	@echo "uap-core $(UAP): record the version in server/data/uap/README.md, then: cargo test -p server traffic::clients"

# Recall, people flagged, sources named right, and User-Agents classified per second.
bench-bots:
	cargo build -p server --bin bulwark --profile server-release
	$(CARGO_TARGET_DIR)/server-release/bulwark bench bots $(ARGS)
