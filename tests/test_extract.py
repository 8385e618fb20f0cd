from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from llmwiki.errors import IngestError, UnsupportedFileError
from llmwiki.ingest.extract import decode_text, extract


def read(path: Path):
    return extract(path.read_bytes(), path)


def blocks_by_text(extraction):
    return {block.text: block for page in extraction.pages for block in page.blocks}


def assert_offsets_exact(extraction):
    for page in extraction.pages:
        for block in page.blocks:
            assert page.text[block.start:block.end] == block.text


# -- Markdown ---------------------------------------------------------------


def test_markdown_breadcrumbs_follow_nested_headings():
    extraction = read(FIXTURES / "guide.md")
    blocks = blocks_by_text(extraction)
    assert extraction.title == "Field Guide to Otters"  # frontmatter wins over the H1
    assert blocks["River otters prefer clean water with plenty of fish. Their dens are called holts."].breadcrumb == ("Otters", "Habitat", "Rivers")
    assert blocks["Sea otters float on their backs and use rocks as tools."].breadcrumb == ("Otters", "Habitat", "Coasts")
    # Going back up a level drops the deeper headings.
    assert blocks["Most otters eat fish, frogs, crayfish and crabs."].breadcrumb == ("Otters", "Diet")
    assert_offsets_exact(extraction)


def test_markdown_keeps_tables_and_code_whole_and_drops_frontmatter():
    extraction = read(FIXTURES / "guide.md")
    text = extraction.pages[0].text
    assert "tags:" not in text
    table = next(block for block in extraction.pages[0].blocks if block.text.startswith("| prey"))
    assert "| crabs | 20% |" in table.text
    assert any(block.text.startswith("```python") and block.text.endswith("```") for block in extraction.pages[0].blocks)


def test_a_markdown_note_reads_as_its_app_shows_it_links_quotes_and_callouts(tmp_path):
    from llmwiki.text.segment import segments

    note = tmp_path / "note.md"
    note.write_text("# Kettle research\n\nMet with the [[Design Team]] on Tuesday, see [[Specs#Power|the power spec]] and [[Specs#Power]].\n"
                    "![[kettle.png]]\n\n> [!note] Open question\n> Should the base rotate? Nobody decided.\n\n"
                    "> A quoted line\n> goes on here.\n\nThe filter is open. ^filter-1\n\n"
                    "Test with `[[ -f ~/.kettlerc ]]` first.\n\n```\n> [[ -f x ]] && echo yes\n```\n", encoding="utf-8")
    text = read(note).pages[0].text
    sentences = [" ".join(text[part.start:part.end].split()) for part in segments(text) if part.is_prose]
    assert "Met with the Design Team on Tuesday, see the power spec and Specs › Power." in sentences
    assert "Should the base rotate?" in sentences and "**Note: Open question**" in sentences  # the callout's title a label of its own
    assert "A quoted line goes on here." in sentences and "The filter is open." in sentences
    assert "kettle.png" not in text and "^filter-1" not in text and "[!note]" not in text
    assert "Test with `[[ -f ~/.kettlerc ]]` first." in sentences and "> [[ -f x ]] && echo yes" in text  # controls: code as written


def test_markdown_without_frontmatter_takes_title_from_h1(tmp_path):
    path = tmp_path / "plain.md"
    path.write_text("Intro line.\n\n# Real Title\n\nBody.\n", encoding="utf-8")
    assert read(path).title == "Real Title"


# -- HTML -------------------------------------------------------------------


def test_html_headings_become_breadcrumbs_and_scripts_are_dropped():
    extraction = read(FIXTURES / "page.html")
    text = extraction.pages[0].text
    assert extraction.title == "Volta's Pile"
    assert "do not index scripts" not in text and "color: red" not in text
    assert "Home" not in text  # navigation is not content
    blocks = blocks_by_text(extraction)
    construction = next(block for text_, block in blocks.items() if text_.startswith("The pile alternated"))
    assert construction.breadcrumb == ("The Voltaic Pile", "Construction")
    legacy = next(block for text_, block in blocks.items() if "volt, is named" in text_)
    assert legacy.breadcrumb == ("The Voltaic Pile", "Legacy")
    assert "Café" in legacy.text  # accented words survive
    assert_offsets_exact(extraction)


# -- PDF --------------------------------------------------------------------


def test_pdf_has_one_page_text_per_page_and_carries_the_breadcrumb(binary_fixtures):
    extraction = read(binary_fixtures["pdf"])
    assert [page.number for page in extraction.pages] == [1, 2, 3]
    assert extraction.title == "Michael Faraday"
    assert "electromagnetic induction in 1831" in extraction.pages[0].text
    assert "iron ring experiment" in extraction.pages[2].text
    assert extraction.pages[0].blocks[0].breadcrumb == ("Introduction",)
    # Page 2 has no outline entry: the section started on page 1 carries over.
    assert extraction.pages[1].blocks[0].breadcrumb == ("Introduction",)
    assert extraction.pages[2].blocks[0].breadcrumb == ("Experiments",)
    assert_offsets_exact(extraction)


