# kquic: `make run` and `make test` are the two commands a new user runs.
GO          ?= go
export KQUIC_CACHE ?= $(CURDIR)/.cache
KQBENCH     := $(CURDIR)/bin/kqbench
comma       := ,
# Modules the guest loads for the test suite, and the features it must have
# (a guest test that would skip for lack of one of them fails instead).
GUEST_LOAD    ?= tls,sch_netem,veth,udp_tunnel,ip6_udp_tunnel,tcp_bbr,aesni_intel?,nfsv4?
GUEST_REQUIRE := tls,netem,veth,btf,bbr,root,module-loading,tools$(if $(KQUIC_MODULE),$(comma)quic)$(if $(KQUIC_PERF_TEST),$(comma)perftest)$(if $(KQUIC_HTTP3_TEST),$(comma)http3test)$(if $(KQUIC_IPERF),$(comma)iperf-quic)

.PHONY: all build deps-run deps-test run kernel module test test-host test-guest perf-compare rr-compare h2load-compare vet fmt clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -o bin/kqbench ./cmd/kqbench

# System packages, installed when missing (as root, with apt-get), else the
# exact command to run is printed. scripts/deps holds the one list.
deps-run:
	@scripts/deps run

deps-test:
	@scripts/deps test

# The main job with its embedded default: what this machine has, then a short
# matrix (the transports that run here, 1-64 KiB, MTU 1500/9000, GSO on/off).
run: deps-run build
	bin/kqbench doctor
	bin/kqbench matrix

# The Debian guest kernel, pinned, fetched once into $(KQUIC_CACHE).
kernel: deps-test build
	bin/kqbench kernel fetch

# KQUIC_MODULE may name the module by its source, src:DIR or src:DIR@REF
# (an lxin/quic checkout, a commit of it): it is built for the guest kernel
# first (kqbench module build, cached), and the tests get the file.
MODULE_ENV = $(if $(filter src:%,$(KQUIC_MODULE)),KQUIC_MODULE="$$($(KQBENCH) module path '$(KQUIC_MODULE)' 2>/dev/null)")
module: build kernel
ifneq ($(filter src:%,$(KQUIC_MODULE)),)
	$(KQBENCH) module path '$(KQUIC_MODULE)'
endif

# Host tests (with the race detector; they boot guests for the harness's own
# tests), then again inside the guest the tests of every package that can ask
# for a kernel feature (scripts/guest-packages: the pure ones are covered by
# the host pass, and a guest boot each would only repeat it).
test: test-host test-guest

# The packages that boot guests first (go test starts them in the order
# given, two at a time): started late, they ran alone at the end.
# Through scripts/testsummary as the guest passes: the last lines name
# every failed test, and the test a package was running when it timed out.
test-host: build kernel module
	CGO_ENABLED=0 $(GO) build -o bin/testsummary ./scripts/testsummary
	$(MODULE_ENV) KQVM_INIT_BINARY=$(KQBENCH) KQUIC_REQUIRE=vm,tools CGO_ENABLED=1 $(GO) test -json -race -count=1 -timeout 25m ./kmod/vm/ ./bench/vmpeer/ ./... | bin/testsummary

# The timeout covers the slowest package in a TCG guest, with room for a
# loaded machine (ktls took 14 minutes beside five other guests on 2 cores;
# its record sequence test moves 2^16 small records each way where it moved
# 1 GiB); kqbench vm gives each guest that long plus the boot.
#
# Both passes run with -json through scripts/testsummary, which prints what
# go test prints without -v and ends with the count of the tests that ran
# against the QUIC module (those testenv.Require found it for) and of any
# of them that skipped: with a module, the last line of make test counts
# both passes, and none may have skipped (a known module bug reproduced on a
# build known to have it, testenv.ModuleBug, is counted apart: an expected
# failure).
GUEST_SUMMARY := $(CURDIR)/bin/guest-tests.json
test-guest: build kernel module
	CGO_ENABLED=0 $(GO) build -o bin/testsummary ./scripts/testsummary
	rm -f $(GUEST_SUMMARY)
	$(MODULE_ENV) KQVM_INIT_BINARY=$(KQBENCH) KQUIC_REQUIRE=$(GUEST_REQUIRE) CGO_ENABLED=0 $(GO) test -json -count=1 -timeout 25m \
		-exec '$(KQBENCH) vm --load $(GUEST_LOAD) --' $$(scripts/guest-packages) | bin/testsummary -state $(GUEST_SUMMARY)
	# The pass above runs quicnet, its HTTP/3, the examples and the h3 mode
	# (every row) over kernel QUIC where the module is loaded, from the
	# default build that has both implementations. This one runs quicnet
	# and the examples again from the -tags kquic build, kernel QUIC alone
	# with no quic-go linked: with a module only (without one every test of
	# that build says SKIP, and make vet compiles it).
