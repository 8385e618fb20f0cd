"""Real documents: extraction, sentence boundaries, the wiki and answers, on ../shared/data/realdocs.

    python bench/realdocs.py [--data ../shared/data/realdocs] [--workspace DIR] [--rebuild]
                             [--only extract,sentences,build,wiki,context,qa,written,other] [--extra DIR ...]
                             [--other DIR]

One run prints, each beside its reference in the same run:

- **extract**: every extractor candidate side by side on the corpora's files (HTML: llmwiki's reader beside
  the extractor before this round, trafilatura and readability-lxml; PDF: llmwiki's PDFium layout reader
  beside pypdf, pypdf's layout mode and pdfplumber, where installed): the share of the question sets'
  evidence sentences found in the text, lines repeated on five documents or pages or more (furniture),
  prose sentences that are fragments, and seconds per MB. ``--extra DIR`` adds folders of other documents
  (Debian's ``*-doc`` packages, say) to this table, without questions.
- **sentences**: precision and recall of sentence boundaries against ``bench/labels/sentence_boundaries.json``
  (boundaries labelled by hand in realdocs paragraphs), llmwiki's segmenter beside pysbd.
- **build**: ``llmwiki ingest`` of both corpora into one workspace (a subprocess): seconds per MB and peak
  memory. ``--scale DIR ...`` times the same for other folders of documents (the goal: 1,000 HTML pages, about
  20 MB, ingested with their wiki in under 3 minutes, under 1 GB).
- **wiki**: the realdocs README's measures of the generated wiki: fragment share, boilerplate share, pages that
  quote one sentence twice, concept precision against the docs' own index (and the glossary) with the index terms
  the concepts cover.
- **context** and **qa**: per question set, the selector's context holding a reference, and
  ``llmwiki ask --batch --json`` scored as ``tools/qa_score.py`` scores it.
- **written** (not run by default): the same scoring on the questions written here from the same documents
  (``training/data``: fact questions that reuse a sentence's words, fact questions in other words, yes/no
  questions), a check on an answer rule beside the measuring sets, which no rule may be fitted on.
- **other** (not run by default): the wiki's measures, context and answers on documents of other tools (``bench/otherdocs.sh`` fetches
  them: Apache's, aptitude's and Aspell's HTML manuals, the Asymptote and Debian Reference PDFs) with the questions
  written here on what they do by default (``training/data/otherdocs_defaults.tsv``): a rule suggested by the
  realdocs corpora measured on corpora it was not written from.

The workspace is kept in --workspace between runs (default: a folder under the system's temporary
folder); --rebuild makes it again after a change to extraction, chunking or generation.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.text.segment import MARKER, is_whole_sentence, segments  # noqa: E402

CORPORA = {"python-3.11-docs": "python-3.11-docs", "gnuplot-5.4": "gnuplot-5.4"}
LABELS = REPO / "bench" / "labels" / "sentence_boundaries.json"
CITE = re.compile(r"\s*\[c\d+\]")


def normalised(text: str) -> str:
    """Lower case, letters and digits only: how evidence is looked for in an extracted text."""
    return "".join(char for char in text.lower() if char.isalnum())


def load_questions(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("kind\t"):
            continue
        parts = line.split("\t")
        rows.append({"kind": parts[0], "question": parts[1], "references": [part.strip() for part in parts[2].split("|")],
                     "file": parts[3] if len(parts) > 3 else "", "evidence": parts[4] if len(parts) > 4 else ""})
    return rows


def question_sets(data: Path) -> dict[str, list[dict]]:
    return {path.stem: load_questions(path) for path in sorted((data / "questions").glob("*.tsv"))}


WRITTEN = {"words reused": "realdocs_questions.tsv", "other words": "realdocs_paraphrased.tsv", "yes/no": "realdocs_yes_no.tsv"}


def written_sets() -> dict[str, list[dict]]:
    """The questions written here from the realdocs documents (``training/data``, never the measuring sets): a
    second check on a rule, on questions no rule was written from. Both corpora in each set; no stating file."""
    from training.ranker import load_written

    sets = {}
    for label, name in WRITTEN.items():
        path = REPO / "training" / "data" / name
        if path.is_file():
            sets[f"written, {label}"] = [{"kind": "yesno" if label == "yes/no" else "fact", "question": entry["question"], "references": entry["answers"],
                                          "file": "", "evidence": ""} for entry in load_written(path)]
    return sets


OTHER_QUESTIONS = REPO / "training" / "data" / "otherdocs_defaults.tsv"


def other_docs(folder: Path, workspace: Path, *, rebuild: bool, questions: Path = OTHER_QUESTIONS) -> dict[str, list[dict]]:
    """The workspace of the other tools' documents (made once, or again with --rebuild) and its question set."""
    if not folder.is_dir():
        sys.exit(f"no documents under {folder}: run bench/otherdocs.sh {folder} (it downloads five Debian *-doc packages; "
                 f"--more fetches the five that training/data/moredocs.tsv asks of)")
    if rebuild or not (workspace / "wiki" / "index.md").is_file():
        timed_ingest({path.name: path for path in sorted(folder.iterdir()) if path.is_dir()}, workspace, label="Other tools' documents")
    return {f"other tools, {questions.stem.removeprefix('otherdocs_')}": load_questions(questions)}


