from __future__ import annotations

import json

from conftest import REPO
from test_cli import llmwiki


def test_datasets_lists_filters_and_exports():
    listing = llmwiki("datasets", "-w", str(REPO / "workspace"))
    assert listing.returncode == 0 and "scientists" in listing.stdout and "milestones" in listing.stdout
    csv = llmwiki("datasets", "milestones", "--key", "Henri Becquerel", "--csv", "-w", str(REPO / "workspace"))
    assert csv.returncode == 0
    assert csv.stdout.splitlines()[0] == "category,key,metric,value,unit,dims,as_of,source"
    assert len(csv.stdout.splitlines()) == 3
    records = json.loads(llmwiki("datasets", "--dim", "event=Nobel Prize in Physics", "--json", "-w", str(REPO / "workspace")).stdout)
    assert [(record["key"], record["value"]) for record in records] == [("Henri Becquerel", 1903.0)]
    refused = llmwiki("datasets", "../../etc/passwd", "-w", str(REPO / "workspace"))
    assert refused.returncode == 1 and "not a dataset category name" in refused.stderr
