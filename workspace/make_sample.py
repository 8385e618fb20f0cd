"""Rebuild sources/ of the sample workspace from the CMU QA S08 articles.

Seven Wikipedia articles (GFDL, see LICENSE-GFDL) in every format llmwiki
extracts, so the demo runs each extractor on real text:

    python workspace/make_sample.py [--data ../shared/data/cmu-qa/S08]

The text is the article's own; only structure is added: the title becomes a
heading, "* item" paragraphs become lists, and the trailing list of related
article names is dropped. Needs fpdf2 and python-docx (the test extra).
"""

from __future__ import annotations

import argparse
import html
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARTICLES = {
    # target file: article file in S08/data
    "otter.txt": "set1/a7",
    "turtle.md": "set1/a9",
    "charles-augustin-de-coulomb.md": "set4/a6",
    "alessandro-volta.html": "set4/a10",
    "henri-becquerel.html": "set4/a9",
    "amedeo-avogadro.pdf": "set4/a8",
    "anders-celsius.docx": "set4/a5",
}
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def read_article(path: Path) -> tuple[str, list[str]]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [" ".join(p.split("\n")) if not p.lstrip().startswith(("*", "-")) else p for p in (q.strip() for q in text.split("\n\n")) if p]
    title = paragraphs[0].replace("_", " ").strip()
    body = []
    for paragraph in paragraphs[1:]:
        if paragraph.startswith("Related Wikipedia Articles"):
            break
        if paragraph.startswith(":For other uses") or paragraph == "----":
            continue
        body.append(paragraph)
    return title[:1].upper() + title[1:], body


def as_markdown(title: str, body: list[str]) -> str:
    parts = [f"# {title}"]
    for paragraph in body:
        if paragraph.lstrip().startswith(("*", "-")):
            items = [line.lstrip("*- ").strip() for line in paragraph.split("\n") if line.strip("*- ")]
            parts.append("\n".join(f"- {item}" for item in items))
        else:
            parts.append(paragraph)
    return "\n\n".join(parts) + "\n"


def as_html(title: str, body: list[str]) -> str:
    parts = [f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head><body>", f"<h1>{html.escape(title)}</h1>"]
    for paragraph in body:
        if paragraph.lstrip().startswith(("*", "-")):
            items = [line.lstrip("*- ").strip() for line in paragraph.split("\n") if line.strip("*- ")]
            parts.append("<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>")
        else:
            parts.append(f"<p>{html.escape(paragraph)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_pdf(title: str, body: list[str], target: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF(format="A5")
    pdf.set_title(title)
    pdf.add_font("DejaVu", fname=str(FONT))
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("DejaVu", size=16)
    pdf.start_section(title, level=0)
    pdf.multi_cell(0, 9, title)
    pdf.ln(4)
    pdf.set_font("DejaVu", size=10)
    for paragraph in body:
        pdf.multi_cell(0, 5, paragraph.replace("\n", " "))
        pdf.ln(4)
    pdf.output(str(target))


def write_docx(title: str, body: list[str], target: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading(title, level=1)
    for paragraph in body:
        if paragraph.lstrip().startswith(("*", "-")):
            for line in paragraph.split("\n"):
                if line.strip("*- "):
                    document.add_paragraph(line.lstrip("*- ").strip(), style="List Bullet")
        else:
            document.add_paragraph(paragraph)
    document.save(str(target))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data" / "cmu-qa" / "S08")
    args, _ = parser.parse_known_args()
    sources = HERE / "sources"
    sources.mkdir(exist_ok=True)
    for target_name, article in ARTICLES.items():
        article_path = args.data / "data" / f"{article}.txt"
        target = sources / target_name
        if target.suffix == ".txt":
            shutil.copyfile(article_path, target)  # verbatim: its own encoding and line endings
            continue
        title, body = read_article(article_path)
        if target.suffix == ".md":
            target.write_text(as_markdown(title, body), encoding="utf-8")
        elif target.suffix == ".html":
            target.write_text(as_html(title, body), encoding="utf-8")
        elif target.suffix == ".pdf":
            write_pdf(title, body, target)
        elif target.suffix == ".docx":
            write_docx(title, body, target)
        print(f"wrote {target.relative_to(HERE)}")
    shutil.copyfile(args.data.parent / "LICENSE-S08,S09", HERE / "LICENSE-GFDL")


if __name__ == "__main__":
    main()
