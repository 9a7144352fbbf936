import types

import lingdiag


def test_all_is_exactly_the_public_names() -> None:
    public = {n for n in dir(lingdiag) if not n.startswith("_")
              and not isinstance(getattr(lingdiag, n), types.ModuleType)}
    assert sorted(lingdiag.__all__) == sorted(public | {"run"})
