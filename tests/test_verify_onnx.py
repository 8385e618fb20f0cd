"""llmwiki's own NLI model under ONNX Runtime (llmwiki/verify/onnx_nli.py): the same model as under torch, made
from the shipped weights once, remade when damaged, torch where no file can be made, and no torch import on the way."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llmwiki.errors import ConfigError, VerifierError

REPO = Path(__file__).resolve().parent.parent
PAIRS = [
    ("Alessandro Volta invented the electric battery in 1800. He was born in Como.", "Volta invented the battery."),
    ("Alessandro Volta invented the electric battery in 1800. He was born in Como.", "Volta was born in Paris."),
    ("Otters eat fish, crabs and frogs in rivers and along coasts.", "Otters eat fish."),
    ("Otters eat fish, crabs and frogs in rivers and along coasts.", "Otters never eat fish."),
    ("The Celsius scale sets water's freezing point at zero degrees.", "Water freezes at zero degrees Celsius."),
    ("The Celsius scale sets water's freezing point at zero degrees.", "Turtles have shells."),
]


@pytest.fixture(scope="module")
def onnx_verifier():
    from llmwiki.verify.nli import load_verifier

    verifier = load_verifier("llmwiki-nli", int8=True, runtime="onnx")
    assert type(verifier).__name__ == "OnnxNLIVerifier"
    return verifier


def test_onnx_scores_are_the_torch_models_within_int8_rounding(onnx_verifier):
    from llmwiki.verify.nli import load_verifier

    full = load_verifier("llmwiki-nli", int8=False, runtime="torch")  # the reference: the same weights in full precision under torch
    assert type(full).__name__ == "NLIVerifier"
    premises, hypotheses = zip(*PAIRS)
    onnx, reference = onnx_verifier.score(premises, hypotheses), full.score(premises, hypotheses)
    assert onnx.shape == (len(PAIRS), 3) and np.allclose(onnx.sum(axis=1), 1)
    assert (onnx.argmax(axis=1) == reference.argmax(axis=1)).all()  # the same verdict on every pair
    assert np.abs(onnx - reference).max() < 0.15  # int8 rounding, not another model (a mislabelled column would be off by ~0.9)
    assert onnx[0, 0] > 0.5 and onnx[1, 2] > 0.5 and onnx[3, 0] < 0.2  # entailed; a wrong place and a negation contradict


def test_onnx_inputs_are_the_transformers_tokenizers_truncating_the_premise_first(onnx_verifier):
    from transformers import AutoTokenizer

    from llmwiki.models import minilm_path

    reference = AutoTokenizer.from_pretrained(str(minilm_path()))
    long_premise = " ".join(["Volta studied the chemistry of gases and discovered methane."] * 60)  # far past 256 tokens
    pairs = [*PAIRS, (long_premise, "Volta discovered methane.")]
    ours = onnx_verifier.tokenizer.encode_batch(pairs)
    theirs = reference([p for p, _ in pairs], [h for _, h in pairs], truncation="longest_first", max_length=onnx_verifier.max_length)
    assert [encoding.ids for encoding in ours] == theirs["input_ids"]
    assert [encoding.type_ids for encoding in ours] == theirs["token_type_ids"]
    assert len(ours[-1].ids) == onnx_verifier.max_length == 256  # cut at the configured length, not the file's fixed 128
    hypothesis = reference("Volta discovered methane.", add_special_tokens=False)["input_ids"]
    assert ours[-1].ids[-len(hypothesis) - 1:-1] == hypothesis  # the sentence survives whole; the premise was cut


def test_batches_by_token_count_and_padding_leave_a_pairs_score_as_it_is_alone(onnx_verifier):
    from llmwiki.verify.onnx_nli import token_batches

    assert token_batches([10, 300, 50, 20, 60], 128, 32) == [[0, 3], [2, 4], [1]]  # sorted by length; 3 x 50 would pass 128, 2 x 60 does not
    assert token_batches([10] * 5, 512, 2) == [[0, 1], [2, 3], [4]]  # at most `most` pairs
    assert token_batches([], 512, 32) == []
    long_premise = " ".join(["Volta studied the chemistry of gases and discovered methane."] * 8)
    pairs = [(long_premise, "Volta discovered methane."), *PAIRS]
    together = onnx_verifier.score(*zip(*pairs))
    alone = np.concatenate([onnx_verifier.score([premise], [hypothesis]) for premise, hypothesis in pairs])
    assert (together.argmax(axis=1) == alone.argmax(axis=1)).all()
    assert np.abs(together - alone).max() < 0.1  # padding is masked out (int8 activations are scaled per batch: not bit for bit)


def test_a_pair_asked_twice_is_scored_once_and_rows_follow_the_input(onnx_verifier, monkeypatch):
    calls = []
    run = onnx_verifier.model.run
    monkeypatch.setattr(onnx_verifier, "model", type("Spy", (), {"run": lambda self, names, inputs: calls.append(len(inputs["input_ids"])) or run(names, inputs)})())
    premises, hypotheses = zip(*PAIRS[:2])
    once = onnx_verifier.score(premises, hypotheses)
    calls.clear()
    twice = onnx_verifier.score([*premises, *premises], [*hypotheses, *hypotheses])
    assert calls == [2] and np.allclose(twice[:2], once) and np.allclose(twice[2:], once)
    assert onnx_verifier.score([], []).shape == (0, 3)
    with pytest.raises(VerifierError, match="one premise per hypothesis"):
        onnx_verifier.score(["a premise"], [])


def test_a_damaged_onnx_file_is_made_again_and_an_unwritable_cache_falls_back_to_torch(onnx_verifier, tmp_path, monkeypatch, caplog):
    from llmwiki.verify import onnx_nli
    from llmwiki.verify.nli import load_verifier, shipped_weights

    digest = (shipped_weights() / "SHA256SUMS").read_text(encoding="utf-8").split()[0]
    made = onnx_nli.onnx_path(digest)
    assert made.is_file()  # the fixture's verifier made it in this session's cache folder
    monkeypatch.setenv("LLMWIKI_CACHE_DIR", str(tmp_path / "cache"))
    damaged = onnx_nli.onnx_path(digest)
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(made.read_bytes()[: made.stat().st_size // 2])  # a copy cut short by a full disk
    with caplog.at_level(logging.WARNING, logger="llmwiki"):
        verifier = load_verifier("llmwiki-nli", int8=True)
    assert type(verifier).__name__ == "OnnxNLIVerifier" and "cannot be read" in caplog.text
    assert "preparing the NLI model for ONNX Runtime, once per install" in caplog.text  # why the run waits, where the CLI shows it
    assert damaged.stat().st_size == made.stat().st_size  # made again, whole
    premises, hypotheses = zip(*PAIRS)
    assert np.allclose(verifier.score(premises, hypotheses), onnx_verifier.score(premises, hypotheses))

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("LLMWIKI_CACHE_DIR", str(blocked))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="llmwiki"):
        fallback = load_verifier("llmwiki-nli", int8=True)
    assert type(fallback).__name__ == "NLIVerifier" and fallback.int8  # torch int8, as before ONNX Runtime
    assert "runs under torch" in caplog.text and "LLMWIKI_CACHE_DIR" in caplog.text


def test_the_runtime_setting_chooses_and_a_bad_one_is_refused(onnx_verifier, monkeypatch, tmp_path):
    from llmwiki.config import load_config
    from llmwiki.verify import onnx_nli
    from llmwiki.verify.nli import load_verifier

    assert type(load_verifier("llmwiki-nli", int8=True, runtime="torch")).__name__ == "NLIVerifier"
    assert type(load_verifier("llmwiki-nli", int8=False, runtime="auto")).__name__ == "NLIVerifier"  # full precision: torch, as configured
    assert type(load_verifier("lexical-overlap", runtime="onnx")).__name__ == "OverlapVerifier"  # not an NLI model: the setting does not apply
    with pytest.raises(VerifierError, match="runtime = 'tensorflow'"):
        load_verifier("llmwiki-nli", int8=True, runtime="tensorflow")
    monkeypatch.setattr(onnx_nli, "available", lambda: False)  # an install without onnxruntime
    assert type(load_verifier("llmwiki-nli", int8=True, runtime="auto")).__name__ == "NLIVerifier"
    with pytest.raises(VerifierError, match="pip install onnxruntime"):
        load_verifier("llmwiki-nli", int8=True, runtime="onnx")
    config = tmp_path / "wiki_config.toml"
    config.write_text('[verification]\nruntime = "tensorflow"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="runtime"):
        load_config(config)


@pytest.mark.slow
def test_verifying_a_page_from_the_cli_imports_neither_torch_nor_transformers(onnx_verifier, workspace_cli):
    """What start-up costs: a `llmwiki verify PAGE` under ONNX Runtime never imports torch (seconds); under torch it does."""
    root, page = workspace_cli
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['llmwiki', 'verify', %r, '-w', %r, '--force', '--json']\n"
        "try:\n    runpy.run_module('llmwiki', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'transformers': 'transformers' in sys.modules}))\n"
    )
    results = {}
    config = root / "wiki_config.toml"
    written = config.read_text(encoding="utf-8")
    assert '\nruntime = "auto"' in written  # the setting as `llmwiki init` writes it
    for runtime in ("auto", "torch"):
        config.write_text(written.replace('\nruntime = "auto"', f'\nruntime = "{runtime}"', 1), encoding="utf-8")
        run = subprocess.run([sys.executable, "-c", "import json\n" + probe % (page, str(root))], capture_output=True, text=True, timeout=300)
        lines = run.stdout.strip().splitlines()
        assert json.loads(lines[0])["sentences"], run.stderr[-2000:]  # the page was verified
        results[runtime] = json.loads(lines[-1])
    assert results["auto"] == {"torch": False, "transformers": False}
    assert results["torch"] == {"torch": True, "transformers": True}  # control: the probe sees the import where it happens


@pytest.fixture
def workspace_cli(tmp_path):
    """A workspace of one source and one reworded page (its sentences go through the model), ingested."""
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    root = tmp_path / "ws"
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "volta.md").write_text(
        "# Alessandro Volta\n\nAlessandro Volta invented the electric battery in 1800. He was born in Como in 1745. "
        "He studied the chemistry of gases and discovered methane in 1776.\n", encoding="utf-8")
    workspace = Workspace.init(root, git=False)
    ingest_paths(workspace)
    page = root / "wiki" / "answers" / "volta-reworded.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Volta reworded\ntype: answer\nsources:\n- path: sources/volta.md\n---\n\n# Volta reworded\n\n"
                    "The electric battery was invented by Volta in 1800. Volta found methane while studying gases.\n", encoding="utf-8")
    ingest_paths(workspace, [page])
    return root, "wiki/answers/volta-reworded.md"
