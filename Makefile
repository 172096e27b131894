# The README's two commands: `make demo` and `make test`. Each installs what is
# missing first (scripts/install-deps.sh), then builds and runs.
SWIFT ?= swift
RELEASE_BIN = .build/release

.PHONY: all deps deps-python deps-bench build test rgw-test tsan demo gallery bench bench-gallery bench-scale bench-details soak lint format \
	server docs clean bench-chart lint-commits lint-try hooks fuzz

all: build

deps:
	@scripts/install-deps.sh

deps-python:
	@scripts/install-deps.sh --python

# Every target must declare the package targets it imports (SwiftPM's explicit dependency import check).
IMPORT_CHECK = --explicit-target-dependency-import-check error

build: deps
	$(SWIFT) build $(IMPORT_CHECK)

# The garbage storms against the two servers, the browser suite (headless Chromium) and the RGW suite run on their
# own after the others: the storms, Chromium and Ceph's cluster take most of the two cores while they run, and
# timing-sensitive suites (shared downloads, request logs, cross-process watches) must not run beside them.
test: deps-python
	$(SWIFT) build --build-tests $(IMPORT_CHECK)
	SWIFT=$(SWIFT) scripts/run-tests.sh --skip 'RGWInteropTests|GalleryBrowserTests|GarbageRequestTests'
	SWIFT=$(SWIFT) scripts/run-tests.sh --filter GarbageRequestTests
	# The library's flows on a one-thread cooperative pool: nothing of the library may block it.
	LIBDISPATCH_COOPERATIVE_POOL_STRICT=1 SWIFT=$(SWIFT) scripts/run-tests.sh \
		--filter 'ReadmeQuickStartTests|ReadmeWritingTests|LibraryDeliveryTests|ImageRequestTests'
	SWIFT=$(SWIFT) scripts/run-tests.sh --filter GalleryBrowserTests
	SWIFT=$(SWIFT) scripts/run-tests.sh --filter RGWInteropTests

# Only the suite that runs the library against Ceph's RADOS Gateway (scripts/ceph-rgw.sh boots a throwaway
# cluster; skipped when Ceph cannot start, failed instead with CLOUDASSETS_REQUIRE_RGW=1).
rgw-test: deps-python
	$(SWIFT) build --build-tests $(IMPORT_CHECK)
	SWIFT=$(SWIFT) scripts/run-tests.sh --filter RGWInteropTests

# The library's tests under the thread sanitizer (its own build folder; the quick start, fetching, changes,
# requests, uploads, the store, the transfer engine). Reports fail the run. One test target at a time: all of them
# at once under the sanitizer's slowdown exceed their time limits on a two-core machine.
TSAN_SUITES = AssetStoreTests S3TransferTests CloudAssetsTests
tsan: deps-python
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	for suite in $(TSAN_SUITES); do \
		TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan \
			--filter "$$suite" --skip 'RGWInteropTests|MotoInteropTests' || exit 1; \
	done

# A debug build by default: from a fresh clone on two cores it is built in ~3 min where a release build takes ~7
# (whole-module optimisation of each module on one core), and the demo runs in ~20 s instead of ~5 s; it shares
# .build/debug with `make test`. DEMO_CONFIG=release for the optimised build (docs/testing.md has the figures).
DEMO_CONFIG ?= debug
demo: deps
	$(SWIFT) build -c $(DEMO_CONFIG) --product cloudassets
	.build/$(DEMO_CONFIG)/cloudassets demo

# The web gallery (`cloudassets serve`) of a library synced from the bundled fake server (seeded once, in
# .fake-s3-gallery; library in .gallery-library); prints the page's address. Extra flags: GALLERY_FLAGS=--pick.
gallery: deps
	$(SWIFT) build -c release --product cloudassets
	$(SWIFT) build -c release --product fake-s3
	BIN=$(RELEASE_BIN) scripts/gallery.sh $(GALLERY_FLAGS)

server: deps
	$(SWIFT) build -c release --product fake-s3
	$(RELEASE_BIN)/fake-s3 seed --root .fake-s3 --assets 200
	$(RELEASE_BIN)/fake-s3 serve --root .fake-s3 --port 9000 --access-key demo --secret-key demo-secret

