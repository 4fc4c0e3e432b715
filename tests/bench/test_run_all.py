"""`make bench` discovers every bench/*.py and reports the last JSON line of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.run_all import discover, last_json_line, run


def write(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(body)
    return path


def test_discovers_scripts_but_not_the_runner_or_private_modules(tmp_path: Path) -> None:
    for name in ["b_bench.py", "a_bench.py", "run_all.py", "__init__.py", "_helpers.py", "notes.md"]:
        write(tmp_path, name, "")
    assert [p.name for p in discover([], tmp_path)] == ["a_bench.py", "b_bench.py"]
    assert [p.name for p in discover(["b_bench"], tmp_path)] == ["b_bench.py"]
    with pytest.raises(SystemExit, match="no benchmark named nope"):
        discover(["nope"], tmp_path)


def test_the_real_benchmarks_are_found() -> None:
    assert all(p.suffix == ".py" and p.name != "run_all.py" for p in discover([]))


def test_last_json_line() -> None:
    assert last_json_line('progress\n{"rate": 3}\n\n') == {"rate": 3}
    assert last_json_line('{"rate": 3}\ndone\n') is None
    assert last_json_line("[1, 2]") is None
    assert last_json_line("") is None


def test_run_reports_result_or_failure(tmp_path: Path) -> None:
    good = write(
        tmp_path,
        "good.py",
        "import json, sys\nprint('warming up')\nprint(json.dumps({'quick': sys.argv[1:] == ['--quick']}))\n",
    )
    ok, line = run(good, quick=True, timeout=60)
    assert ok
    assert line["bench"] == "good"
    assert line["result"] == {"quick": True}
    json.dumps(line)

    silent = write(tmp_path, "silent.py", "print('no json')\n")
    ok, line = run(silent, quick=True, timeout=60)
    assert not ok
    assert line["error"] == "no JSON object on the last line"

    crash = write(tmp_path, "crash.py", "raise SystemExit(3)\n")
    ok, line = run(crash, quick=True, timeout=60)
    assert not ok
    assert line["error"] == "exit 3"
