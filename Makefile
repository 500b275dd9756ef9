# The two commands of the README's quick start, and a few helpers.
#   make test   install ZooKeeper (the Curator and kazoo clients, the
#               rival servers: redis-server, etcd, postgres, Chromium,
#               ip and nft) if missing, then every test (race detector
#               on, the fault suite beside it: scripts/test.sh)
#   make bench  install ZooKeeper (and, where it can, the Curator and kazoo
#               clients) if missing, then the headline's benchmark:
#               sequential beside go-zookeeper's Lock, Curator and kazoo,
#               naive's herd, and many locks at once (1 and 16 lock
#               paths of 4 contenders) (into results/; BENCH_FLAGS=-full for the
#               whole grid; make bench-docs runs the whole grid into
#               docs/results)
#   make bench-rivals  ZooKeeper's lock beside etcd, Redis, Redlock and
#               PostgreSQL locks (into results/rivals-bench.md)
#   make docs-check  the docs' quotes, links and names against the source
#               (part of make test too; -update: see internal/docscheck)
#   make web-shots  the screenshots of zklocks web's scenes in docs/images,
#               taken by its browser test (headless chromium)

GO           ?= go
TEST_TIMEOUT ?= 14m
BENCH_FLAGS  ?=
RIVALS_FLAGS ?=

.PHONY: test bench bench-docs bench-rivals docs-check web-shots install-zookeeper install-peers install-rivals install-browser install-netns ensemble-up ensemble-down ensemble-status lint

# internal/faulttest runs without the race detector: it kills leaders and
# cuts clients off on purpose, and every reconnect with watches set can
# trip a data race inside go-zookeeper v1.0.4 itself (Conn.sendSetWatches
# reads lastZxid while recvLoop writes it; go-zookeeper/zk#35, still open),
# which would fail the run for a bug that is not ours. Every other package,
# including the variants' own fault tests, runs with -race.
RACE_PKGS = $(shell $(GO) list ./... | grep -v /internal/faulttest)

# The two suites run side by side (scripts/test.sh): the fault suite
# mostly waits out session timeouts on ensembles of its own.
test: install-zookeeper install-peers install-rivals install-browser install-netns
	@GO=$(GO) TEST_TIMEOUT=$(TEST_TIMEOUT) ./scripts/test.sh $(RACE_PKGS)

# make bench writes into RESULTS (git ignores results/, so a run leaves
# the checkout clean); make bench-docs refreshes the committed docs/results
# with the whole grid (zklocks bench -full: every variant at every N, the
# price and the hold cost), where make bench runs what the headline needs.
RESULTS      ?= results

# The peers' clients (Curator, kazoo) are installed if they can be; where
# they cannot, zklocks bench leaves their rows out and says why.
bench: install-zookeeper
	@./scripts/install-peers.sh || echo "make bench: going on without the peers that could not be installed"
	@mkdir -p $(RESULTS)
	$(GO) test -run '^$$' -bench 'BenchmarkReentry' -benchtime 200x ./reentrant/ | tee $(RESULTS)/reentry.txt
	$(GO) run ./cmd/zklocks bench -out $(RESULTS) $(BENCH_FLAGS)
	@echo "make bench: results in $(RESULTS)/ (README.md, bench.txt, the figures)"

bench-docs:
	$(MAKE) bench RESULTS=docs/results BENCH_FLAGS="-full $(BENCH_FLAGS)"

# The notes' comparison, run: zklocks' sequential lock on a ZooKeeper
# ensemble beside etcd, Redis, Redlock and PostgreSQL locks, each on
# servers of its own, in rounds they take in turns (about 3 minutes). A
# target of its own so that make bench stays a coffee break and the
# comparison can be run alone.
bench-rivals: install-zookeeper install-rivals
	@mkdir -p $(RESULTS)
	$(GO) run ./cmd/zklocks rivals -out $(RESULTS)/rivals-bench.md $(RIVALS_FLAGS)

# No ZooKeeper needed: it reads files only. To rewrite drifted quotes and
# line numbers from the source: go test ./internal/docscheck -update
docs-check:
	$(GO) test -count=1 ./internal/docscheck

install-zookeeper:
	@./scripts/install-zookeeper.sh

# Debian's chromium, for the browser test of zklocks web
# (cmd/zklocks/web_browser_test.go).
install-browser:
	@./scripts/install-browser.sh

# The browser test again, writing a PNG of each scene into docs/images.
web-shots: install-zookeeper install-browser
	ZKLOCKS_WEB_SHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestWebBrowser$$' ./cmd/zklocks

# The real Curator and kazoo clients of the interop tests (internal/interop).
install-peers:
	@./scripts/install-peers.sh

# ip and nft for the namespace fault tests (internal/netns); where they
# can not be installed those tests skip and say why.
install-netns:
	@./scripts/install-netns.sh

# The rival servers of the comparison (internal/rivals): redis-server,
# etcd and postgres, installed without starting their system services.
install-rivals:
	@./scripts/install-rivals.sh

# A local ensemble that outlives the command, for trying things by hand:
# make ensemble-up prints the export ZK_SERVERS=... line to use.
ensemble-up: install-zookeeper
	$(GO) run ./cmd/zklocks ensemble up -background

ensemble-down:
	$(GO) run ./cmd/zklocks ensemble down

ensemble-status:
	$(GO) run ./cmd/zklocks ensemble status

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l reports:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