def test_corrupt_pdf_is_refused_with_the_fix(binary_fixtures, tmp_path):
    good = binary_fixtures["pdf"].read_bytes()
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(good[: len(good) // 3])
    with pytest.raises(IngestError) as caught:
        read(broken)
    assert "broken.pdf" in str(caught.value)
    assert "Re-export or re-download" in str(caught.value)
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"this is not a pdf at all")
    with pytest.raises(IngestError, match="not a readable PDF"):
        read(garbage)


def test_a_scanned_pdf_is_read_by_ocr_where_tesseract_is_installed(binary_fixtures):
    import shutil

    if shutil.which("tesseract") is None:
        if os.environ.get("LLMWIKI_REQUIRE_OCR"):
            pytest.fail("tesseract is not installed (apt-get install tesseract-ocr): .ci/run installs it")
        pytest.skip("tesseract-ocr is not installed")
    extraction = read(binary_fixtures["scanned_pdf"])
    assert "OCR" in extraction.parser
    words = " ".join(extraction.pages[0].text.split())
    assert "electric dynamo" in words and "1831" in words
    assert "OCR" not in read(binary_fixtures["pdf"]).parser  # the control: a PDF with text is read as text


def test_a_scanned_pdf_without_tesseract_fails_with_the_fix(binary_fixtures, monkeypatch):
    import llmwiki.ingest.pdf as pdf

    monkeypatch.setattr(pdf.shutil, "which", lambda name: None)
    with pytest.raises(IngestError, match="install tesseract-ocr") as caught:
        read(binary_fixtures["scanned_pdf"])
    assert "scan.pdf" in str(caught.value)
    assert read(binary_fixtures["pdf"]).pages  # the control: a PDF with a text layer needs no OCR


def test_a_pdf_of_drawings_only_says_there_is_no_text(binary_fixtures):
    with pytest.raises(IngestError, match="no text layer") as caught:
        read(binary_fixtures["drawing_pdf"])
    assert "OCR" in str(caught.value)


# -- DOCX -------------------------------------------------------------------


def test_docx_heading_styles_become_breadcrumbs_and_tables_are_kept(binary_fixtures):
    extraction = read(binary_fixtures["docx"])
    blocks = blocks_by_text(extraction)
    assert extraction.title == "Celsius Notes"
    assert blocks["In 1742 he proposed the temperature scale that bears his name."].breadcrumb == ("Anders Celsius", "Temperature scale")
    assert blocks["He died of tuberculosis in 1744."].breadcrumb == ("Anders Celsius", "Death")
    assert "boiling | 0" in extraction.pages[0].text
    assert_offsets_exact(extraction)


def test_corrupt_docx_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 not really a zip archive")
    with pytest.raises(IngestError, match="not a readable DOCX") as caught:
        read(path)
    assert "re-save" in str(caught.value)


@pytest.mark.parametrize("damaged", ["word/document.xml", "word/_rels/document.xml.rels", "[Content_Types].xml", "compressed", "zip version"])
def test_docx_with_damaged_xml_is_refused_with_the_fix(tmp_path, damaged):
    import io
    import zipfile

    import docx

    document = docx.Document()
    document.add_paragraph("The kettle switches itself off when the water boils.")
    saved = io.BytesIO()
    document.save(saved)
    intact, cut = tmp_path / "intact.docx", tmp_path / "cut.docx"
    intact.write_bytes(saved.getvalue())
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(saved.getvalue())) as original, zipfile.ZipFile(out, "w") as rewritten:
        for info in original.infolist():
            data = original.read(info.filename)
            rewritten.writestr(info, data[: len(data) // 2] if info.filename == damaged else data)
    cut.write_bytes(out.getvalue())
    if damaged == "compressed":  # the deflated bytes of the document part overwritten: zlib cannot inflate them
        data = bytearray(saved.getvalue())
        info = zipfile.ZipFile(io.BytesIO(saved.getvalue())).getinfo("word/document.xml")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        data[start + 5:start + 25] = b"\xff" * 20
        cut.write_bytes(bytes(data))
    if damaged == "zip version":  # the document part asks for a zip version this Python cannot read
        import struct

        data = bytearray(saved.getvalue())
        at = data.find(b"PK\x01\x02")
        while at != -1:
            if data[at + 46:at + 46 + struct.unpack("<H", data[at + 28:at + 30])[0]] == b"word/document.xml":
                data[at + 6:at + 8] = struct.pack("<H", 99)
            at = data.find(b"PK\x01\x02", at + 4)
        cut.write_bytes(bytes(data))
    assert "The kettle switches itself off" in read(intact).pages[0].text  # control
    with pytest.raises(IngestError, match="not a readable DOCX") as caught:
        read(cut)
    assert "cut.docx" in str(caught.value) and "re-save" in str(caught.value)


def test_docx_with_a_hyperlink_to_a_bookmark_is_read(tmp_path):
    # LibreOffice and Word write a link to a bookmark as a relationship to "#name" without TargetMode="External";
    # python-docx opens it as a part and fails.
    import io
    import zipfile

    import docx

    document = docx.Document()
    document.add_paragraph("The kettle switches itself off when the water boils.")
    saved = io.BytesIO()
    document.save(saved)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(saved.getvalue())) as original, zipfile.ZipFile(out, "w") as rewritten:
        for info in original.infolist():
            data = original.read(info.filename)
            if info.filename == "word/_rels/document.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/officeDocument/'
                                                          b'2006/relationships/hyperlink" Target="#page-header"/></Relationships>')
            rewritten.writestr(info, data)
    path = tmp_path / "anchored.docx"
    path.write_bytes(out.getvalue())
    assert "The kettle switches itself off when the water boils." in read(path).pages[0].text
    assert b'Target="#page-header"/>' in zipfile.ZipFile(path).read("word/_rels/document.xml.rels")  # the file itself is left as it was


def test_docx_code_in_a_fixed_pitch_font_is_one_code_block_and_numbered_paragraphs_are_items(tmp_path):
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.add_paragraph("Run the tool with two options:")
    for line in ["tool --verbose \\", "     --output report.txt"]:
        document.add_paragraph().add_run(line).font.name = "Courier New"
    document.add_paragraph("It writes the report and stops.")  # control: prose in the body font
    numbered = document.add_paragraph("Check the report for warnings.")
    properties = numbered._p.get_or_add_pPr()
    numbering = OxmlElement("w:numPr")
    for tag, value in (("w:ilvl", "0"), ("w:numId", "1")):
        element = OxmlElement(tag)
        element.set(qn("w:val"), value)
        numbering.append(element)
    properties.append(numbering)
    path = tmp_path / "code.docx"
    document.save(str(path))
    blocks = [block.text for page in read(path).pages for block in page.blocks]
    assert blocks == ["Run the tool with two options:", "```\ntool --verbose \\\n     --output report.txt\n```",
                      "It writes the report and stops.", "- Check the report for warnings."]


# -- plain text and encodings ------------------------------------------------


def test_plain_text_paragraphs_split_on_blank_lines(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"Title line\r\n\r\nFirst paragraph\r\nwraps here.\r\n\r\n\r\nSecond paragraph.\r\n")
    extraction = read(path)
    assert [block.text for block in extraction.pages[0].blocks] == ["Title line", "First paragraph\nwraps here.", "Second paragraph."]
    assert extraction.title == "Title line"


def test_a_plain_text_line_that_opens_with_a_quote_and_goes_on_lower_case_continues_its_paragraph(tmp_path):
    path = tmp_path / "pack-refs.txt"
    # A short line ("under `refs/`") shows the text is not wrapped at a column: each line is read on its own.
    path.write_text("Traditionally, tips of branches and tags (collectively known as\n'refs') were stored one file per ref\n"
                    "under `refs/`\nin a directory.\n\nAlice Smith\nBob Jones\n'Quoted' Name\n(gdb) bt\n", encoding="utf-8")
    blocks = [block.text for block in read(path).pages[0].blocks]
    assert blocks[0] == "Traditionally, tips of branches and tags (collectively known as\n'refs') were stored one file per ref\nunder `refs/`\nin a directory."
    # Controls: a list of names, one with a quoted capital; a debugger's prompt in brackets opens a line of its own.
    assert blocks[1:] == ["Alice Smith", "Bob Jones", "'Quoted' Name", "(gdb) bt"]


def test_an_underlined_line_that_opens_a_plain_text_block_is_a_heading(tmp_path):
    path = tmp_path / "git-bundle.txt"
    path.write_text("git-bundle(1)\n=============\n\nNAME\n----\ngit-bundle - Move objects and refs by archive\n\n"
                    "DESCRIPTION\n-----------\n\nCreate, unpack, and manipulate bundle files.\n\n"
                    "Bundles are used for the transfer.\n----------\n\n----\n", encoding="utf-8")
    extraction = read(path)
    blocks = extraction.pages[0].blocks
    assert extraction.title == "git-bundle(1)"
    assert [(block.text, block.is_heading) for block in blocks[:3]] == [("# git-bundle(1)", True), ("## NAME", True),
                                                                        ("git-bundle - Move objects and refs by archive", False)]
    assert blocks[4].text == "Create, unpack, and manipulate bundle files." and blocks[4].breadcrumb == ("git-bundle(1)", "DESCRIPTION")
    # Controls: a rule under a sentence, and a rule on its own, are no headings.
    assert [block.is_heading for block in blocks[5:]] == [False] * len(blocks[5:]) and "Bundles are used for the transfer." in blocks[5].text


