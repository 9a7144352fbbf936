import types

import pytest

import lingdiag.audit
import lingdiag.human


@pytest.mark.parametrize("package", [lingdiag.audit, lingdiag.human])
def test_all_is_exactly_the_public_names(package) -> None:
    public = {n for n in dir(package)
              if not n.startswith("_") and not isinstance(getattr(package, n), types.ModuleType)}
    assert sorted(package.__all__) == sorted(public)