ifneq ($(KQUIC_MODULE),)
	$(MODULE_ENV) KQVM_INIT_BINARY=$(KQBENCH) KQUIC_REQUIRE=$(GUEST_REQUIRE) CGO_ENABLED=0 $(GO) test -json -tags kquic -count=1 -timeout 25m \
		-exec '$(KQBENCH) vm --load $(GUEST_LOAD) --' ./examples/... ./quicnet/ | bin/testsummary -state $(GUEST_SUMMARY) -require-module
else
	@echo "the -tags kquic pass (quicnet and the examples built with kernel QUIC alone) needs a module: make test KQUIC_MODULE=/path/quic.ko"
endif

# The module's C perf_test against kqbench perf, the four pairings
# interleaved (issue: Go at both ends as fast as the module's C tools), in the
# guest with parallel vCPUs. Needs a built quic.ko and perf_test.
PERF_SIZES ?= 1K,4K,64K
PERF_RUNS  ?= 6
PERF_FLAGS ?=
perf-compare: build
	@test -n "$(KQUIC_MODULE)" -a -n "$(PERF_TEST)" || { echo "usage: make perf-compare KQUIC_MODULE=/path/quic.ko PERF_TEST=/path/perf_test"; exit 2; }
	$(KQBENCH) vm --accel tcg-multi --load udp_tunnel,ip6_udp_tunnel,veth -- \
		$(KQBENCH) perf compare --c-perf-test $(PERF_TEST) --sizes $(PERF_SIZES) --runs $(PERF_RUNS) $(PERF_FLAGS)

# kqbench's rr mode over TCP against sockperf ping-pong and qperf tcp_lat on
# one veth pair, interleaved (issue #16: round trips within 5%). On this host,
# as root, where the kernel has veth: under TCG emulation the cross-CPU
# wakeups of the reference tools' processes dominate.
RR_ROUNDS ?= 8
RR_TIME   ?= 3s
RR_SIZE   ?= 64
# Every end on one CPU (all threads, all tools): on an idle multi-CPU VM the
# two-process tools wait for the other vCPU to wake on every message (about
# 65 us against 15 here), which Go's runtime avoids by spinning before it
# parks; on one CPU all three pay the same local wakeup. RR_CPU= (empty)
# lets them spread.
RR_CPU    ?= 1
rr-compare: deps-test
	$(GO) test -c -o bin/bench.test ./bench/mode/rr/
	KQBENCH_RR_ROUNDS=$(RR_ROUNDS) KQBENCH_RR_TIME=$(RR_TIME) KQBENCH_RR_SIZE=$(RR_SIZE) KQUIC_REQUIRE=veth,root,tools \
		$(if $(RR_CPU),taskset -c $(RR_CPU)) bin/bench.test -test.run '^$$' -test.bench RRAgainstSockperfQperf -test.benchtime 1x -test.v

# The h3 mode's h2-tls objects cell (the engine's, the ends pinned apart as
# --affinity auto does) against h2load (nghttp2-client) on the same server
# process and CPUs, the same connections, streams and object size,
# interleaved over a veth pair, as root (issue 24: within 10%). It logs
# every round and the medians.
H2LOAD_ROUNDS  ?= 5
H2LOAD_TIME    ?= 5s
H2LOAD_CONNS   ?= 4
H2LOAD_STREAMS ?= 10
h2load-compare: deps-test
	$(GO) test -c -o bin/h3.test ./bench/mode/h3/
	KQBENCH_H2LOAD_ROUNDS=$(H2LOAD_ROUNDS) KQBENCH_H2LOAD_TIME=$(H2LOAD_TIME) KQBENCH_H2LOAD_CONNS=$(H2LOAD_CONNS) \
		KQBENCH_H2LOAD_STREAMS=$(H2LOAD_STREAMS) KQUIC_REQUIRE=tools,veth,root \
		bin/h3.test -test.run '^$$' -test.bench H2TLSAgainstH2load -test.benchtime 1x -test.v

# kquic, handshake and ktls build everywhere (stubs returning ErrNotSupported
# off Linux; the Linux tools are tagged out): vet them as built for other
# platforms too, tests included. Results files read, render and compare on
# any system: bench/results, render, plot, report and kqbench's compare,
# report, plot and flame commands build for macOS and Windows. No tracked
# file may be a built binary.
PORTABLE := ./bench/results/ ./bench/render/ ./bench/matrix/ ./bench/plot/ ./bench/report/ ./cmd/kqbench/
vet:
	$(GO) vet ./...
	$(GO) vet -tags kquic ./quicnet/... ./examples/... ./bench/mode/h3/
	$(GO) vet -tags nokquic ./quicnet/... ./examples/... ./bench/mode/h3/
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=freebsd $(GO) vet ./...
	GOOS=darwin $(GO) build -o /dev/null $(PORTABLE)
	GOOS=windows $(GO) build -o /dev/null $(PORTABLE)
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt would change the files above"; exit 1; }
	@scripts/no-binaries

clean:
	rm -rf bin
