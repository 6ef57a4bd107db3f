# Thin front for CMake + Ninja. `make test` and `make demo` work on a fresh Debian 12
# machine: they install what is missing, build, then test or demo.
BUILD ?= build
JOBS  ?= $(shell nproc)
export JOBS
CMAKE_FLAGS ?=

# ccache keys on paths relative to the checkout, so a fresh clone elsewhere (CI) reuses
# what an earlier build compiled instead of starting cold.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all deps configure build test demo verify test-asan test-tsan bench bench-peers bench-stream bench-injection load fuzz clean

all: build

deps:
	@./scripts/install-deps

$(BUILD)/build.ninja:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREINS_WERROR=ON $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@$(BUILD)/reins demo examples

# The replica protocol, model-checked with SPIN (verify/replicas.pml, docs/deployment.md).
verify: deps
	@./scripts/verify

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DREINS_SANITIZE=ON -DREINS_WERROR=ON
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# The tests of code shared between threads under ThreadSanitizer (sessions on strands
# of their own, docs/architecture.md "Concurrency"); only what they need is built, `reins`
# for `reins serve --threads 4` (serve_threads_e2e_test reads its log for reports).
TSAN_TESTS := session_strands_test session_queue_test commit_queue_test telemetry_test serve_threads_e2e_test reins
test-tsan: deps
	@cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREINS_TSAN=ON -DREINS_WERROR=ON
	@cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS)
	@export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1; \
	  build-tsan/tests/core/session_strands_test && build-tsan/tests/core/session_queue_test && \
	  build-tsan/tests/core/commit_queue_test && build-tsan/tests/telemetry/telemetry_test --gtest_filter='TurnTelemetryThreads.*' && \
	  build-tsan/tests/server/serve_threads_e2e_test

# The Release build of every bench target is profile-guided (scripts/release-build: an
# instrumented build trained on the demo and a tool-calling load of its own,
# scripts/pgo-train, then the optimised one); REINS_PGO=off builds it without a profile.
bench: deps
	@./scripts/release-build reins_bench reins_mcp_bench
	@build-release/bench/reins_bench --benchmark_min_time=1
	@build-release/bench/reins_mcp_bench --benchmark_min_time=1

# The peer job side by side: reins embedded and served, and a bare Node loop, against
# the same mock in one run (bench/peer_job/README.md). Without node, reins only.
bench-peers: deps
	@./scripts/release-build reins_peer_job
	@if command -v node >/dev/null; then build-release/bench/reins_peer_job --table; \
	 else echo "node not found: reins only (apt-get install nodejs for the bare Node loop)"; \
	      build-release/bench/reins_peer_job --table --node none; fi

# The prompt-injection benchmark in AgentDojo's shape: 220 attacked cases over four suites,
# the naive loop beside reins without and with untrusted_data (docs/security.md).
bench-injection: build
	@$(BUILD)/reins injection-bench bench/injection --gate

# The bounded load test of reins serve (loopback, mock upstream with a 200 ms model delay).
load: deps
	@./scripts/release-build reins_load reins
	@build-release/bench/reins_load 1000 10000

# Governed streaming: the latency reins adds to each streamed sentence (a mock model
# writing a token every 30 ms): 1 stream, then 1,000 starting within one token's time,
# then 1,000 under way at once in a steady state (arrivals spread over 9 s, replies of
# 30 sentences) on two threads.
bench-stream: deps
	@./scripts/release-build reins_stream_bench reins
	@build-release/bench/reins_stream_bench 1 1000
	@build-release/bench/reins_stream_bench --threads 2 --sentences 30 --spread-ms 9000 1000

# Every fuzz target under libFuzzer (clang, ASan, UBSan) for FUZZ_SECONDS each; a table
# of executions per second, corpus size and edge coverage (docs/security.md).
FUZZ_SECONDS ?= 60
fuzz:
	@./scripts/install-deps --fuzz
	@CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREINS_FUZZ=ON -DREINS_TESTS=OFF
	@cmake --build build-fuzz -j $(JOBS) --target reins_fuzzers
	@./scripts/run-fuzzers build-fuzz $(FUZZ_SECONDS)

clean:
	@rm -rf $(BUILD) build-asan build-release build-fuzz