def corpus_files(data: Path) -> list[Path]:
    return sorted(path for name in CORPORA for path in (data / name).rglob("*") if path.suffix.lower() in (".html", ".htm", ".pdf"))


# -- extraction candidates ------------------------------------------------------------------


def _before_html(data: bytes) -> str:
    """The HTML extractor as it stood before this round (whole landmark or body through markdownify)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data.decode("utf-8", "replace"), "lxml")
    for element in soup(["script", "style", "noscript", "template", "nav", "svg"]):
        element.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    return MarkdownConverter(heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False, escape_misc=False).convert_soup(root)


def _llmwiki(data: bytes, path: Path) -> list[str]:
    from llmwiki.ingest.extract import extract

    return [page.text for page in extract(data, path).pages]


def _html_candidates() -> dict:
    found = {"llmwiki": lambda data, path: _llmwiki(data, path), "before this round (bs4 + markdownify)": lambda data, path: [_before_html(data)]}
    try:
        import trafilatura

        found["trafilatura"] = lambda data, path: [trafilatura.extract(data.decode("utf-8", "replace"), output_format="markdown", include_tables=True, favor_recall=True) or ""]
    except ImportError:
        pass
    try:
        from markdownify import markdownify
        from readability import Document

        found["readability-lxml + markdownify"] = lambda data, path: [markdownify(Document(data.decode("utf-8", "replace")).summary(html_partial=True), heading_style="ATX")]
    except ImportError:
        pass
    return found


def _pdf_candidates() -> dict:
    def pypdf_pages(data: bytes, path: Path, **options) -> list[str]:
        import io

        from pypdf import PdfReader

        return [page.extract_text(**options) or "" for page in PdfReader(io.BytesIO(data)).pages]

    found = {"llmwiki": lambda data, path: _llmwiki(data, path), "pypdf (before this round)": pypdf_pages,
             "pypdf layout mode": lambda data, path: pypdf_pages(data, path, extraction_mode="layout")}
    try:
        import pdfplumber

        def plumber(data: bytes, path: Path) -> list[str]:
            import io

            with pdfplumber.open(io.BytesIO(data)) as pdf:
                return [page.extract_text() or "" for page in pdf.pages]

        found["pdfplumber"] = plumber
    except ImportError:
        pass
    return found


def _prose_sentences(texts: list[str]) -> list[str]:
    sentences = []
    for text in texts:
        for segment in segments(text):
            if segment.is_prose:
                sentences.append(" ".join(text[segment.start:segment.end].split()))
    return sentences


def _furniture_share(texts: dict[Path, list[str]], *, pdf: bool) -> float:
    """HTML: the share of output lines found in 30% of the files or more (a site's chrome). PDF: the share of pages
    whose first or last line, digits aside, is the first or last line of five pages or more (running heads, feet)."""
    if pdf:
        edges: Counter[str] = Counter()
        page_edges = []
        for pages in texts.values():
            for page in pages:
                lines = [line for line in page.splitlines() if normalised(line)]
                found = {re.sub(r"\d+", "#", normalised(line)) for line in lines[:1] + lines[-1:]}
                page_edges.append(found)
                edges.update(found)
        return sum(any(edges[edge] >= 5 for edge in found) for found in page_edges) / max(len(page_edges), 1)
    files: Counter[str] = Counter()
    for pages in texts.values():
        files.update({normalised(line) for line in "\n".join(pages).splitlines() if len(normalised(line)) >= 4})
    lines = [normalised(line) for pages in texts.values() for line in "\n".join(pages).splitlines() if len(normalised(line)) >= 4]
    common = max(5, 0.3 * len(texts))
    return sum(files[line] >= common for line in lines) / max(len(lines), 1)


def extraction_table(files: list[Path], evidence: dict[str, list[str]]) -> None:
    """Each candidate on each format: evidence found, furniture lines, fragments, seconds per MB."""
    for suffix, candidates in ((".html", _html_candidates()), (".pdf", _pdf_candidates())):
        chosen = [path for path in files if path.suffix.lower() in (suffix, ".htm" if suffix == ".html" else suffix)]
        if not chosen:
            continue
        size_mb = sum(path.stat().st_size for path in chosen) / 1e6
        wanted = [(path, normalised(sentence)) for path in chosen for sentence in evidence.get(path.name, [])]
        print(f"\n{suffix[1:].upper()}: {len(chosen)} files, {size_mb:.1f} MB, {len(wanted)} evidence sentences of the question sets")
        print(f"{'candidate':40} {'evidence':>8} {'in 1 sent.':>9} {'furniture':>9} {'fragments':>9} {'s per MB':>8}")
        for name, candidate in candidates.items():
            started = time.perf_counter()
            texts: dict[Path, list[str]] = {}
            for path in chosen:
                try:
                    texts[path] = candidate(path.read_bytes(), path)
                except Exception as err:  # a candidate that fails on a file scores nothing there
                    texts[path] = []
                    print(f"  {name}: {path.name}: {type(err).__name__}: {str(err)[:80]}")
            seconds = time.perf_counter() - started
            joined = {path: normalised(" ".join(pages)) for path, pages in texts.items()}
            found = sum(sentence in joined[path] for path, sentence in wanted)
            in_one = 0
            for path, sentence in wanted:
                prose = {normalised(part) for part in _prose_sentences(texts[path])}
                in_one += any(sentence in part for part in prose)
            furniture = _furniture_share(texts, pdf=suffix == ".pdf")
            sentences = _prose_sentences([page for pages in texts.values() for page in pages])
            fragments = sum(not is_whole_sentence(sentence) for sentence in sentences)
            print(f"{name:40} {found / max(len(wanted), 1):8.3f} {in_one / max(len(wanted), 1):9.3f} {furniture:9.3f} {fragments / max(len(sentences), 1):9.3f} {seconds / max(size_mb, 1e-9):8.2f}")


# -- sentence boundaries -----------------------------------------------------------------------------


def labelled_paragraphs(text: str) -> list[str]:
    """The paragraphs of an extracted page as the labels were drawn: blocks of prose only, a list marker off."""
    found = []
    for block in text.split("\n\n"):
        parts = segments(block)
        if not parts or not all(part.is_prose for part in parts):
            continue
        paragraph = block[parts[0].start:parts[-1].end]
        found.append(paragraph[2:] if paragraph.startswith("- ") else paragraph)
    return found


def _letters_before(text: str) -> list[int]:
    counts, seen = [], 0
    for char in text:
        counts.append(seen)
        seen += char.isalnum()
    counts.append(seen)
    return counts


def sentence_table(data: Path) -> None:
    from llmwiki.ingest.extract import extract

    labels = json.loads(LABELS.read_text(encoding="utf-8"))["paragraphs"]
    wanted = {label["key"]: label for label in labels}
    paragraphs: dict[str, str] = {}
    for file in sorted({label["file"] for label in labels}):
        path = data / file
        if not path.exists():
            continue
        for page in extract(path.read_bytes(), path).pages:
            for paragraph in labelled_paragraphs(page.text):
                key = hashlib.sha1(normalised(paragraph).encode()).hexdigest()[:16]
                if key in wanted:
                    paragraphs[key] = paragraph

    def ours(text: str) -> list[int]:
        return [part.end for part in segments(text) if part.kind != MARKER][:-1]

    splitters = {"llmwiki (text.segment)": ours}
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
        splitters["pysbd 0.3 (English)"] = lambda text: [span.start + len(span.sent.rstrip()) for span in segmenter.segment(text.replace("\n", " "))][:-1]
    except ImportError:
        pass
    gold_total = sum(len(wanted[key]["boundaries"]) for key in paragraphs)
    print(f"\nSentence boundaries: {len(paragraphs)} of {len(labels)} labelled paragraphs found in today's extraction, {gold_total} boundaries")
    print(f"{'splitter':28} {'precision':>9} {'recall':>7} {'F1':>6} {'paragraphs/s':>12}")
    for name, splitter in splitters.items():
        right = predicted = 0
        started = time.perf_counter()
        for key, paragraph in paragraphs.items():
            letters = _letters_before(paragraph)
            ends = {letters[end] for end in splitter(paragraph)} - {0, letters[-1]}
            gold = set(wanted[key]["boundaries"])
            right += len(ends & gold)
            predicted += len(ends)
        seconds = time.perf_counter() - started
        precision, recall = right / max(predicted, 1), right / max(gold_total, 1)
        print(f"{name:28} {precision:9.3f} {recall:7.3f} {2 * precision * recall / max(precision + recall, 1e-9):6.3f} {len(paragraphs) / max(seconds, 1e-9):12.0f}")


# -- the workspace --------------------------------------------------------------------------------------


def build(data: Path, workspace: Path, *, rebuild: bool) -> None:
    if workspace.exists() and not rebuild and (workspace / "wiki" / "index.md").is_file():
        print(f"\nWorkspace {workspace} kept from an earlier run (--rebuild to make it again)")
        return
    timed_ingest({name: data / name for name in CORPORA}, workspace, label="Build")


_PEAK_OF_CHILD = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
                  "print(f'peak-kb {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', flush=True); sys.exit(code)")


def timed_ingest(folders: dict[str, Path], workspace: Path, *, label: str) -> None:
    """Copy the folders' HTML and PDF files into a new workspace and time `llmwiki ingest` (with its wiki) on them."""
    shutil.rmtree(workspace, ignore_errors=True)
    llmwiki = [sys.executable, "-m", "llmwiki"]
    subprocess.run([*llmwiki, "init", str(workspace)], check=True, capture_output=True)
    size = files = 0
    for name, folder in folders.items():
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.suffix.lower() not in (".html", ".htm", ".pdf"):
                continue
            target = workspace / "sources" / name / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            size += target.stat().st_size
            files += 1
    started = time.perf_counter()
    # The ingest is started by a small Python that reports its child's peak: Linux counts in a child's peak the size of
    # the process it was forked from, and this one has read every extractor candidate by now.
    process = subprocess.run([sys.executable, "-c", _PEAK_OF_CHILD, *llmwiki, "ingest", "-w", str(workspace)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    seconds = time.perf_counter() - started
    output = process.stdout
    lines = output.decode("utf-8", "replace").splitlines()
    # Exit 2: some files were refused, each with its reason, and the rest ingested: a real folder of documentation
    # has pages with no main content (a list of every class), and the figures are still about the rest.
    if process.returncode != 0 and not (process.returncode == 2 and any(line.startswith("Wiki:") for line in lines)):
        print("\n".join(lines[-40:]))
        sys.exit(f"llmwiki ingest failed (exit {process.returncode})")
    peak_mb = int(re.findall(rb"^peak-kb (\d+)$", output, re.MULTILINE)[-1]) / 1024
    summary = [line for line in lines if line.startswith(("Wiki:", "Store:")) or " files: " in line
               or line.lstrip().startswith("failed ")]
    print(f"\n{label}: {files} files, {size / 1e6:.1f} MB of sources, ingest + wiki {seconds:.1f} s = {seconds / (size / 1e6):.2f} s per MB; peak memory {peak_mb:.0f} MB")
    for line in summary:
        print(f"  {line.strip()}")


# -- the wiki ------------------------------------------------------------------------------------------


def _page_body(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.startswith("---"):
        text = text.split("\n---\n", 1)[-1]
    keep = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "<!--", "- [")) or re.match(r"^\[c\d+\]:", stripped):
            continue
        keep.append(stripped)
    return " ".join(keep)


def _scorer_sentences(text: str) -> list[str]:
    """Sentences as the realdocs scorers split a page body: after a citation run, or . ! ? before a capital."""
    parts = re.split(r"(?<=\])\s+(?=\S)|(?<=[.!?])\s+(?=[A-Z\"'`(\[*])", text)
    return [CITE.sub("", part).strip() for part in parts if CITE.sub("", part).strip()]


def index_terms(path: Path) -> set[str]:
    raw = path.read_text(encoding="utf-8", errors="replace")
    terms = set()
    for entry in re.findall(r"<dt[^>]*>(.*?)</dt>", raw, re.S):
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", entry))).strip()
        terms.add(term_key(text.split(",")[0]))
    for anchor in re.findall(r"<a [^>]*>(.*?)</a>", raw, re.S):
        terms.add(term_key(html.unescape(re.sub(r"<[^>]+>", "", anchor))))
    terms.discard("")
    return terms


def term_key(text: str) -> str:
    text = re.sub(r"[^a-z0-9 ]+", " ", text.lower())
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"(?<=\w\w\w)s\b", "", text)


def wiki_table(data: Path, workspace: Path) -> None:
    pages = {path: _scorer_sentences(_page_body(path)) for kind in ("summaries", "concepts") for path in (workspace / "wiki" / kind).glob("*.md")}
    sentences = [sentence for found in pages.values() for sentence in found]
    def key(sentence: str) -> str:  # as tools/wiki_quality.py compares sentences
        return re.sub(r"\W+", " ", sentence.lower()).strip()

    seen: Counter[str] = Counter()
    for found in pages.values():
        seen.update({key(sentence) for sentence in found})
    fragments = [sentence for sentence in sentences if not is_whole_sentence(sentence)]
    boilerplate = sum(seen[key(sentence)] >= 5 for sentence in sentences)
    summaries = sum(path.parent.name == "summaries" for path in pages)
    concepts = [path for path in pages if path.parent.name == "concepts"]
    print(f"\nWiki: {len(pages)} pages ({summaries} summaries, {len(concepts)} concepts), {len(sentences)} body sentences")
    print(f"  fragment share {len(fragments) / max(len(sentences), 1):.3f}   (before this round: 0.618; goal <= 0.02)")
    print(f"  boilerplate share {boilerplate / max(len(sentences), 1):.3f}   (before: 0.270; goal <= 0.01)")
    repeats = {path: len(found) - len({key(sentence) for sentence in found}) for path, found in pages.items()}
    print(f"  pages quoting one sentence twice or more: {sum(count > 0 for count in repeats.values())} of {len(pages)} "
          f"({sum(repeats.values())} repeats)")
    for sentence in fragments[:5]:
        print(f"    fragment: {sentence[:120]}")
    index_file = data / "truth" / "genindex-all.html"
    if index_file.exists():
        terms = index_terms(index_file)
        glossary = data / "truth" / "glossary.html"
        glossary_terms = {term_key(re.sub(r"<[^>]+>", "", html.unescape(term))) for term in re.findall(r"<dt[^>]*>(.*?)</dt>", glossary.read_text(encoding="utf-8", errors="replace"), re.S)} if glossary.exists() else set()
        titles, python_only = [], []
        for path in concepts:
            text = path.read_text(encoding="utf-8", errors="replace")
            match = re.search(r"^title:\s*(.+)$", text, re.M)
            title = match.group(1).strip().strip("'\"") if match else path.stem
            titles.append(title)
            sources = re.findall(r"path: (sources/\S+)", text)
            if sources and all(source.startswith("sources/python-3.11-docs/") for source in sources):
                python_only.append(title)
        indexed = lambda title: term_key(title) in terms or term_key(title) in glossary_terms  # noqa: E731
        hits = [title for title in titles if indexed(title)]
        print(f"  concept precision {len(hits) / max(len(titles), 1):.3f} ({len(hits)} of {len(titles)} concept titles are index or glossary terms; before: 0.454)")
        python_hits = [title for title in python_only if indexed(title)]
        print(f"    of the concepts from the Python docs alone (whose index this is): {len(python_hits) / max(len(python_only), 1):.3f} "
              f"({len(python_hits)} of {len(python_only)}; goal >= 0.80 with 40 pages or more)")
        print(f"    not index terms, e.g.: {', '.join(sorted(title for title in titles if title not in hits)[:12])}")


def summary_table(workspace: Path) -> None:
    """Summaries as a reader would judge them: does each open with one of the first five sentences of its document's
    body (its first section or abstract), and does any quote licence text."""
    from llmwiki.generate import LEGAL
    from llmwiki.ingest.extract import extract

    leads = total = legal = 0
    examples = []
    for path in sorted((workspace / "wiki" / "summaries").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        source = re.search(r"path: (sources/\S+)", text)
        body = _scorer_sentences(_page_body(path))
        if source is None or not body or not (workspace / source.group(1)).exists():
            continue
        total += 1
        legal += sum(bool(LEGAL.search(sentence)) for sentence in body)
        document = workspace / source.group(1)
        prose = [sentence for sentence in _prose_sentences([page.text for page in extract(document.read_bytes(), document).pages])
                 if is_whole_sentence(sentence) and not LEGAL.search(sentence)]
        first = normalised(body[0])
        if any(first == normalised(sentence) for sentence in prose[:5]):
            leads += 1
        elif len(examples) < 3:
            examples.append(f"{path.name}: {body[0][:100]}")
    print(f"  summaries opening with one of their document's first five sentences: {leads} of {total}; licence sentences quoted: {legal}")
    for example in examples:
        print(f"    opens elsewhere: {example}")


# -- questions ----------------------------------------------------------------------------------------------


def context_table(workspace_path: Path, sets: dict[str, list[dict]]) -> None:
    from llmwiki.read.select import select
    from llmwiki.services import Services
    from llmwiki.workspace import Workspace

    workspace = Workspace.open(workspace_path)
    services = Services(workspace)
    print("\nContext (the selector's context for a fact question holds one of its references)")
    for name, rows in sets.items():
        facts = [row for row in rows if row["kind"] == "fact"]
        hits = cited_only = 0
        for row in facts:
            selection = select(workspace, row["question"], services=services)
            text = " ".join(re.sub(r"\s+", " ", getattr(item, "text", "").lower()) for item in selection.items)
            held = any(re.sub(r"\s+", " ", reference.lower()) in text for reference in row["references"])
            hits += held
            # As tools/context_recall.py counts: a reference such as "79" is also found in a wiki page's citation "[c2179]".
            cited_only += held and not any(re.sub(r"\s+", " ", reference.lower()) in CITE.sub(" ", text) for reference in row["references"])
        print(f"  {name:20} {hits / max(len(facts), 1):.3f} ({hits} of {len(facts)}"
              + (f"; {cited_only} only in a citation number, {(hits - cited_only) / max(len(facts), 1):.3f} without)" if cited_only else ")"))


def _whole_answer_sentences(answer: str) -> list[str]:
    text = re.sub(r"^(Yes|No) — ", "", answer or "")
    text = re.sub(r"\(the passage[^)]*\)", "", text)
    return [CITE.sub("", part).strip() for part in re.split(r"(?<=\])\s+", text) if CITE.sub("", part).strip()]


def qa_table(workspace: Path, sets: dict[str, list[dict]]) -> dict[str, list[dict]]:
    print("\nAnswers (llmwiki ask --batch --json, scored as tools/qa_score.py scores it)")
    header = f"  {'set':20} {'fact':>5} {'cites':>5} {'yes/no':>6} {'given':>5} {'off ref.':>8} {'off verd.':>9} {'ans. ref.':>9} {'words':>5} {'whole':>5} {'s/q':>5}"
    print(header)
    answered = {}
    for name, rows in sets.items():
        with tempfile.TemporaryDirectory() as scratch:
            questions = Path(scratch) / "questions.txt"
            questions.write_text("\n".join(row["question"] for row in rows) + "\n", encoding="utf-8")
            started = time.perf_counter()
            process = subprocess.run([sys.executable, "-m", "llmwiki", "ask", "--batch", str(questions), "--json", "-w", str(workspace)],
                                     capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
            seconds = time.perf_counter() - started
        answers = [json.loads(line) for line in process.stdout.splitlines() if line.strip().startswith("{")]
        if len(answers) != len(rows):
            print(f"  {name}: {len(answers)} answers for {len(rows)} questions; {process.stderr[-300:]}")
            continue
        answered[name] = [dict(row, answer=answer) for row, answer in zip(rows, answers)]
        facts = [(row, answer) for row, answer in zip(rows, answers) if row["kind"] == "fact"]
        yes_no = [(row, answer) for row, answer in zip(rows, answers) if row["kind"] == "yesno"]
        off = [(row, answer) for row, answer in zip(rows, answers) if row["kind"] == "offtopic"]
        norm = lambda text: re.sub(r"\s+", " ", (text or "").lower())  # noqa: E731
        fact_hits = sum(any(norm(reference) in norm(answer.get("answer")) for reference in row["references"]) for row, answer in facts)
        cites = sum(any(Path(citation.get("path", "")).name == row["file"] for citation in answer.get("citations") or []) for row, answer in facts)
        positives = [(row, answer) for row, answer in yes_no if row["references"][0] == "yes"]
        negatives = [(row, answer) for row, answer in yes_no if row["references"][0] == "no"]
        true_positive = sum(answer.get("verdict") == "yes" for _, answer in positives) / max(len(positives), 1)
        true_negative = sum(answer.get("verdict") == "no" for _, answer in negatives) / max(len(negatives), 1)
        given = sum(answer.get("verdict") in ("yes", "no") for _, answer in yes_no)
        answerable_refused = sum(bool(answer.get("refused")) for _, answer in facts + yes_no)
        words = sorted(len((answer.get("answer") or "").split()) for _, answer in facts + yes_no if not answer.get("refused"))
        sentences = [sentence for _, answer in facts + yes_no if not answer.get("refused") for sentence in _whole_answer_sentences(answer.get("answer"))]
        print(f"  {name:20} {fact_hits / max(len(facts), 1):5.3f} {cites / max(len(facts), 1):5.3f} {(true_positive + true_negative) / 2:6.3f} "
              f"{given / max(len(yes_no), 1):5.2f} {sum(bool(answer.get('refused')) for _, answer in off) / max(len(off), 1):8.3f} "
              f"{sum(answer.get('verdict') in ('yes', 'no') for _, answer in off):9d} {answerable_refused / max(len(facts) + len(yes_no), 1):9.3f} "
              f"{words[len(words) // 2] if words else 0:5d} {sum(map(is_whole_sentence, sentences)) / max(len(sentences), 1):5.3f} {seconds / max(len(rows), 1):5.2f}")
    print("  (fact: answers holding a reference; cites: citing the stating file; yes/no: balanced accuracy; given: share with a verdict;")
    print("   off ref./verd.: off-topic refused / given a verdict; ans. ref.: answerable refused; words: median; whole: answer sentences whole)")
    return answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "realdocs")
    parser.add_argument("--workspace", type=Path, default=Path(tempfile.gettempdir()) / "llmwiki-bench-realdocs")
    parser.add_argument("--rebuild", action="store_true", help="make the workspace again (after a change to extraction, chunking or generation)")
    parser.add_argument("--only", default="extract,sentences,build,wiki,context,qa", help="comma-separated parts to run")
    parser.add_argument("--extra", type=Path, action="append", default=[], help="another folder of HTML and PDF documents for the extraction table")
    parser.add_argument("--other", type=Path, default=Path(tempfile.gettempdir()) / "llmwiki-otherdocs", help="the documents bench/otherdocs.sh fetched")
    parser.add_argument("--other-workspace", type=Path, default=Path(tempfile.gettempdir()) / "llmwiki-bench-otherdocs")
    parser.add_argument("--other-questions", type=Path, default=OTHER_QUESTIONS,
                        help="their questions (training/data/moredocs.tsv goes with the documents bench/otherdocs.sh --more fetches)")
    parser.add_argument("--answers", type=Path, help="write every answer with its question (JSON lines) here")
    parser.add_argument("--scale", type=Path, nargs="+", default=[], help="time ingest + wiki of these folders of HTML and PDF files together")
    args = parser.parse_args()
    if not (args.data / "questions").is_dir():
        sys.exit(f"no realdocs data under {args.data}: it lives in ../shared/data/realdocs (see its README)")
    parts = set(args.only.split(","))
    sets = question_sets(args.data)
    evidence: dict[str, list[str]] = {}
    for rows in sets.values():
        for row in rows:
            if row["evidence"]:
                evidence.setdefault(row["file"], []).append(row["evidence"])
    if "extract" in parts:
        extraction_table(corpus_files(args.data), evidence)
        for extra in args.extra:
            files = sorted(path for path in extra.rglob("*") if path.suffix.lower() in (".html", ".htm", ".pdf"))
            print(f"\n--extra {extra}")
            extraction_table(files, {})
    if "sentences" in parts:
        sentence_table(args.data)
    if "build" in parts:
        build(args.data, args.workspace, rebuild=args.rebuild)
    if args.scale:
        with tempfile.TemporaryDirectory() as scratch:
            timed_ingest({folder.name: folder for folder in args.scale}, Path(scratch) / "scale", label="Scale")
    if "wiki" in parts:
        wiki_table(args.data, args.workspace)
        summary_table(args.workspace)
    if "context" in parts:
        context_table(args.workspace, sets)
    answered = {}
    if "written" in parts:
        print("\nQuestions written here from the same documents (training/data; cites: not applicable)", end="")
        answered |= qa_table(args.workspace, written_sets())
    if "qa" in parts:
        answered |= qa_table(args.workspace, sets)
    if "other" in parts:
        other = other_docs(args.other, args.other_workspace, rebuild=args.rebuild, questions=args.other_questions)
        wiki_table(args.other, args.other_workspace)
        context_table(args.other_workspace, other)
        answered |= qa_table(args.other_workspace, other)
    if args.answers and answered:
        args.answers.write_text("".join(json.dumps(dict(row, set=name)) + "\n" for name, rows in answered.items() for row in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