@pytest.mark.parametrize(
    ("raw", "expected", "encoding"),
    [
        ("Caf\u00e9 cr\u00e8me in Angoul\u00eame".encode("utf-8"), "Caf\u00e9 cr\u00e8me in Angoul\u00eame", "utf-8"),
        ("\ufeffCaf\u00e9 au lait".encode("utf-8"), "Caf\u00e9 au lait", "utf-8-sig"),
        ("Caf\u00e9 with a BOM in UTF-16".encode("utf-16"), "Caf\u00e9 with a BOM in UTF-16", "utf-16"),
    ],
)
def test_decode_text_handles_utf8_boms_and_utf16(raw, expected, encoding):
    text, used = decode_text(raw, Path("x.txt"))
    assert text == expected
    assert used == encoding


def test_latin1_text_is_decoded_not_mangled(tmp_path):
    path = tmp_path / "latin.txt"
    sentence = "Le r\u00e9sultat de l'exp\u00e9rience \u00e9tait tr\u00e8s int\u00e9ressant pour Amp\u00e8re et Fran\u00e7ois. " * 5
    path.write_bytes(sentence.encode("latin-1"))
    extraction = read(path)
    assert "r\u00e9sultat" in extraction.pages[0].text and "Fran\u00e7ois" in extraction.pages[0].text
    assert "\ufffd" not in extraction.pages[0].text


def test_nul_bytes_are_stripped_at_ingress(tmp_path):
    path = tmp_path / "nul.txt"
    path.write_bytes(b"Otters\x00 eat fish.\x00\n\nThey live in holts.")
    text = read(path).pages[0].text
    assert "\x00" not in text
    assert text == "Otters eat fish.\n\nThey live in holts."


def test_binary_file_with_text_extension_is_refused(tmp_path):
    png_like = tmp_path / "image.txt"
    png_like.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    with pytest.raises(IngestError, match="binary") as caught:
        read(png_like)
    assert "image.txt" in str(caught.value)
    control = tmp_path / "fine.txt"
    control.write_bytes(b"Plain text with one stray \x01 control byte is still text." * 3)
    assert "Plain text" in read(control).pages[0].text


@pytest.mark.parametrize("content", [b"", b"   \n\n\t  "])
def test_empty_files_are_refused(tmp_path, content):
    path = tmp_path / "empty.md"
    path.write_bytes(content)
    with pytest.raises(IngestError, match="is empty"):
        read(path)


def test_unsupported_extension_names_the_supported_ones(tmp_path):
    path = tmp_path / "sheet.xlsx"
    path.write_bytes(b"whatever")
    with pytest.raises(UnsupportedFileError, match=r"\.docx.*\.txt|\.md"):
        read(path)


# -- the shipped sample, real Wikipedia text in every format ----------------


def test_every_sample_source_extracts_with_its_extractor():
    sources = sorted((REPO / "workspace" / "sources").iterdir())
    parsers = {}
    for path in sources:
        extraction = read(path)
        assert extraction.char_count > 1000, path
        parsers[path.suffix] = extraction.parser.split(" ")[0]
        assert_offsets_exact(extraction)
    assert parsers == {".txt": "text", ".md": "markdown", ".html": "html", ".pdf": "pdf", ".docx": "docx"}


@pytest.mark.parametrize(("text", "encoding"), [
    ("Angoulême est une ville. Il est très content.", "latin-1"), ("Die Größe der Straße ist schön.", "latin-1"),
    ("Le café, la manière.", "cp1252"), ("Smart quotes “like this” – and a dash…", "cp1252"),
])
def test_short_western_texts_in_latin1_or_cp1252_decode_right(text, encoding):
    from llmwiki.ingest.extract import decode_text

    assert decode_text(text.encode(encoding), Path("note.txt"))[0] == text


@pytest.mark.parametrize(("text", "encoding"), [("Привет, как дела? Это тест кодировки.", "cp1251"), ("Zażółć gęślą jaźń. Płyną łódki.", "cp1250")])
def test_other_legacy_encodings_are_still_detected(text, encoding):  # control: the Western rule does not swallow them
    from llmwiki.ingest.extract import decode_text

    assert decode_text(text.encode(encoding), Path("note.txt"))[0] == text


def test_the_latin1_cmu_article_keeps_its_accents():
    from llmwiki.ingest.extract import decode_text

    article = Path(__file__).resolve().parents[2] / "shared" / "data" / "cmu-qa" / "S08" / "data" / "set4" / "a8.txt"
    if not article.is_file():
        pytest.skip(f"{article} is absent (../shared/data, see its README)")
    data = article.read_bytes()
    assert "manière".encode("latin-1") in data
    assert "manière" in decode_text(data, article)[0]


def test_html_nested_thousands_deep_is_read_whole_without_recursion_errors():
    from llmwiki.ingest.extract import extract

    deep = "<html><body>" + "<div>" * 3000 + "<p>Deep text here. The kelp grows fast.</p>" + "</div>" * 3000 + "<h2>After</h2><p>Shallow text.</p></body></html>"
    text = "\n".join(page.text for page in extract(deep.encode(), Path("deep.html")).pages)
    assert "Deep text here. The kelp grows fast." in text and "Shallow text." in text
    shallow = "<html><body><div><div><p>Deep text here.</p></div></div><h2>After</h2><p>Shallow text.</p></body></html>"  # the control
    shallow_text = "\n".join(page.text for page in extract(shallow.encode(), Path("shallow.html")).pages)
    assert "Deep text here." in shallow_text and "After" in shallow_text and "After" in text


def test_a_pdf_with_a_damaged_cross_reference_is_repaired_silently(binary_fixtures, capfd):
    import re

    data = binary_fixtures["pdf"].read_bytes()
    pointer = re.search(rb"startxref\s+(\d+)", data)
    damaged = data[: pointer.start(1)] + str(int(pointer.group(1)) + 7).encode() + data[pointer.end(1):]
    extraction = extract(damaged, Path("damaged.pdf"))
    assert [page.number for page in extraction.pages] == [1, 2, 3] and "iron ring experiment" in extraction.pages[2].text
    assert capfd.readouterr().err == ""  # nothing printed past the report
    assert extract(data, Path("sound.pdf")).notes == ()


def test_html_note_marks_and_permalinks_go_and_the_notes_and_words_stay():
    from llmwiki.ingest.html import html_content

    page = """<html><body><main><h1>Keys<a class="headerlink" href="#keys">¶</a></h1>
    <p>The basic action keys <a href="#ftn.2"><sup>[2] </sup></a> are + and -.</p>
    <p>Modules are cached<a class="footnote-reference" role="doc-noteref" href="#id8"><span>[</span>1<span>]</span></a> once.</p>
    <p>Texinfo marks a note so<sup><a href="#FOOT1">1</a></sup>.</p>
    <p>See <a href="#keys">the keys section</a> and item [3] of the list.</p>
    <div class="footnotes"><p id="ftn.2">[2] Some keys differ on other terminals.</p></div>
    </main></body></html>"""
    content = html_content(page)
    text = content.markdown
    assert "keys are + and -." in text and "Modules are cached once." in text and "a note so." in text  # marks gone, sentences whole
    assert "Some keys differ on other terminals." in text  # the note itself stays
    assert "the keys section" in text and "item [3] of the list" in text  # control: words in a link, a bracket not linked
    assert "¶" not in text
    assert sorted(item.reason for item in content.dropped if item.reason == "footnote mark") == ["footnote mark"] * 3


