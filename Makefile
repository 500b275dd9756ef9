# The two commands of the README's quick start, and a few helpers.
#   make test   install ZooKeeper if missing, then every test (race detector on)
#   make bench  install ZooKeeper if missing, then the side-by-side benchmark

GO           ?= go
TEST_TIMEOUT ?= 14m
BENCH_FLAGS  ?=

.PHONY: test bench install-zookeeper ensemble-up ensemble-down ensemble-status lint

test: install-zookeeper
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

bench: install-zookeeper
	@mkdir -p docs/results
	$(GO) test -run '^$$' -bench 'BenchmarkReentry' -benchtime 200x ./reentrant/ | tee docs/results/reentry.txt
	$(GO) run ./cmd/zklocks bench $(BENCH_FLAGS)

install-zookeeper:
	@./scripts/install-zookeeper.sh

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
