# flurry's everyday commands; `make help` lists them. CI's entry point is .ci/run
# (`make test-full` runs it), which calls `make lint` and `make test-norace`, so
# each of those is written once.

GO ?= go
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# faults: the fault harness's seed and where its report goes.
SEED ?= 11
OUT ?= docs/
# sim: a short run of the simulation; the README's long one is
#   make sim SIM_NODES=10000 SIM_HOURS=2 SIM_SEEDS=20
SIM_NODES ?= 300
SIM_HOURS ?= 0.25
SIM_SEEDS ?= 3

.PHONY: help test test-full test-norace test-ts test-java java-jar lint depgraph bench faults model sim release image monitoring-docs monitoring-demo

help: ## list the targets
	@echo "make TARGET, with TARGET one of:"
	@awk 'BEGIN { FS = ":.*## " } /^[a-z-]+:.*## / { printf "  %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

test: ## the README's test command: the short set, every engine, skips counted by reason (go run ./verify/cmd/testall)
	$(GO) run ./verify/cmd/testall

test-full: ## what CI runs (.ci/run): services started, lint, the README's test command, go test -race -tags flurry_full ./..., the rest; needs root
	bash .ci/run

test-norace: ## the tests a -race build skips (allocation counts, TestPerSecondLimitFull), without -race
	scripts/norace-tests.sh

test-ts: ## the TypeScript client (clients/typescript): npm ci, build, its tests against flurry serve (Node.js 18+, npm, Go)
	cd clients/typescript && npm ci --no-audit --no-fund && npm test

test-java: ## the Java client (clients/java): javac, its tests against flurry serve (JDK 11+, Go); no Maven, no network
	clients/java/build.sh test

java-jar: ## the Java client's jar and sources jar in clients/java/target (JDK 11+)
	clients/java/build.sh jar

lint: ## go vet and staticcheck (pinned version) with flurry_full, and lean where the lean build differs; gofmt; the layers' import check
	$(GO) vet -tags flurry_full ./...
	lean=$$(scripts/lean-packages.sh); if [ -n "$$lean" ]; then echo "go vet (lean):" $$lean; $(GO) vet $$lean; fi
	scripts/staticcheck.sh
	$(GO) run ./verify/cmd/depgraph -q
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -w these:"; echo "$$unformatted"; exit 1; fi

depgraph: ## the packages drawn in layers, each with its imports, and the check that no import runs back up (ARCHITECTURE.md)
	$(GO) run ./verify/cmd/depgraph

bench: ## the bench module's suite once (bench/run.sh; COUNT=5, BENCH=pattern); compare.sh, latency.sh, contention.sh, targets.sh there too
	cd bench && ./run.sh
	@echo "more in bench/: compare.sh OLD NEW (two commits), latency.sh (tail latency), contention.sh (the contention variants), targets.sh (every published target beside its peer); see bench/README.md"

faults: ## the fault harness's full run, as root (verify/harness/setup.sh once first); SEED=11, OUT=docs/
	$(GO) run ./verify/harness/cmd/faultrun -seed $(SEED) -out $(OUT)

model: ## the SPIN models: the lease protocol, redisgen's plain path, the region guard (Debian's spin)
	$(GO) test -count=1 ./verify/model/

sim: ## a short run of the deterministic simulation (SIM_NODES, SIM_HOURS, SIM_SEEDS), journals copied and restored
	$(GO) run ./verify/sim/cmd/simrun -nodes $(SIM_NODES) -hours $(SIM_HOURS) -seeds $(SIM_SEEDS) -copies

release: ## release binaries, checksums and SBOMs into dist/ (scripts/release.sh; ARGS="--target linux/amd64")
	scripts/release.sh $(ARGS)

image: ## the container image for this machine into the local store, flurry:<version> (deploy/container/build.sh; ARGS="--version v0.4.0")
	deploy/container/build.sh $(ARGS)

monitoring-demo: ## three flurry servers and a Prometheus with the shipped rules, until Ctrl-C (DEMO_FAULT=1 breaks a Redis lease store)
	cd deploy && $(GO) run ./cmd/monitoring-demo

monitoring-docs: ## the alerts and dashboard on a live Prometheus, written into docs/operations.md (about 2 minutes)
	cd deploy && FLURRY_WRITE_DOCS=1 $(GO) test -count=1 -v -run TestMonitoringLive ./prometheus