def test_a_pdf_without_a_title_in_its_metadata_takes_the_title_its_first_page_shows(tmp_path):
    from fpdf import FPDF

    def made(name: str, title_page: bool) -> Path:
        pdf = FPDF()
        pdf.add_page()
        if title_page:
            pdf.set_font("Helvetica", size=22)
            pdf.cell(0, 12, "Kettle Maker: the Boiling Manual", new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", size=30)
            pdf.cell(0, 20, "K", new_x="LMARGIN", new_y="NEXT")  # a one-letter logo set larger names nothing
        pdf.set_font("Helvetica", size=11)
        for _ in range(3):
            pdf.multi_cell(0, 6, "An electric kettle heats water with a coiled element in its base. It switches itself off when the water boils.", new_x="LMARGIN", new_y="NEXT")
        path = tmp_path / name
        pdf.output(str(path))
        return path

    assert read(made("titled.pdf", True)).title == "Kettle Maker: the Boiling Manual"
    assert read(made("plain.pdf", False)).title != "An electric kettle heats water with a coiled element in its base."  # control: body text is no title


def test_a_pdf_line_that_opens_with_a_dash_goes_on_with_the_sentence_unless_a_list_is_begun(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    lines = ["The script option names a command to be executed when a fit is interrupted",
             "- see the fit command. This setting takes precedence over the default.",
             "",
             "The kettle has three settings:",
             "- a low setting for keeping water warm,",
             "- a high setting for boiling water quickly."]
    for line in lines:
        pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "dashes.pdf"
    pdf.output(str(path))
    text = "\n".join(block.text for page in read(path).pages for block in page.blocks)
    assert "when a fit is interrupted - see the fit command." in text and "- see the fit command." not in text.splitlines()  # one sentence, not an item
    assert "- a low setting for keeping water warm," in text.splitlines() and "- a high setting for boiling water quickly." in text.splitlines()  # control


def test_a_pdf_run_in_label_is_a_line_of_its_own_not_part_of_the_sentence_after_it(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for label, rest in [("GENERATE_XML", " If the GENERATE_XML tag is set to YES, the tool writes an XML file."),
                        ("Warning:", " Large class hierarchies make the graphs slow to draw."),
                        ("Never", " use this switch on a production server."),  # control: a bold word that opens a sentence
                        ("1.", " Install the package before you run the tool.")]:  # control: a bold number is a list marker
        pdf.set_font("Helvetica", "B", 11)
        pdf.cell(pdf.get_string_width(label), 6, label)
        pdf.set_font("Helvetica", size=11)
        pdf.cell(0, 6, rest, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(12)  # each its own paragraph
    path = tmp_path / "labels.pdf"
    pdf.output(str(path))
    lines = "\n".join(block.text for page in read(path).pages for block in page.blocks).splitlines()
    assert "**GENERATE_XML**" in lines and "If the GENERATE_XML tag is set to YES, the tool writes an XML file." in lines
    assert "**Warning:**" in lines and "Large class hierarchies make the graphs slow to draw." in lines
    assert "Never use this switch on a production server." in lines  # control: the sentence stays whole
    assert not any(line.startswith("**1.") for line in lines)  # control


def _pdf_in_times(lines: list, *, stem_v: int, roman: str = "Times-Roman") -> bytes:
    """A PDF in the unembedded Times-Roman ("R", or the name ``roman``) and Times-Bold ("B"), each with a font
    descriptor whose stem width is ``stem_v``: a Ghostscript PDF's (a groff manual page) says 139 for both, and PDFium
    reads the roman face as weight 695. lines: (font, size, baseline from the page's top, text), at the left margin,
    or with (x, width) after them: set from x and stretched to that width, as justified text is; one page of them, or
    a list of pages."""
    def descriptor(name: str) -> bytes:
        return (f"<< /Type /FontDescriptor /FontName /{name} /Flags 34 /FontBBox [-168 -218 1000 898] /ItalicAngle 0 "
                f"/Ascent 683 /Descent -217 /CapHeight 662 /StemV {stem_v} >>").encode()

    def font(name: str, number: int) -> bytes:
        widths = " ".join(str(width(code)) for code in range(32, 127))
        return f"<< /Type /Font /Subtype /Type1 /BaseFont /{name} /FirstChar 32 /LastChar 126 /Widths [{widths}] /FontDescriptor {number} 0 R >>".encode()

    def width(code: int) -> int:
        return 250 if code == 32 else 722 if chr(code).isupper() else 500 if chr(code).isalnum() else 333  # not all alike: a fixed pitch

    def shown(face: str, size: float, top: float, text: str, x: float = 72, full: float | None = None) -> str:
        scale = f"{100 * full / (sum(map(width, text.encode('latin-1'))) * size / 1000):.2f} Tz " if full else ""  # stretched to end at x + full
        return f"BT /F{face} {size} Tf {scale}{x} {792 - top} Td ({text}) Tj ET\n"

    pages = lines if lines and isinstance(lines[0], list) else [lines]
    kids = " ".join(f"{7 + 2 * place} 0 R" for place in range(len(pages)))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
               font(roman, 5), font("Times-Bold", 6), descriptor(roman), descriptor("Times-Bold")]
    for place, page in enumerate(pages):
        content = "".join(shown(*line) for line in page).encode("latin-1")
        objects += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /FR 3 0 R /FB 4 0 R >> >> /Contents {8 + 2 * place} 0 R >>".encode(),
                    b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return bytes(out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))


def test_a_pdf_block_narrower_than_its_column_runs_full_to_its_own_edge(tmp_path):
    body = ["The kettle heats water with a coiled element in its base and switches itself",
            "off when the water boils, so that the pot never runs dry on the stove top. The",
            "lid opens with a button on the handle, and the filter lifts out to be rinsed."]
    notice = ["Permission is granted to copy and to modify this manual under the terms and",
              "conditions of its licence, with no invariant sections; a copy of it is",  # the edge is known from the second line on
              "in the section entitled Licence at the end of this manual."]
    lines = [("R", 10, 80 + 12 * place, line, 72, 468) for place, line in enumerate(body)]  # justified to the column's edge, x 540
    lines += [("R", 10, 130 + 12 * place, line, 100, 400) for place, line in enumerate(notice[:2])]  # a block indented on both sides, to x 500
    lines += [("R", 10, 154, notice[2], 100, None)]
    lines += [("R", 10, 180, "The base holds the cord, which winds around it for storage in a kitchen", 72, 468),
              ("R", 10, 192, "cupboard.", 72, None),
              ("R", 10, 204, "It also keeps the kettle level on the counter.", 72, None)]  # control: a line that ends short ends its paragraph
    path = tmp_path / "notice.pdf"
    path.write_bytes(_pdf_in_times(lines, stem_v=80))
    paragraphs = [block.text for page in read(path).pages for block in page.blocks]
    assert any("a copy of it is in the section entitled Licence at the end of this manual." in text for text in paragraphs)
    assert "It also keeps the kettle level on the counter." in paragraphs  # control


def test_a_pdf_heading_too_long_for_a_line_is_one_heading_and_a_chapter_numbered_as_its_page_is_kept(tmp_path):
    body = ["The kettle heats water with a coiled element in its base and switches itself",
            "off when the water boils, so that the pot never runs dry on the stove top. The",
            "lid opens with a button on the handle, and the filter lifts out to be rinsed."]

    def page(number: int, top: list) -> list:
        return [*top, *[("R", 10, 300 + 12 * place, line, 72, 468) for place, line in enumerate(body)], ("R", 10, 760, str(number))]

    pages = [page(1, [("B", 18, 80, "1 Kettles and Their Care")]),  # a chapter's title, numbered as its page is
             page(2, [("B", 14, 80, "Cleaning the Element and the Filter Mesh After Hard", 72, 468), ("B", 14, 97, "Water Use"),  # wraps
                      ("B", 14, 140, "Descaling"), ("B", 14, 157, "Vinegar and Citric Acid")]),  # control: two headings in a row
             page(3, [("R", 10, 60, "3 Kettles and Their Care")]),  # control: a running head at the body's size holds the page number
             page(4, [])]
    path = tmp_path / "kettles.pdf"
    path.write_bytes(_pdf_in_times(pages, stem_v=80))
    extraction = read(path)
    headings = [line.lstrip("# ") for page in extraction.pages for line in page.text.splitlines() if line.startswith("#")]
    assert "1 Kettles and Their Care" in headings
    assert "Cleaning the Element and the Filter Mesh After Hard Water Use" in headings
    assert "Descaling" in headings and "Vinegar and Citric Acid" in headings  # control
    assert "3 Kettles and Their Care" not in " ".join(page.text for page in extraction.pages)  # control


@pytest.mark.parametrize(("stem_v", "roman"), [(139, "Times-Roman"), (80, "Times-Roman"), (139, "BodyFace")])  # a wrong stem width, a right one, a name that says no weight
def test_a_pdf_roman_face_that_reads_as_heavy_sets_no_headings_and_a_lone_glyph_is_none(tmp_path, stem_v, roman):
    body = ["The kettle heats water with a coiled element in its base and switches",
            "itself off when the water boils, so that the pot never runs dry. The",
            "lid opens with a button on the handle, and the filter lifts out to be",
            "rinsed under the tap when scale has built up on its fine mesh over",
            "the months of use in a house with hard water from the mains supply."]
    lines = [("B", 10.9, 60, "DESCRIPTION")]
    lines += [("R", 10, 74 + 12 * place, line) for place, line in enumerate(body)]
    lines += [("R", 10, 150, "It takes the following settings"), ("R", 10, 162, "when it is switched on:"),  # short roman lines
              ("R", 14, 190, "^"),  # a glyph set larger (groff's circumflex), alone on its line
              ("R", 14, 215, "Cleaning the Kettle")]  # control: a larger line with words
    lines += [("R", 10, 230 + 12 * place, line) for place, line in enumerate(body)]
    path = tmp_path / "kettle.pdf"
    path.write_bytes(_pdf_in_times(lines, stem_v=stem_v, roman=roman))
    extraction = read(path)
    text = "\n".join(block.text for page in extraction.pages for block in page.blocks)
    headings = {line.lstrip("# ") for line in text.splitlines() if line.startswith("#")}
    assert "Cleaning the Kettle" in headings  # control: a larger size still marks a heading
    assert ("DESCRIPTION" in headings) is (roman == "Times-Roman")  # control: so does bold, where the body is not bold too
    assert "when it is switched on:" not in headings and "It takes the following settings" not in headings
    assert "^" not in headings and extraction.title != "^"


def test_a_pdf_term_in_a_fixed_pitch_font_set_apart_by_a_wide_gap_is_a_label(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for term, width, rest, after in [("-o", 20, "Restricts the values of the names to those that the set builtin defines for its own options and the", 0),  # a table of
                                     ("-u", 20, "Reads lines from the file descriptor instead of the standard input.", 12),  # terms, rows close
                                     ("printf", None, "Prints its arguments under the control of a format.", 12)]:  # control: one space
        pdf.set_font("Courier", size=11)
        pdf.cell(width or pdf.get_string_width(term + " "), 6, term)
        pdf.set_font("Helvetica", size=11)
        pdf.cell(0, 6, rest, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(after)
    path = tmp_path / "terms.pdf"
    pdf.output(str(path))
    lines = "\n".join(block.text for page in read(path).pages for block in page.blocks).splitlines()
    assert "**-o**" in lines and "**-u**" in lines  # each row its own item, though nothing but the term's gap parts them
    assert "Reads lines from the file descriptor instead of the standard input." in lines
    assert "`printf` Prints its arguments under the control of a format." in lines  # control: code that opens a sentence


def test_a_pdf_line_broken_at_a_raised_footnote_mark_stays_one_line_of_its_paragraph(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.cell(0, 6, "The set of characters a label may hold depends on the terminal in use and on the", new_x="LMARGIN", new_y="NEXT")
    opening = "font. Usually all printable letters are accepted"
    pdf.cell(pdf.get_string_width(opening), 6, opening)
    pdf.char_vpos = "SUP"  # the PDF's text breaks the line here: the rest is a line of its own, starting mid-line
    pdf.cell(pdf.get_string_width("1"), 6, "1")
    pdf.char_vpos = "LINE"
    pdf.cell(0, 6, " (and with some fonts this covers accented letters) plus", new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 6, "the hyphen and the full stop. That ends it.", new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 6, "A second paragraph opens on the next line.", new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "footnote.pdf"
    pdf.output(str(path))
    blocks = [block.text for page in read(path).pages for block in page.blocks]
    assert any("letters are accepted1 (and with some fonts this covers accented letters) plus the hyphen" in block for block in blocks)
    assert blocks[-1] == "A second paragraph opens on the next line."  # control: a line ended early still ends its paragraph


def test_a_pdf_word_hyphenated_at_a_line_end_is_joined_and_its_paragraph_stays_whole(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for line in ["A shell is a macro processor that runs the commands you type at its prompt, one after",
                 "the other. The term macro processor means functionality where text and sym-",  # PDFium reads this line
                 "bols are expanded to create larger expressions, which the shell then reads.",  # and this one as one
                 "", "A second paragraph opens after the gap."]:
        pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "hyphen.pdf"
    pdf.output(str(path))
    blocks = [block.text for page in read(path).pages for block in page.blocks]
    assert blocks[0] == ("A shell is a macro processor that runs the commands you type at its prompt, one after the other. The term macro "
                         "processor means functionality where text and symbols are expanded to create larger expressions, which the shell then reads.")
    assert blocks[-1] == "A second paragraph opens after the gap."  # control: a wider gap still ends a paragraph


def _two_column_page(pdf, columns: list[list[tuple[str, bool]]], *, offset: float) -> None:
    """Lines set justified in two columns of 85 mm (a line marked False ends its paragraph, set short); the right
    column's baselines ``offset`` mm below the left's, as a paper's columns often stand."""
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    for column, (x, top) in zip(columns, [(10, 20), (110, 20 + offset)]):
        pdf.set_xy(x, top)
        for text, full in column:
            pdf.set_stretching(100)
            pdf.set_stretching(85 / pdf.get_string_width(text) * 100 if full else 100)  # widened to the column's edge
            pdf.set_x(x)
            pdf.cell(85, 5, text, new_x="LEFT", new_y="NEXT")
        pdf.set_stretching(100)


def test_a_pdf_page_in_two_columns_is_read_column_by_column_with_each_column_s_paragraphs_whole(tmp_path):
    from fpdf import FPDF

    left = [("The kettle heats water with a coil that sits", True), ("in its base, and it switches itself off when", True),
            ("the water boils.", False), ("A second paragraph of the left column says", True),
            ("that the lid opens with a button, and that", True), ("the handle stays cool while the water", True)]
    right = [("heats, so the kettle can be carried at once.", False), ("The right column's own paragraph says that", True),
             ("limescale builds up where the water is hard", True), ("and is taken off with vinegar.", False)]
    pdf = FPDF()
    _two_column_page(pdf, [left, right], offset=1.3)
    path = tmp_path / "columns.pdf"
    pdf.output(str(path))
    blocks = [block.text for page in read(path).pages for block in page.blocks]
    assert blocks == [
        "The kettle heats water with a coil that sits in its base, and it switches itself off when the water boils.",
        # a paragraph that runs full to the column's foot, mid-sentence, goes on at the next column's head
        "A second paragraph of the left column says that the lid opens with a button, and that the handle stays cool while "
        "the water heats, so the kettle can be carried at once.",
        "The right column's own paragraph says that limescale builds up where the water is hard and is taken off with vinegar.",
    ]


def test_a_pdf_paragraph_cut_by_a_page_break_is_one_paragraph_on_the_page_it_starts(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for lines in [["At the end of a fit the command reports the standard deviation of the"],
                  ["residuals, which it also writes to the log file.", "", "Each fit appends to that file."],
                  ["the log file is never emptied by the program itself."]]:  # control: the page before ends a sentence
        pdf.add_page()
        for line in lines:
            pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "pages.pdf"
    pdf.output(str(path))
    pages = [[block.text for block in page.blocks] for page in read(path).pages]
    assert pages[0] == ["At the end of a fit the command reports the standard deviation of the residuals, which it also writes to the log file."]
    assert pages[1] == ["Each fit appends to that file."]
    assert pages[2] == ["the log file is never emptied by the program itself."]


def _pdf_scaled_by_its_text_matrix(lines: list[tuple[int, int, str]], *, font: bytes = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>") -> bytes:
    """A one-page PDF whose text is set as some writers set it: every font at size 1, scaled by the text matrix.
    lines: (size, baseline, text), the text as a PDF string's contents."""
    stream = "".join(f"BT /F1 1 Tf {size} 0 0 {size} 72 {y} Tm ({text}) Tj ET\n" for size, y, text in lines).encode("latin-1")
    return _pdf_of_objects([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
                            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream", font])


def test_a_pdf_whose_fonts_are_set_at_size_1_and_scaled_reads_as_printed(tmp_path):
    path = tmp_path / "scaled.pdf"
    path.write_bytes(_pdf_scaled_by_its_text_matrix([
        (16, 720, "Cleaning the kettle"),
        (10, 670, "Limescale builds up inside a kettle wherever the water is hard, and it"),
        (10, 658, "is taken off by boiling a mixture of water and vinegar in it for an hour,"),
        (10, 646, "then by pouring the mixture out while it is still warm from the boiling."),
        (10, 618, "Rinse the kettle twice before you use it again.")]))
    blocks = [block.text for page in read(path).pages for block in page.blocks]
    assert blocks == ["# Cleaning the kettle",  # set larger: a heading
                      "Limescale builds up inside a kettle wherever the water is hard, and it is taken off by boiling a mixture of "
                      "water and vinegar in it for an hour, then by pouring the mixture out while it is still warm from the boiling.",  # one paragraph, not a line each
                      "Rinse the kettle twice before you use it again."]  # control: a wider gap still parts paragraphs


def test_a_pdf_bullet_whose_glyph_maps_to_no_character_still_makes_a_list_item(tmp_path):
    # A symbol font's bullet with no Unicode mapping: PDFium gives its code, 0x88, as LaTeX's bullet often comes out.
    unmapped = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding /Differences [136 /g136] >> >>"
    path = tmp_path / "bullets.pdf"
    path.write_bytes(_pdf_scaled_by_its_text_matrix([
        (10, 700, "The kettle has two settings:"),
        (10, 680, "\\210 a low one keeps the water warm;"),
        (10, 660, "\\210 a high one boils it quickly."),
        (10, 600, "\\210a"),  # control: a code with no space after it starts no item
    ], font=unmapped))
    blocks = [block.text for page in read(path).pages for block in page.blocks]
    assert blocks == ["The kettle has two settings:", "- a low one keeps the water warm;", "- a high one boils it quickly.", "\x88a"]


def _pdf_of_objects(objects: list[bytes]) -> bytes:
    """A PDF of these objects, numbered from 1 (the first the catalog), with its cross-reference table."""
    data, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(data))
        data += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(data)
    data += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return data + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_a_pdf_with_a_damaged_page_keeps_the_others_and_says_so(tmp_path):
    stream = b"BT /F1 11 Tf 72 700 Td (The kettle switches itself off when the water boils.) Tj ET"
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
    common = [b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    one_damaged, all_damaged = tmp_path / "one.pdf", tmp_path / "all.pdf"
    one_damaged.write_bytes(_pdf_of_objects([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>", page,
                                             *common, b"(not a page)"]))
    all_damaged.write_bytes(_pdf_of_objects([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [6 0 R] /Count 1 >>", page,
                                             *common, b"(not a page)"]))
    document = read(one_damaged)
    assert document.pages[0].text == "The kettle switches itself off when the water boils."
    assert any("1 damaged page(s)" in note and "(2)" in note for note in document.notes)
    with pytest.raises(IngestError, match="damaged PDF") as caught:
        read(all_damaged)
    assert "all.pdf" in str(caught.value) and "Re-export" in str(caught.value)


def test_a_two_page_pdf_loses_its_running_head_and_foot(tmp_path):
    from fpdf import FPDF

    def made(name: str, heads: list[str]) -> Path:
        pdf = FPDF()
        pdf.set_auto_page_break(False)  # the foot is set in the bottom margin
        pdf.set_font("Helvetica", size=11)
        for number, head in enumerate(heads, start=1):
            pdf.add_page()
            pdf.cell(0, 6, head, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(10)
            for _ in range(3):
                pdf.multi_cell(0, 6, "An electric kettle heats water with a coiled element in its base. It switches itself off when the water boils.",
                               new_x="LMARGIN", new_y="NEXT")
            pdf.set_y(-20)
            pdf.cell(0, 6, f"Service note, page {number}")
        path = tmp_path / name
        pdf.output(str(path))
        return path

    two = read(made("two.pdf", ["Kettle Maker: service note 12", "Kettle Maker: service note 12"]))
    text = "\n".join(page.text for page in two.pages)
    assert "Kettle Maker: service note 12" not in text and "Service note, page" not in text
    assert sorted(item.reason for item in two.dropped) == ["running head or foot"] * 4
    one = read(made("one.pdf", ["Kettle Maker: service note 12"]))  # control: one page, nothing recurs
    assert "Kettle Maker: service note 12" in one.pages[0].text and "Service note, page 1" in one.pages[0].text


def test_a_pdf_ellipsis_in_a_sentence_stays_and_a_contents_line_goes(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for line in ["The positional parameters are renamed $1, $2, . . . $N when the shell shifts them.", "",
                 "Installing the kettle . . . . . . . . . . . . . . 12", "",
                 "Cleaning . . . 14"]:
        pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "dots.pdf"
    pdf.output(str(path))
    document = read(path)
    text = "\n".join(block.text for page in document.pages for block in page.blocks)
    assert "The positional parameters are renamed $1, $2, . . . $N when the shell shifts them." in text
    assert "Installing the kettle" not in text and "Cleaning" not in text  # contents lines, with four dots or a page number
    assert sum(item.reason == "contents" for item in document.dropped) == 2


def test_html_a_contents_list_goes_however_much_of_a_short_page_it_is():
    from llmwiki.ingest.html import html_content

    entries = "".join(f'<dt><a href="ch7-{n}.html">7.{n}. Section {n} of the chapter</a></dt>' for n in range(1, 9))
    chapter = f"""<html><body><h2>Chapter 7. Queries</h2>
    <div class="toc"><p><b>Table of Contents</b></p><dl class="toc">{entries}</dl></div>
    <p>The previous chapters explained how to create tables. Now we discuss how to retrieve the data.</p></body></html>"""
    content = html_content(chapter)
    assert "Section 3 of the chapter" not in content.markdown and "Table of Contents" not in content.markdown
    assert "Now we discuss how to retrieve the data." in content.markdown
    assert any(item.reason == "navigation" and "Section 1" in item.text for item in content.dropped)
    # Control: a part named like chrome that is mostly prose and most of the page stays (it may be the content).
    prose = "<p>" + " ".join(f"Sentence {n} of the overview says something." for n in range(12)) + ' See <a href="a.html">a</a>.</p>'
    kept = html_content(f'<html><body><h2>Overview</h2><div class="toc">{prose}</div><p>One more line.</p></body></html>')
    assert "Sentence 7 of the overview says something." in kept.markdown


def test_html_a_page_that_only_redirects_is_skipped_as_no_document():
    # A documentation site leaves a stub at each moved page's old address (rustdoc, texinfo); the page it points to
    # holds the content. Controls: a page that only reloads itself, and one with text of its own, are documents.
    from llmwiki.errors import NotADocument

    stub = ('<html><head><meta http-equiv="refresh" content="0;URL=../../kettle/struct.Lid.html"><title>Redirection</title></head>'
            '<body><p>Redirecting to <a href="../../kettle/struct.Lid.html">../../kettle/struct.Lid.html</a>...</p></body></html>')
    with pytest.raises(NotADocument, match=r"redirects to \.\./\.\./kettle/struct\.Lid\.html"):
        extract(stub.encode(), Path("kettle/lid/struct.Lid.html"))
    quoted = "<html><head><meta http-equiv='Refresh' content=\"2; url='Lids.html#Lid'\"></head><body><p>The node you are looking for is at Lids.</p></body></html>"
    with pytest.raises(NotADocument, match="redirects to Lids.html#Lid"):
        extract(quoted.encode(), Path("Lid.html"))
    reloads = '<html><head><meta http-equiv="refresh" content="30"></head><body><p>The kettle boils a litre of water in three minutes.</p></body></html>'
    assert "The kettle boils a litre of water" in " ".join(blocks_by_text(extract(reloads.encode(), Path("status.html"))))
    prose = " ".join(f"Step {n} of descaling the kettle takes a few minutes with vinegar." for n in range(8))
    moved = f'<html><head><meta http-equiv="refresh" content="10;url=new.html"></head><body><p>This page moves soon.</p><p>{prose}</p></body></html>'
    assert "Step 7 of descaling" in " ".join(blocks_by_text(extract(moved.encode(), Path("old.html"))))


def test_pdf_text_puts_accents_set_apart_on_their_letters_and_reads_groffs_signs_as_ascii():
    from llmwiki.ingest.pdf import _clean

    assert _clean("Hans-Bernhard Br¨oker, Timoth´ee Lecomte, J´erˆome Lodewyck, Petr Mikul´ık") == (
        "Hans-Bernhard Bröker, Timothée Lecomte, Jérôme Lodewyck, Petr Mikulík")
    assert _clean("reads ˜/.bashrc; ˆC interrupts; the −−norc option, −i") == "reads ~/.bashrc; ^C interrupts; the --norc option, -i"
    assert _clean("Bröker reads ~/.bashrc with --norc") == "Bröker reads ~/.bashrc with --norc"  # control: text already right stays
    assert _clean("a ˆ b") == "a ^ b" and _clean("ˆˆ") == "^^"  # control: a lone hat is groff's "^"; "ˆC" is no Ĉ


def test_a_pdf_running_head_that_names_a_short_section_is_left_out(tmp_path):
    body = ["off when the water boils, so that the pot never runs dry on the stove top. The",
            "lid opens with a button on the handle, and the filter lifts out to be rinsed."]
    openings = ["Hard water leaves scale on the element of every kettle sooner or later, and it",  # each page's own first line:
                "Vinegar dissolves the scale overnight, and a rinse in the morning clears it,",  # none recurs as a running head
                "Citric acid works faster than vinegar and leaves no smell in the water, and",
                "Rinse the kettle twice and boil a full pot once before you drink from it, or"]
    tops = [[("B", 16, 80, "Descaling the Kettle"), ("B", 16, 200, "Filters and Lids")],
            [("R", 10, 50, "Descaling the Kettle", 420)],  # DocBook's head at the top right: the section's title
            [("R", 10, 50, "Made in Kettleton", 420)],  # control: a line there that is no heading's title
            [("R", 10, 50, "Filters and Lids")]]  # control: a heading's title at the margin, the text's own
    pages = [[*top, *[("R", 10, 120 + 12 * place, line, 72, 468) for place, line in enumerate([opening, *body])]]
             for top, opening in zip(tops, openings)]
    path = tmp_path / "heads.pdf"
    path.write_bytes(_pdf_in_times(pages, stem_v=80))
    texts = [page.text for page in read(path).pages]
    assert "Descaling the Kettle" not in texts[1] and "Vinegar dissolves" in texts[1]
    assert "Made in Kettleton" in texts[2] and "Filters and Lids" in texts[3]  # controls


_BOOK_BAR = '<div id="menu-bar"><h1 class="menu-title">The Kettle Book</h1></div>'
_CHAPTER = ("<p>Ownership is a set of rules that governs how a program manages memory.</p>"
            "<p>Every value has one owner at a time, and the value is dropped when its owner goes out of scope.</p>")


@pytest.mark.parametrize(("page_title", "body", "expected"), [
    # the chapter, not the book's name in the bar above it: its heading an <h2> of the main content, or a second <h1>
    ("What Is Ownership? - The Kettle Book", f"{_BOOK_BAR}<main><h2>What Is Ownership?</h2>{_CHAPTER}</main>", "What Is Ownership?"),
    ("Understanding Ownership - The Kettle Book", f"{_BOOK_BAR}<div><h1>Understanding Ownership</h1>{_CHAPTER}</div>", "Understanding Ownership"),
    ("The Kettle Book", f"{_BOOK_BAR}<main><h2>What Is Ownership?</h2>{_CHAPTER}</main>", "The Kettle Book"),  # control: the <title> names the book only
    ("Kettles: About This Manual", f"{_BOOK_BAR}<main><h1>About This Manual</h1>{_CHAPTER}</main>", "About This Manual"),  # control: site name first
    # the site's name as the <h1> of a header above the page's own <h2>
    ("Descaling | Kettle v2 Documentation", f"<header><h1>Kettle v2 documentation</h1></header><div><h2>Descaling</h2>{_CHAPTER}</div>", "Descaling"),
    # a first section that says again part of the chapter's heading
    ("Kettles -- Descaling and Filters", f"<main><h1>2 Descaling and Filters</h1><h2>2.1 Descaling</h2>{_CHAPTER}</main>", "2 Descaling and Filters"),
    # a section's heading that holds the <title> and more, after the prose begins: the <title> names the page
    ("DESCALING", f"<main><h1>1. Overview</h1>{_CHAPTER}<h1>2. Descaling with vinegar</h1>{_CHAPTER}</main>", "DESCALING"),
    ("Descaling", f"<main><h1>1. Overview</h1>{_CHAPTER}<h1>2. Descaling</h1>{_CHAPTER}</main>", "2. Descaling"),  # control: held whole
    # the library's name in a navigation bar is no heading of the page
    ("Kettles – 4.0: Overview of descaling", f"<nav><h3>Kettles</h3></nav><div><h2>Basics</h2>{_CHAPTER}</div>", "Kettles – 4.0: Overview of descaling"),
    ("Kettles – 4.0: Overview of descaling", f"<div><h3>Kettles</h3></div><div><h2>Basics</h2>{_CHAPTER}</div>", "Kettles"),  # control: a bar that is no <nav>
])
def test_an_html_title_is_the_contents_heading_the_title_names_not_a_bar_above_it(page_title, body, expected):
    from llmwiki.ingest.html import html_content

    assert html_content(f"<html><head><title>{page_title}</title></head><body>{body}</body></html>").title == expected


def test_an_html_page_without_a_title_is_titled_by_its_first_heading():
    from llmwiki.ingest.html import html_content

    sections = f"<main><h1>Understanding Ownership</h1>{_CHAPTER}<h1>References and Borrowing</h1>{_CHAPTER}</main>"
    assert html_content(f"<html><body>{sections}</body></html>").title == "Understanding Ownership"
    assert html_content(f"<html><head><title>References and Borrowing - The Kettle Book</title></head><body>{sections}</body></html>"
                        ).title == "References and Borrowing"  # control: where a <title> names one, it decides


def test_a_pdf_note_mark_after_a_sentence_goes_and_an_exponent_stays(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)

    def raised(text: str, mark: str, rest: str) -> None:
        pdf.cell(pdf.get_string_width(text), 6, text)
        pdf.char_vpos = "SUP"  # set smaller and raised, as a note mark or an exponent is
        pdf.cell(pdf.get_string_width(mark), 6, mark)
        pdf.char_vpos = "LINE"
        pdf.cell(0, 6, rest, new_x="LMARGIN", new_y="NEXT")

    raised("The kettle must be descaled every month in hard water areas.", "12", " Descaling takes twenty minutes.")
    raised("It keeps the water warm for an hour,", "3", " after which it switches itself off.")
    pdf.ln(6)
    raised("The heating time grows with (T - t)", "2", " and with the mass of x")
    pdf.cell(0, 6, "of water; the library is libz.so.1 in the package.", new_x="LMARGIN", new_y="NEXT")
    path = tmp_path / "notes.pdf"
    pdf.output(str(path))
    document = read(path)
    text = " ".join(block.text for page in document.pages for block in page.blocks)
    assert "hard water areas. Descaling takes twenty minutes." in text  # the mark goes: two whole sentences
    assert "warm for an hour, after which it switches itself off." in text
    assert "(T - t)2 and" in text and "libz.so.1 in the package" in text  # control: an exponent, a version number stay
    assert sorted(item.text for item in document.dropped if item.reason == "footnote mark") == ["12", "3"]


def test_a_pdf_code_span_broken_at_a_line_end_goes_on_in_one_span(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()

    def width(runs) -> float:
        total = 0.0
        for font, text in runs:
            pdf.set_font(font, size=11)
            total += pdf.get_string_width(text)
        return total

    def line(*runs: tuple[str, str], full: bool = True) -> None:
        # a justified line: its last run set flush with the right margin, as a full line of a paragraph ends
        for index, (font, text) in enumerate(runs):
            if full and index == len(runs) - 1:
                pdf.set_x(pdf.w - pdf.r_margin - width([(font, text)]))
            pdf.set_font(font, size=11)
            pdf.cell(pdf.get_string_width(text), 6, text)
        pdf.ln(6)

    line(("Helvetica", "Programs that the local administrator installs go into the directory"), ("Courier", "/usr/"))
    line(("Courier", "local/bin"), ("Helvetica", " and nowhere else, whatever the package manager does with the"), ("Helvetica", "files."))
    line(("Helvetica", "The build reads its instructions from a file that is always named"), ("Courier", "SCon-"))
    line(("Courier", "struct"), ("Helvetica", " in the top directory, and every build starts from the same"), ("Helvetica", "place."))
    line(("Helvetica", "Text killed before is put back by the editor command that is named"), ("Courier", "yank-"))
    line(("Courier", "pop"), ("Helvetica", " in the manual, and it cycles through the kill ring one entry."), full=False)
    pdf.ln(6)
    line(("Helvetica", "Every project keeps the instructions for its build in the "), ("Courier", "SConstruct"), ("Helvetica", " file at the top."), full=False)
    path = tmp_path / "code.pdf"
    pdf.output(str(path))
    text = " ".join(block.text for page in read(path).pages for block in page.blocks)
    assert "`/usr/local/bin` and nowhere else" in text  # a path broken after its "/"
    assert "named `SConstruct` in the top directory" in text  # the typesetter's hyphen: the document writes it whole
    assert "named `yank-pop` in the manual" in text  # control: a name with its own hyphen keeps it


def test_a_page_header_that_holds_only_the_sites_name_is_left_out_with_its_menus():
    from llmwiki.ingest.html import html_content

    header = ("<header><h1>Kettle v2 documentation</h1><ul><li><a href='#toc'>Table of contents</a></li>"
              "<li><a href='all.html'>Index</a></li><li><a href='v1.html'>Other versions</a></li></ul></header>")
    page = html_content(f"<html><head><title>Descaling | Kettle v2 Documentation</title></head><body><div>{header}"
                        f"<h2>Descaling</h2>{_CHAPTER}</div></body></html>")
    assert page.title == "Descaling" and "## Descaling" in page.markdown and "Every value has one owner" in page.markdown
    assert "Kettle v2 documentation" not in page.markdown and "Other versions" not in page.markdown
    assert any(item.reason == "the site's name" for item in page.dropped)
    # control: a header whose heading is the page's own title stays
    own = html_content(f"<html><head><title>Kettle.Descaler</title></head><body><div><header><h1>Kettle Descaler</h1></header>"
                       f"{_CHAPTER}</div></body></html>")
    assert own.title == "Kettle Descaler" and "# Kettle Descaler" in own.markdown


def test_a_heading_said_twice_running_is_one_and_a_heading_said_again_later_stays():
    from llmwiki.ingest.extract import _PageBuilder, markdown_blocks

    builder = _PageBuilder()
    markdown_blocks("# DNS\n\n# DNS\n\nThe dns module enables name resolution.\n\n## Lookups\n\nText.\n\n## Lookups\n\nMore text.\n", builder)
    text = builder.page(1).text
    assert text.count("# DNS") == 1 and "The dns module enables name resolution." in text
    assert text.count("## Lookups") == 2  # control: the same heading after text between is a section of its own
