"""llmwiki.text: the tokenizer, the stemmers, and each closed word class defined once."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO
from llmwiki import text

PACKAGE = REPO / "llmwiki"
# The classes whose spelling-out elsewhere is caught. STOPWORDS is left out: any list of function words for
# another purpose shares many of them (generation's words that name no concept, a parser's leading words).
CLASSES = {name: frozenset(getattr(text, name)) for name in (
    "SUBJECT_PRONOUNS", "POSSESSIVE_PRONOUNS", "PERSONAL_PRONOUNS", "DEMONSTRATIVES", "REFERRING_WORDS", "DETERMINERS",
    "AUXILIARIES", "NEGATIONS", "QUANTIFIERS", "MONTHS", "WEEKDAYS")}
CLASSES["GENDER"] = frozenset(text.GENDER)


def word_groups(source: str) -> list[tuple[int, frozenset[str]]]:
    """(line, words) of every literal collection of strings, every "a b c".split(), and every regular
    expression's alternation in a module's source (docstrings left out)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    groups = []
    for node in ast.walk(tree):
        elements = None
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            elements = node.elts
        elif isinstance(node, ast.Dict):
            elements = [key for key in node.keys if key is not None]
        if elements and all(isinstance(element, ast.Constant) and isinstance(element.value, str) for element in elements):
            groups.append((node.lineno, frozenset(element.value.lower() for element in elements)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split"
              and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
            groups.append((node.lineno, frozenset(node.func.value.value.lower().split())))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "|" in node.value and id(node) not in docstrings:
            for alternatives in re.findall(r"\(([^()]*\|[^()]*)\)", node.value):
                groups.append((node.lineno, frozenset(part.strip().lower() for part in alternatives.lstrip("?:").split("|"))))
    return groups


def redefinitions(source: str) -> list[str]:
    """Where a source spells out one of text's classes again: most of a group's words from one class."""
    found = []
    for line, group in word_groups(source):
        for name, members in CLASSES.items():
            shared = group & members
            if len(shared) >= min(4, len(members)) and len(shared) >= 0.6 * len(group):
                found.append(f"line {line}: {name} ({', '.join(sorted(shared))})")
    return found


def test_the_check_finds_a_word_class_spelled_out_again_and_passes_other_lists():
    assert redefinitions('PRONOUNS = frozenset({"he", "she", "it", "they", "him"})\n')
    assert redefinitions('AUX = re.compile(r"\\b(is|was|are|were|has)\\b")\n')
    assert redefinitions('MONTHS = "January February March April May June".split()\n')
    assert redefinitions('GENDERS = {"he": "m", "him": "m", "she": "f", "her": "f"}\n')
    # controls: a list of other words, a list that shares a few function words, a docstring that mentions pronouns
    assert redefinitions('UNITS = {"two": 2, "three": 3, "four": 4}\n') == []
    assert redefinitions('LEADING = frozenset({"the", "these", "some", "most", "many", "several", "both", "other", "certain"})\n') == []
    assert redefinitions('def f():\n    """(he|she|it|they|his|her)"""\n') == []


def test_no_module_defines_a_word_class_of_text_a_second_time():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "text" in path.parents:
            continue
        problems = redefinitions(path.read_text(encoding="utf-8"))
        if problems:
            found[path.relative_to(REPO).as_posix()] = problems
    assert found == {}, "import these from llmwiki.text instead"


def test_tokens_keep_numbers_and_read_contractions():
    assert text.tokens("He didn't sell 1,200 of Volta's ships in 1911.") == ["He", "did", "not", "sell", "1,200", "of", "Volta", "ships", "in", "1911"]
    # Penn Treebank text sets the possessive apart ("Otter 's Ransom"); it reads as the joined form does, with no stray "s"
    assert text.tokens("the myth of Otter 's Ransom") == text.tokens("the myth of Otter's Ransom") == ["the", "myth", "of", "Otter", "Ransom"]
    assert text.tokens("the letter 's' is") == ["the", "letter", "s", "is"]  # control: a quoted letter after a space stays a word


def test_the_two_stemmers_differ_where_they_should():
    assert text.stem("died") == text.stem("die")  # Porter2: a claim's "died" meets its evidence's "die"
    assert text.search_stems(["died", "die"]) == ["di", "die"]  # Porter, as DuckDB's FTS stems the index: kept apart


def test_classes_are_built_from_each_other():
    assert text.PERSONAL_PRONOUNS == text.SUBJECT_PRONOUNS | text.OBJECT_PRONOUNS | text.POSSESSIVE_PRONOUNS
    assert text.PERSONAL_OPENERS == {"he", "she", "his", "her"}
    assert text.OPENING_PRONOUNS["his"] == "'s" and text.OPENING_PRONOUNS["he"] == "" and "him" not in text.OPENING_PRONOUNS
    assert set(text.GENDER_SWAPS) <= set(text.GENDER) and all(text.GENDER[a] != text.GENDER[b] for a, b in text.GENDER_SWAPS.items())
    assert re.fullmatch(text.alternation({"the", "these"}), "these") and not re.fullmatch(text.alternation({"the", "these"}), "th")
    assert re.fullmatch(text.YEAR, "1911") and re.fullmatch(text.YEAR, "2024") and not re.fullmatch(text.YEAR, "3011")


def test_mention_counts_in_one_pass_agree_with_the_pattern_for_every_name():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from llmwiki.text.terms import mention_counts, mention_pattern

    pieces = ["os", "path", "join", "set", "logscale", "x", "file", "files", "_init_", "-o", ".", "()", " ", " ", ", ", "-", "__"]
    texts = st.lists(st.sampled_from(pieces), max_size=40).map("".join)
    names = st.lists(st.lists(st.sampled_from(pieces[:12]), min_size=1, max_size=4).map("".join).filter(lambda name: name.strip() == name and name.strip()), min_size=1, max_size=6)

    @settings(max_examples=300, deadline=None)
    @given(texts, names)
    def agree(text, candidates):
        counts = mention_counts(candidates, text)
        for name in candidates:
            # every place the pattern matches, overlapping ones too ("x x" twice in "x x x")
            everywhere = re.findall(rf"(?={mention_pattern(name).pattern})", text)
            assert counts[name] == len(everywhere)

    agree()
    text = "the os.path module; os.path.join() and os.path are used. set logscale x; unset logscale -o x__init__"
    names = ["os.path", "os.path.join()", "set logscale", "logscale", "-o", "__init__", "module", "absent"]
    assert mention_counts(names, text) == {name: len(mention_pattern(name).findall(text)) for name in names} == {
        "os.path": 3, "os.path.join()": 1, "set logscale": 1, "logscale": 2, "-o": 1, "__init__": 0, "module": 1, "absent": 0}


def test_a_terms_singular_is_an_english_word_or_the_term_as_written():
    from llmwiki.models import english_words
    from llmwiki.text.terms import singular

    words = frozenset("alias bus case class dictionary method variable series species canvas handler".split())
    assert [singular(name, words) for name in ("Classes", "Dictionaries", "Static methods", "Environment Variables", "Cases", "Aliases", "Buses")] == [
        "Class", "Dictionary", "Static method", "Environment Variable", "Case", "Alias", "Bus"]
    assert [singular(name, words) for name in ("Series", "Species", "Canvas")] == ["Series", "Species", "Canvas"]  # no "Sery", "Canva"
    assert singular("kwargs", words) == "kwarg" and singular("Handlers", frozenset()) == "Handler"  # a name no list holds loses its "s"
    assert singular("Series", frozenset()) == "Sery"  # control: without a word list, the regular rule alone
    assert singular("Series", english_words()) == "Series" and singular("Aliases", english_words()) == "Alias"  # the shipped word list


def test_a_heading_term_is_titled_in_the_singular_only_where_that_is_a_word():
    from llmwiki.text.terms import candidate_terms

    text = "## Series\n\nA *Series* is a labelled array. Each Series holds one column.\n\n## Data frames\n\nData frames hold Series."
    words = frozenset("series data frame frames array column".split())
    assert {term.name: term.mentions for term in candidate_terms([text], common_words=words)}.get("Series") == 3  # not "Sery"
    # control: without a word list the regular rule alone names it "Sery", which no sentence mentions, so it is lost
    assert not {term.name for term in candidate_terms([text])} & {"Series", "Sery"}


def test_a_name_with_underscores_is_a_term_and_no_emphasis():
    from llmwiki.text.terms import candidate_terms, unmarked

    assert unmarked("the `__init__()` method, _stress_ and **bold**, read_csv") == "the __init__() method, stress and bold, read_csv"
    text = "Define `__init__()` first. The `__init__()` method runs once. A **bold term** twice: **bold term**."
    terms = {term.name: term.kinds for term in candidate_terms([text])}
    assert terms == {"__init__()": {"code"}, "bold term": {"definition"}}  # not "init", neither as bold nor as a mention


def test_a_placeholder_or_a_quoted_value_in_italics_is_read_as_the_word_inside():
    from llmwiki.text.terms import candidate_terms

    text = ("Show at least *<n>* digits, from *<start>* to the end. The value is *'true'* or *'false'*. Each *<pathspec>* limits "
            "the paths. A pathspec may hold wildcards; every pathspec is matched. Count *<n>* again from *<start>* on each line, *'true'* or not.")
    words = frozenset("n start end true false value paths digits".split())
    names = {term.name for term in candidate_terms([text], common_words=words)}
    assert not names & {"<n>", "<start>", "'true'", "n", "start", "true"}  # too short, or an ordinary word not defined
    assert "pathspec" in names  # control: a placeholder that names a term of the corpus is that term
    assert "pathspec" not in {term.name for term in candidate_terms([text.replace("*<pathspec>*", "each")], common_words=words)}  # control: marked nowhere else


def test_an_option_of_one_letter_is_no_term_however_it_is_marked():
    from llmwiki.text.terms import candidate_terms

    text = "Like *-C*, but the editor is invoked; *-C* reuses the message. The `--amend` flag rewrites; `--amend` again."
    names = {term.name for term in candidate_terms([text])}
    assert "-C" not in names and "--amend" in names  # the long option, a control, stays


def test_a_heading_most_documents_carry_is_the_corpus_template_not_a_concept():
    from llmwiki.generate import corpus_terms
    from llmwiki.ingest.extract import extract, extraction_report

    page = "# git-add\n\n## NAME\n\ngit-add - Add file contents to the index\n\n## Options\n\nThe `pathspec` limits the `pathspec` paths.\n"
    # what ingest stores: "Options" is furniture by itself
    assert extraction_report(extract(page.encode(), Path("git-add.md")))["headings"] == ["git-add", "name"]
    # Twelve manual pages: every one has a NAME section and marks "name" as code; three mark "pathspec".
    reports = {f"page{number}.md": {"terms": ["name"] + (["pathspec"] if number < 3 else []), "headings": ["name"]} for number in range(12)}
    shared = corpus_terms(reports)
    assert shared("pathspec") and not shared("name")
    older = {path: {"terms": report["terms"]} for path, report in reports.items()}  # reports written before headings were counted
    assert corpus_terms(older)("name")  # control: no headings counted, the rule reads nothing
    few = dict(list(reports.items())[:2]) | {f"other{number}.md": {"terms": ["name"], "headings": []} for number in range(10)}
    assert corpus_terms(few)("name")  # control: two of twelve documents carry it: a subject, not the template
