import lingdiag


def test_all_is_exactly_the_public_names() -> None:
    public = {n for n in dir(lingdiag) if not n.startswith("_")} - {
        "config", "errors", "records", "run", "suite", "registry", "store", "models", "metrics", "parse",
        "prompts", "datasets", "suites", "report", "analysis", "cli"}
    assert sorted(lingdiag.__all__) == sorted(public | {"run"})
