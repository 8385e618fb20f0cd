"""English text: the tokenizer, the two stemmers, and every closed word class, each defined once.

Everything that reads words (search, the answer's refusal rule, the
question parser, the verifier's fact checks, lint, generation) takes its
word classes from here, so a fix to one class reaches every reader;
``tests/test_text.py`` fails when a module outside this one spells a class
out again. The classes are plain English, not fitted to any corpus: a word
belongs because of what it is (a pronoun, an auxiliary, a month), never
because a benchmark went better with it.

Two stemmers, each for one purpose:

- ``search_stems``: Snowball's Porter stemmer, the one DuckDB's FTS
  extension stems the index with. A query must meet the index in the same
  terms, so search and everything that weighs words by their rarity in the
  index (``SearchIndex.rarity``) use it.
- ``stem``: Porter2 ("english"), for matching the words of a claim against
  those of its evidence, where "died" and "die" must meet (Porter gives
  "di" and "die").
"""

from __future__ import annotations

import hashlib
import re
import threading
from functools import lru_cache

import Stemmer

# -- words -------------------------------------------------------------------------

WORD = re.compile(r"[^\W_]+")  # a run of letters and digits: a search term before stemming
CONTENT_WORD = re.compile(r"[^\W_]{3,}")  # three letters or digits or more: the words two texts share when they say the same
_SPLIT_POSSESSIVE = re.compile(r"(?<=[^\W_]) (['’]s)\b(?!['’])")
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?(?:st|nd|rd|th|s)?|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Words and numbers of a text, in order, as written ("n't" becomes "not", a possessive "'s" is dropped, also
    when a tokenizer set it apart: "Otter 's Ransom", as Penn Treebank text writes it, reads as "Otter Ransom")."""
    text = _SPLIT_POSSESSIVE.sub(r"\1", text.replace("n't", " not").replace("n’t", " not"))
    return [word[:-2] if word.endswith(("'s", "’s")) and len(word) > 2 else word for word in _TOKEN.findall(text)]


_LINK_TARGET = re.compile(r"\]\([^)]*\)")


def text_key(text: str) -> str:
    """A text's letters and digits, lower-cased, link targets left out: what two readings of one passage share
    whatever their markup, line breaks or permalink marks."""
    return "".join(char for char in _LINK_TARGET.sub("]", text).lower() if char.isalnum())


def sentence_key(text: str) -> str:
    """A short fingerprint of a sentence, whatever its markup or spacing (``text_key``): how generation finds a sentence
    that many documents of a corpus repeat word for word."""
    return hashlib.blake2b(text_key(text).encode(), digest_size=5).hexdigest()


def content_words(text: str) -> frozenset[str]:
    """The lower-cased words of three characters or more (``CONTENT_WORD``) of a text."""
    return frozenset(word.lower() for word in CONTENT_WORD.findall(text))


# -- stemmers ------------------------------------------------------------------------

_porter = Stemmer.Stemmer("porter")
_porter_lock = threading.Lock()  # a Stemmer object is not safe to share between threads
_porter2 = Stemmer.Stemmer("english")


def search_stems(words: list[str]) -> list[str]:
    """Each word's search term: Snowball's Porter stem, as DuckDB's FTS extension stems the index."""
    with _porter_lock:
        return _porter.stemWords(words)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A word's Porter2 stem, lower-cased, for matching a claim's words against its evidence."""
    return _porter2.stemWord(word.lower())


# -- closed word classes ----------------------------------------------------------------

SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "they"})
OBJECT_PRONOUNS = frozenset({"him", "them"})  # "her" and "it" are POSSESSIVE_PRONOUNS and SUBJECT_PRONOUNS
POSSESSIVE_PRONOUNS = frozenset({"his", "her", "its", "their"})
# The third-person pronouns that stand for a person or thing a text named before.
PERSONAL_PRONOUNS = SUBJECT_PRONOUNS | OBJECT_PRONOUNS | POSSESSIVE_PRONOUNS
DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
# The reader and writer of a text ("Can I import curses ...?", "You should use io.open()"): never what it is about.
SPEAKERS = frozenset({"i", "you", "we"})
RELATIVE_PRONOUNS = frozenset({"who", "which"})
# Words whose meaning lies in another sentence: what a claim refers back to must be read there.
REFERRING_WORDS = PERSONAL_PRONOUNS | {"this", "these"} | RELATIVE_PRONOUNS
# Gender of the pronouns that have one (reflexives and "hers" included).
GENDER = {"he": "m", "him": "m", "his": "m", "himself": "m", "she": "f", "her": "f", "hers": "f", "herself": "f"}
# The gendered pronouns that open a clause about a person: "he", "she", "his", "her".
PERSONAL_OPENERS = frozenset(word for word in GENDER if word in SUBJECT_PRONOUNS | POSSESSIVE_PRONOUNS)
# A pronoun that opens a sentence, and what follows a name put in its place ("his" -> "Volta's").
OPENING_PRONOUNS = {**{word: "" for word in SUBJECT_PRONOUNS | {"this", "these"}}, **{word: "'s" for word in POSSESSIVE_PRONOUNS}}
# The other gender's pronoun, for changing a fact's person ("him" has two readings back; "her" -> "his").
GENDER_SWAPS = {"he": "she", "she": "he", "his": "her", "her": "his", "him": "her"}

ARTICLES = frozenset({"the", "a", "an"})
DETERMINERS = ARTICLES | DEMONSTRATIVES | POSSESSIVE_PRONOUNS | {"our", "my", "your"} | {"some", "any", "all", "each", "every"}

FORMS_OF_BE = frozenset({"is", "are", "was", "were", "am"})
FORMS_OF_HAVE = frozenset({"has", "have", "had"})
FORMS_OF_DO = frozenset({"do", "does", "did"})
MODALS = frozenset({"can", "could", "will", "would", "should", "shall", "may", "might", "must"})
AUXILIARIES = FORMS_OF_BE | FORMS_OF_HAVE | FORMS_OF_DO | MODALS
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "nowhere", "cannot", "without"})
# Where a sentence's clauses part: the words that set one clause against another ("The coolest month is June,
# while the warmest is January"), and every break between clauses. A negation or an opposite beyond one is about
# something else ("An elephant is a good swimmer, but it can neither trot, jump, nor gallop").
CONTRASTING = ("but", "whereas", "while", "although", "though")
CONTRAST_BREAK = re.compile(rf";|\b(?:{'|'.join(CONTRASTING)})\b", re.IGNORECASE)
CLAUSE_BREAK = re.compile(rf"[,;:()]|\b(?:{'|'.join((*CONTRASTING, 'however', 'yet'))})\b", re.IGNORECASE)

# Stopwords for matching that still assert something: "few natural predators" is the opposite of "many".
QUANTIFIERS = frozenset({"few", "fewer", "many", "more", "most", "least", "less", "much"})

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
YEAR = r"1[0-9]{3}|20[0-9]{2}"  # a year as texts of the last millennium write it (a pattern, for regular expressions)

# The function words matching leaves out: what two texts share in them says nothing about what they say.
STOPWORDS = frozenset("""
a about above after again against all also although am an and any are as at be because been before being below between both
but by can could did do does doing down during each either else even ever every few for from further had has have having he
her here hers herself him himself his how however i if in into is it its itself just least less let like many may me might
more most much must my myself neither nor of off on once one only onto or other others our ours ourselves out over own per
quite rather same several shall she should since so some such than that the their theirs them themselves then there these
they this those though through thus to too under until up upon us very via was we were what whatever when where whether which
while who whom whose why will with within would yet you your yours yourself yourselves mr mrs ms dr st
""".split())


def alternation(words) -> str:
    """A regular-expression group matching any of words (longest first, so "these" is not read as "the")."""
    return "(?:" + "|".join(sorted(map(re.escape, words), key=lambda word: (-len(word), word))) + ")"
