"""The researcher walk of docs/researchers.md, run command by command as written against a live server, each
command's output checked against the output the page shows (the files it uploads are docs/examples/)."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from annotate.models import Campaign, MetricScore
from tests.celery_helpers import worker_database_url
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

START, END = "<!-- researcher-walk -->", "<!-- /researcher-walk -->"
STEP = re.compile(r"\n?@@step (\d+)@@\n")


def walk_steps(readme: str) -> list[tuple[str, list[str]]]:
    """Each ``$`` command of the researcher walk with the output lines shown under it."""
    block = readme.split(START, 1)[1].split(END, 1)[0].strip().splitlines()
    assert block[0] == "```console" and block[-1] == "```", "the walk is one console block"
    steps: list[tuple[str, list[str]]] = []
    for line in block[1:-1]:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_walk_steps_split_commands_from_their_output():
    readme = f"x\n{START}\n```console\n$ echo a\na\n$ true\n$ printf 'b\\nc\\n'\nb\nc\n```\n{END}\n"
    assert walk_steps(readme) == [("echo a", ["a"]), ("true", []), ("printf 'b\\nc\\n'", ["b", "c"])]


def test_the_readme_researcher_commands_run_as_written(live_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    work = tmp_path / "root"
    work.mkdir()
    # The commands run from the repository root; files they write land in a scratch copy of it.
    for entry in REPO_ROOT.iterdir():
        if entry.name != ".git":
            (work / entry.name).symlink_to(entry)
    steps = walk_steps((REPO_ROOT / "docs" / "researchers.md").read_text(encoding="utf-8"))
    script = "\n".join(f"printf '\\n@@step {i}@@\\n'\n{command}" for i, (command, _) in enumerate(steps))
    env = {**os.environ, "API": f"{live_server.url}/api", "DATABASE_URL": worker_database_url()}
    run = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=420, check=False)
    outputs = dict.fromkeys(range(len(steps)), "")
    parts = STEP.split(run.stdout)
    for index, text in zip(parts[1::2], parts[2::2]):
        outputs[int(index)] = text
    differences = []
    for i, (command, shown) in enumerate(steps):
        got = [line.rstrip() for line in outputs[i].rstrip("\n").splitlines()] if outputs[i].strip() else []
        if got != shown:
            differences.append(f"docs/researchers.md command {i}: {command}\n  shown: {shown}\n  got:   {got}")
    assert not differences, "\n".join(differences) + f"\nstderr: {run.stderr[-2000:]}"
    assert run.returncode == 0, run.stderr[-2000:]
    # What the commands did, read from the database.
    assert set(Campaign.objects.get(slug="team-study").researchers.values_list("username", flat=True)) == {"ada"}
    assert MetricScore.objects.filter(summary__document__campaign__slug="ada-study", metric="my_metric").count() == 24