deps-bench:
	@scripts/install-deps.sh --bench

bench: deps-bench
	$(SWIFT) build -c release
	$(RELEASE_BIN)/ca-bench

# The web gallery with 100,000 assets in headless Chromium: remote change → DOM latency (1 and 1,000 assets),
# the page's JS heap, scrolling (Tests/browser/bench_gallery.py drives the page).
bench-gallery: deps-python
	$(SWIFT) build -c release --product ca-bench
	CA_BENCH_ONLY=gallery $(RELEASE_BIN)/ca-bench

# The journal rows at a million objects (several minutes; `make bench` runs them at 200,000).
bench-scale: deps-bench
	$(SWIFT) build -c release
	CA_BENCH_ONLY=journal CA_BENCH_JOURNAL_OBJECTS=1000000 $(RELEASE_BIN)/ca-bench

# The change-details rows at a million assets alone (CA_BENCH_DETAILS_FETCH=1 adds the fetch of a million).
bench-details:
	$(SWIFT) build -c release --product ca-bench
	CA_BENCH_ONLY=scale $(RELEASE_BIN)/ca-bench

# docs/benchmarks.svg: each row's ratio against its reference, drawn from a saved `make bench` output
# (`make bench | tee FILE`, then BENCH_OUTPUT=FILE) or, by default, from the current table in docs/benchmarks.md.
BENCH_OUTPUT ?= docs/benchmarks.md
bench-chart:
	python3 scripts/bench-chart.py $(BENCH_OUTPUT) -o docs/benchmarks.svg

# Coverage-guided fuzzing of every parser (docs/fuzzing.md): libFuzzer + AddressSanitizer, FUZZ_SECONDS per target
# (default 180), FUZZ_JOBS at a time (default 2), FUZZ_TARGETS to choose; updates Fuzz/corpus, Fuzz/regressions and
# Fuzz/ledger.tsv. `make test` replays the committed inputs without a fuzzing engine.
fuzz: deps
	SWIFT=$(SWIFT) scripts/fuzz.sh

# The reliability suites in full: fault soak, crash suite (kill -9), hostile input. `make test` runs them short.
# The fault soak runs alone first: its resident-memory check means nothing while other suites share the process.
soak: deps-python
	$(SWIFT) build --build-tests
	CLOUDASSETS_SOAK=full $(SWIFT) test --skip-build --filter FaultSoakTests
	CLOUDASSETS_SOAK=full $(SWIFT) test --skip-build --filter ReliabilityTests --skip FaultSoakTests

# The DocC site of the CloudAssets product (articles, the tutorial, every public symbol) as static files in
# .build/docs; fails on any DocC warning or undocumented public symbol and prints the documentation coverage.
docs: deps
	SWIFT=$(SWIFT) scripts/docs.sh

lint: lint-commits lint-try
	$(SWIFT) format lint --strict --recursive Package.swift Sources TestServer Tests Benchmarks Fuzz

# Every `try?` in Sources gives the reason its failure may be dropped (`scripts/check-try.py --list` shows them).
lint-try:
	@python3 scripts/check-try.py

# Commit subjects of at most 72 characters, for every commit after the base the script names (older history is
# left as it is). `make hooks` also checks each new commit as it is written.
lint-commits:
	@python3 scripts/check-commit-subjects.py

# Installs a commit-msg hook that refuses a subject over 72 characters (the check `make lint` runs on history).
hooks:
	@hooks="$$(git rev-parse --git-path hooks)" && mkdir -p "$$hooks" && \
		printf '#!/bin/sh\nexec python3 "$$(git rev-parse --show-toplevel)/scripts/check-commit-subjects.py" --msg "$$1"\n' \
		> "$$hooks/commit-msg" && chmod +x "$$hooks/commit-msg" && echo "installed $$hooks/commit-msg"

format:
	$(SWIFT) format format --in-place --recursive Package.swift Sources TestServer Tests Benchmarks Fuzz

clean:
	rm -rf .build
