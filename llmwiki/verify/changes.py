"""Changed-fact claims made by rule from an article, for benchmarking and calibrating verification.

FactCC-style: take sentences of an article and make

- true rewordings ("reworded"): a leading pronoun replaced by the article's
  title, a clause after a comma dropped, two coordinated words swapped, a
  word replaced by a WordNet synonym;
- false sentences with one factual change: a name swapped for another name
  from the same article ("name"), a number or year changed ("number"), a
  negation inserted ("negation"), a word replaced by its WordNet antonym
  ("opposite"), he/she or his/her swapped ("pronoun");
- false sentences the article does not hold at all ("unsupported"): a
  sentence of another article with no name or number in it, which only the
  model's judgement and the shared wording can reject.

Half of the false sentences are also lightly reworded, as an LLM would write
them. Everything is seeded, so a set is the same on every run.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from llmwiki.text.segment import split_sentences
from llmwiki.text import AUXILIARIES, FORMS_OF_DO, GENDER_SWAPS, SUBJECT_PRONOUNS, STOPWORDS, YEAR, alternation, tokens
from llmwiki.text.facts import name_words
from llmwiki.text.lexicon import Lexicon

CHANGE_TYPES = ("name", "number", "opposite", "negation", "pronoun", "unsupported")
# The auxiliaries a "not" can follow as written; do-support ("did" + base form) and the rare "am" and "shall" are left out.
_AUXILIARIES = re.compile(rf"\b{alternation(AUXILIARIES - FORMS_OF_DO - {'am', 'shall'})}\b")
_YEAR = re.compile(rf"^(?:{YEAR})$")


@dataclass(frozen=True)
class Claim:
    text: str
    label: int  # 1: true rewording, 0: one fact changed
    change: str  # "reworded" or one of CHANGE_TYPES
    source: str  # the article sentence it was made from
    article: str


def article_sentences(text: str, *, min_words: int = 8, max_words: int = 40) -> list[str]:
    """The article's prose sentences of a usable length (headings and fragments dropped)."""
    sentences = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = " ".join(paragraph.split())
        if len(paragraph.split()) < min_words or not paragraph.endswith((".", '"', ")")):
            continue
        for sentence in split_sentences(paragraph):
            if min_words <= len(sentence.split()) <= max_words and sentence.endswith(".") and sentence[:1].isupper():
                sentences.append(sentence)
    return sentences


def _replace_word(sentence: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, sentence, count=1)


def reword(sentence: str, *, title: str, lexicon: Lexicon | None, rng: random.Random) -> str:
    """A light rewording that keeps every fact: pronoun -> title, a clause dropped, coordinated words swapped, synonyms."""
    result = sentence
    first = result.split(" ", 1)
    if first[0] in {word.title() for word in SUBJECT_PRONOUNS} and len(first) > 1 and title:
        result = f"{title} {first[1]}"
    clause = re.search(r", (which|who|where|although|while|including|with|as) [^,]{3,}?(?=[,.])", result)
    if clause and rng.random() < 0.5:
        result = result[: clause.start()] + result[clause.end():]
    pair = re.search(r"\b([a-z]{4,}) and ([a-z]{4,})\b", result)
    if pair and rng.random() < 0.5:
        result = result[: pair.start()] + f"{pair.group(2)} and {pair.group(1)}" + result[pair.end():]
    if lexicon is not None:
        candidates = [word for word in tokens(result) if word.islower() and word not in STOPWORDS and len(word) > 3 and lexicon.synonyms.get(word)]
        rng.shuffle(candidates)
        for word in candidates[:1]:
            options = sorted(option for option in lexicon.synonyms[word] if " " not in option and "-" not in option and option not in lexicon.opposites(word))
            if options:
                result = _replace_word(result, word, rng.choice(options))
    return result


