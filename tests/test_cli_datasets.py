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


def test_a_datasets_folder_that_does_not_exist_is_an_error_naming_the_setting(tmp_path):
    root = tmp_path / "ws"
    assert llmwiki("init", str(root)).returncode == 0
    listed = llmwiki("datasets", "-w", str(root))  # the control: the folder init made, empty, lists nothing and succeeds
    assert listed.returncode == 0, listed.stderr
    config = root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('folder = "datasets"', 'folder = "no-such-folder"'), encoding="utf-8")
    missing = llmwiki("datasets", "-w", str(root))
    assert missing.returncode == 1 and "no-such-folder: the datasets folder does not exist" in missing.stderr and "[datasets] folder" in missing.stderr
