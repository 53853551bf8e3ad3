"""Where the real pi and oh-my-pi are installed, and how to run our drivers on them.

``.ci/run`` installs pi 0.73.1 (node) and oh-my-pi 18.2.3 with bun (npm) into ``.ci-node/pi`` and
``.ci-node/omp`` and exports ``CONTEXTREE_PI_DIR`` / ``CONTEXTREE_OMP_DIR``. Without them the
lookup tries ``.ci-node/...`` in the repository, then ``/tmp/pi`` and ``/tmp/omp``. The
variables are read here at import time: the suite's autouse fixture removes every
``CONTEXTREE_*`` variable while a test runs.

A missing install skips the differential tests with the reason; with
``CONTEXTREE_DIFFERENTIAL=required`` (set by ``.ci/run``) it fails them instead, unless
``PI_UNAVAILABLE`` / ``OMP_UNAVAILABLE`` says why the install was impossible (no network).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PI_VERSION = "0.73.1"
OMP_VERSION = "18.2.3"
REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PI_DRIVER = HERE / "pi_driver.mjs"
OMP_DRIVER = HERE / "omp_driver.ts"
DRIVER_TIMEOUT = 300

_ENV = dict(os.environ)  # as it was before the autouse fixture cleans CONTEXTREE_*
_REQUIRED = _ENV.get("CONTEXTREE_DIFFERENTIAL") == "required"

Json = dict[str, Any]


def _candidates(variable: str, name: str) -> list[Path]:
    given = _ENV.get(variable)
    if given:
        return [Path(given)]
    return [REPO / ".ci-node" / name, Path("/tmp") / name]


def _version(package_json: Path) -> str | None:
    try:
        return str(json.loads(package_json.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


@dataclass(frozen=True)
class Install:
    """One usable install: its directory and the command that runs a driver script on it."""

    name: str
    root: Path
    command: list[str]

    def run(self, jobs: list[Json], home: Path) -> list[Json]:
        """Run the driver once on ``jobs``; its results, one per job (errors raise)."""
        home.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": _ENV.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TMPDIR": str(home),
            "NO_COLOR": "1",
        }
        completed = subprocess.run(
            [*self.command, str(self.root)],
            input=json.dumps({"jobs": jobs}).encode(),
            capture_output=True,
            env=env,
            cwd=home,
            timeout=DRIVER_TIMEOUT,
            check=False,
        )
        if completed.returncode != 0:
            raise RuntimeError(
                f"{self.name} driver exited with {completed.returncode}:\n"
                f"{completed.stderr.decode(errors='replace')[-4000:]}"
            )
        results: list[Json] = json.loads(completed.stdout)["results"]
        for job, result in zip(jobs, results, strict=True):
            if "error" in result:
                raise RuntimeError(f"{self.name} failed on {job}:\n{result['error']}")
        return results


def find_pi() -> Install | str:
    """pi 0.73.1 and node, or why not."""
    node = shutil.which("node", path=_ENV.get("PATH"))
    if node is None:
        return "node is not on PATH"
    tried = []
    for root in _candidates("CONTEXTREE_PI_DIR", "pi"):
        package = root / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
        version = _version(package)
        if version == PI_VERSION:
            return Install("pi", root, [node, str(PI_DRIVER)])
        tried.append(f"{root} ({'version ' + version if version else 'not installed'})")
    return f"pi {PI_VERSION} not found in " + ", ".join(tried)


def find_omp() -> Install | str:
    """oh-my-pi 18.2.3 and its bun, or why not."""
    tried = []
    for root in _candidates("CONTEXTREE_OMP_DIR", "omp"):
        package = root / "node_modules" / "@oh-my-pi" / "pi-coding-agent" / "package.json"
        bun = root / "node_modules" / ".bin" / "bun"
        version = _version(package)
        if version == OMP_VERSION and bun.exists():
            return Install("oh-my-pi", root, [str(bun), str(OMP_DRIVER)])
        found = f"version {version}" if version else "not installed"
        tried.append(f"{root} ({found}{'' if bun.exists() else ', no bun'})")
    return f"oh-my-pi {OMP_VERSION} with bun not found in " + ", ".join(tried)


def require(found: Install | str, unavailable_variable: str) -> Install:
    """The install, or skip (fail in CI) with the reason."""
    if isinstance(found, Install):
        return found
    unavailable = _ENV.get(unavailable_variable, "")
    if unavailable:
        pytest.skip(f"differential tests skipped: {unavailable}")
    if _REQUIRED:
        pytest.fail(f"{found}; .ci/run installs it (or sets {unavailable_variable})")
    pytest.skip(f"{found} (install it as .ci/run does to run the differential tests)")
