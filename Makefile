# Shortcuts for the commands CONTRIBUTING.md describes; each runs in the project's .venv.
.PHONY: venv check test docs mutation coverage screenshots fuzz fuzz-atheris campaign

# The venv with the test and dev extras, at the versions of deploy/constraints.txt.
venv:
	python3 -m venv .venv
	.venv/bin/pip install -c deploy/constraints.txt -e '.[test,dev]'

# The quality gate, exactly what CI runs: ruff, ruff format --check, mypy, mkdocs build --strict.
check:
	bash .ci/check

# The README's test command, exactly as written (it installs '.[test]' and runs pytest).
test:
	bash -c "$$(bash .ci/readme-command test)"

# The site, served with live reload on http://127.0.0.1:8000.
docs:
	.venv/bin/mkdocs serve

# The engines' mutants against the fixed engine tests ([tool.mutmut] in pyproject.toml), then
# the mutants that survived or that no test reaches; docs/development.md says how to read them.
mutation:
	rm -rf mutants
	.venv/bin/mutmut run --max-children 2
	.venv/bin/mutmut results

# Line coverage of the unit tier alone, then of the unit, integration, cluster and docs tests (the
# service processes and commands the integration tests start included).
coverage:
	rm -f .coverage .coverage.*
	.venv/bin/coverage run -m pytest tests/unit
	.venv/bin/coverage combine -q && .venv/bin/coverage report --format=total
	.venv/bin/coverage run -m pytest tests/unit tests/integration tests/cluster tests/docs
	.venv/bin/coverage combine -q && .venv/bin/coverage report

# The docs' screenshots of the pages (docs/guides/img/: profile, event, list, search at 1280 and
# 390 pixels) from the real service in headless Chromium; 256 colours when pngquant is there.
screenshots:
	RATING_DOCS_SCREENSHOTS=1 .venv/bin/python -m pytest tests/integration/test_every_figure.py -k screenshots -q

# The fuzz tier (tests/fuzz/) longer than in the test command: FUZZ_EXAMPLES examples per test,
# new ones every run (the `fuzz` Hypothesis profile); the HTTP API's test needs a Redis (REDIS_URL).
FUZZ_EXAMPLES ?= 2000
fuzz:
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest tests/fuzz -q -p no:randomly

# Coverage-guided fuzzing of one reader (TARGET: trf, ids, lists, entries) for SECONDS, seeded
# with the samples; its corpus in .fuzz/TARGET, a finding written to .fuzz/crash-* (D84).
TARGET ?= trf
SECONDS ?= 600
fuzz-atheris:
	.venv/bin/pip install -q -c deploy/constraints.txt -e '.[fuzz]'
	mkdir -p .fuzz/$(TARGET)
	.venv/bin/python tests/fuzz/atheris_targets.py $(TARGET) -max_total_time=$(SECONDS) \
		-rss_limit_mb=2048 -artifact_prefix=.fuzz/ .fuzz/$(TARGET) tests/data docs/examples deploy/examples

# The fault campaign (docs/operations/faults.md): FAULTS faults in rounds on a private Redis and
# a local Redis Cluster, each round checked against the offline twin and the date-order fold.
FAULTS ?= 300
SEED ?= 1
campaign:
	.venv/bin/python -m tests.campaign --seed $(SEED) --faults $(FAULTS)