def change(sentence: str, kind: str, *, names: list[str], lexicon: Lexicon | None, rng: random.Random) -> str | None:
    """The sentence with one fact changed in the given way, or None when it holds nothing to change so."""
    words = tokens(sentence)
    if kind == "name":
        own = {word.lower() for word in words}
        present = [word for index, word in enumerate(words) if word.lower() in names and (index > 0 or word.lower() not in STOPWORDS)]
        others = [name for name in names if name not in own]
        if not present or not others:
            return None
        target = rng.choice(present)
        replacement = rng.choice(others)
        return _replace_word(sentence, target, replacement[:1].upper() + replacement[1:])
    if kind == "number":
        present = [word for word in words if re.fullmatch(r"\d[\d,]*", word)]
        if not present:
            return None
        target = rng.choice(present)
        value = int(target.replace(",", ""))
        if _YEAR.match(target):
            new = value + rng.choice([-12, -7, -3, -2, 2, 3, 7, 12])
        else:
            new = value + rng.choice([1, 2, 3]) if value < 20 else int(value * rng.choice([0.5, 0.7, 1.5, 2]))
        formatted = f"{new:,}" if "," in target else str(new)
        return _replace_word(sentence, target, formatted) if formatted != target else None
    if kind == "negation":
        auxiliary = _AUXILIARIES.search(sentence)
        if auxiliary is None or sentence[auxiliary.end():].startswith((" not", " never")):
            return None
        return sentence[: auxiliary.end()] + " not" + sentence[auxiliary.end():]
    if kind == "opposite":
        if lexicon is None:
            return None
        options = {word: sorted(option for option in lexicon.opposites(word) if " " not in option) for word in words if word.islower() and word not in STOPWORDS}
        candidates = [word for word, opposites in options.items() if opposites]
        if not candidates:
            return None
        target = rng.choice(candidates)
        opposite = rng.choice(options[target])
        return _replace_word(sentence, target, opposite)
    if kind == "pronoun":
        present = [word for word in words if word.lower() in GENDER_SWAPS]
        if not present:
            return None
        target = rng.choice(present)
        swapped = GENDER_SWAPS[target.lower()]
        return _replace_word(sentence, target, swapped.capitalize() if target[:1].isupper() else swapped)
    raise ValueError(f"unknown change type {kind!r}; use one of {', '.join(CHANGE_TYPES)}")


def plain_sentences(text: str) -> list[str]:
    """Sentences with no name or number past their first word: the pool of "unsupported" claims."""
    return [sentence for sentence in article_sentences(text)
            if not any(word[:1].isupper() or word[:1].isdigit() for word in tokens(sentence)[1:])]


def make_claims(article: str, text: str, *, title: str, lexicon: Lexicon | None, per_article: int = 12, seed: int = 0,
                foreign: list[str] = ()) -> list[Claim]:
    """True rewordings and false sentences (one fact changed; a few from foreign, other articles' plain sentences)."""
    rng = random.Random(f"{seed}:{article}")
    sentences = article_sentences(text)
    rng.shuffle(sentences)
    names = sorted(name_words([text]) - {word.lower() for word in title.split()})
    claims: list[Claim] = []
    true_count = 0
    for sentence in sentences[:per_article]:
        reworded = reword(sentence, title=title, lexicon=lexicon, rng=rng)
        if reworded != sentence:
            claims.append(Claim(reworded, 1, "reworded", sentence, article))
            true_count += 1
    if foreign:
        for sentence in rng.sample(list(foreign), min(2, len(foreign))):
            claims.append(Claim(sentence, 0, "unsupported", sentence, article))
    kinds = [kind for kind in CHANGE_TYPES if kind != "unsupported"]
    for index, sentence in enumerate(sentences[per_article:] + sentences[:per_article]):
        if sum(claim.label == 0 for claim in claims) >= max(true_count, per_article):
            break
        for offset in range(len(kinds)):
            kind = kinds[(index + offset) % len(kinds)]
            changed = change(sentence, kind, names=names, lexicon=lexicon, rng=rng)
            if changed is not None and changed != sentence:
                if kind != "pronoun" and rng.random() < 0.5:
                    changed = reword(changed, title=title, lexicon=None, rng=rng)
                claims.append(Claim(changed, 0, kind, sentence, article))
                break
    return claims
