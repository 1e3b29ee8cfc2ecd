"""ctest's entry to the package's tests: runs pytest with the arguments given, or, where the
interpreter has no pytest or pandas, exits 77 (ctest's SKIP_RETURN_CODE) naming what is missing
and the Debian package that has it, instead of failing as if a test had. KERNLAB_PYTHON names
another interpreter to run them with (the GPU machines' python3 with pandas is not /usr/bin's)."""
import importlib.util
import os
import sys

missing = [f"{module} (Debian: {package})"
           for module, package in (("pytest", "python3-pytest"), ("pandas", "python3-pandas"))
           if importlib.util.find_spec(module) is None]
other = os.environ.pop("KERNLAB_PYTHON", "")  # another interpreter to try, once
if missing and other and other != sys.executable:  # not realpath: a venv links its base
    os.execv(other, [other, *sys.argv])
if missing:
    print(f"skipped: {sys.executable} has no {', '.join(missing)}; scripts/setup.sh installs them")
    sys.exit(77)

import pytest  # noqa: E402

sys.exit(pytest.main(sys.argv[1:]))
