"""Question shapes, statements, answer-type ranking and pronouns: pure functions on plain text."""

import pytest
from hypothesis import assume, given, strategies as st

from llmwiki.text import parsing
from llmwiki.text.questions import (
    adjunct_last,
    default_frame,
    last_people,
    last_person,
    names_a_title,
    names_subject,
    opens_with_pronoun,
    question_subject,
    rank_sentences,
    reads_as_prose,
    resolve_opening_pronoun,
    shape,
    to_statement,
    unbracket,
    without_frame,
)


@pytest.mark.parametrize(("question", "kind"), [
    ("Was Abraham Lincoln the sixteenth President?", "yes_no"), ("Did Lincoln sign the Act?", "yes_no"), ("Could Pascal walk?", "yes_no"),
    ("When was Volta born?", "when"), ("In what year did he die?", "when"), ("Who invented the battery?", "who"), ("Where was Celsius born?", "where"),
    ("How many species are there?", "how_many"), ("How long is the river?", "how_much"), ("Which spice attracted traders?", "which"),
    ("What color are polar bears?", "what"), ("Why did he resign?", "why"), ("Is Canada bigger or smaller than Egypt?", "other"),
    ("Does an otter give birth or lay eggs?", "other"), ("Is Ford one of four Presidents to live to 90 or more years of age?", "yes_no"),
    ("Is he 18 or older?", "yes_no"), ("Is it 18 or 19 years old?", "other"),
])
def test_question_kinds(question, kind):
    assert shape(question).kind == kind


def test_yes_no_questions_become_the_statement_they_ask_about():
    assert to_statement("Was Abraham Lincoln the sixteenth President of the United States?") == "Abraham Lincoln was the sixteenth President of the United States."
    assert to_statement("Did Lincoln sign the National Banking Act of 1863?") == "Lincoln sign the National Banking Act of 1863."
    assert to_statement("Did he not die at the age of 55?") == "He did not die at the age of 55."  # "not" keeps its auxiliary
    assert to_statement("Does the interactive interpreter offer Tab completion?") == "The interactive interpreter offers Tab completion."
    assert to_statement("Does Canada border Norway?") == "Canada borders Norway."
    assert to_statement("Does it still carry weight?") == "It still carries weight."  # past an adverb
    assert to_statement("Does it apply to every plot?") == "It applies to every plot."  # a verb in -ly is no adverb
    assert to_statement("Does it reply quickly?") == "It replies quickly."
    assert to_statement("Does Lincoln have a beard?") == "Lincoln has a beard."
    assert to_statement("Does he not die young?") == "He does not die young."  # control: "not" keeps "does" and the verb as it is
    assert to_statement("Do the interpreters offer Tab completion?") == "The interpreters offer Tab completion."  # control: "do"
    assert to_statement("Does gnuplot grid scattered data?") == "Gnuplot grids scattered data."
    assert to_statement("Is the kangaroo a marsupial?") == "The kangaroo is a marsupial."
    assert to_statement("Is it true that otters eat urchins?") == "Otters eat urchins."
    # what a name has is the subject: the auxiliary goes after it, not after the name
    assert to_statement("Is Uruguay's warmest month June?") == "Uruguay's warmest month is June."
    assert to_statement("Is Ghana's head of state John Agyekum Kufuor?") == "Ghana's head of state is John Agyekum Kufuor."
    assert to_statement("Was Roosevelt's family rich?") == "Roosevelt's family was rich."  # a word is left to say something of it
    assert to_statement("Was Roosevelt rich?") == "Roosevelt was rich."  # control: no possessive, the name alone
    # a name after "of" belongs to the subject a determiner opens: the auxiliary goes after the name
    assert to_statement("Is the capital of France Paris?") == "The capital of France is Paris."
    assert to_statement("Was the President of the United States born in Ohio?") == "The President of the United States was born in Ohio."
    assert to_statement("Is the myth of Otter 's Ransom the starting point of the Volsunga saga?") == "The myth of Otter 's Ransom is the starting point of the Volsunga saga."
    assert to_statement("Is the name of the game chess?") == "The name is of the game chess."  # control: no name after "of", the head noun alone
    assert to_statement("Is the leopard of the Felidae family?") == "The leopard is of the Felidae family."  # control: "family" is not what is said


def test_an_adjunct_before_a_yes_no_questions_auxiliary_moves_to_its_end():
    assert adjunct_last("In 1900, was the bridge made of steel?") == "Was the bridge made of steel in 1900?"
    assert adjunct_last("Before World War I, did Becquerel live in Paris?") == "Did Becquerel live in Paris before World War I?"
    assert adjunct_last("So, is Paris the capital of France?") == "Is Paris the capital of France?"  # a word that says nothing goes
    assert adjunct_last("According to Reader's Digest, is Finland best for living?") == "Is Finland best for living according to Reader's Digest?"
    assert to_statement(adjunct_last("In 1900, was the bridge made of steel?")) == "The bridge was made of steel in 1900."
    # controls: no auxiliary after the comma, or one that opens the question, leave it as it is
    for question in ("Who, if anyone, was king?", "Was Paris, the capital, founded by Romans?", "In 1900, the bridge was made of steel?", "Did he, did he not, win the race?"):
        assert adjunct_last(question) == question


def test_two_fronted_adjuncts_move_together_but_an_apposition_stays():
    assert adjunct_last("In gnuplot 5, if I call fit, are all data points weighted equally?") == "Are all data points weighted equally in gnuplot 5 if I call fit?"
    assert adjunct_last("On Windows, when the shell starts, is the path read?") == "Is the path read on Windows when the shell starts?"
    # controls: an apposition after a name is no adjunct; one adjunct still moves alone
    for question in ("Sibiu, a large city in Transylvania, was chosen in what year?", "Paris, France, is it big?"):
        assert adjunct_last(question) == question
    assert adjunct_last("In 1900, was the bridge made of steel?") == "Was the bridge made of steel in 1900?"


def test_the_statement_leaves_an_aside_in_parentheses_out():
    assert to_statement("Is enhanced text mode (sub/superscripts) switched on by default?") == "Enhanced text mode is switched on by default."
    assert to_statement("Was Lincoln (the 16th president) born in 1809?") == "Lincoln was born in 1809."
    assert to_statement("Was Lincoln born in 1809?") == "Lincoln was born in 1809."  # control: nothing to leave out
    assert to_statement("Is (x) true?") == "(x) is true."  # control: an aside that is all the question says stays


def test_the_subject_ends_before_a_participle_the_tagger_read_as_a_past_tense():
    assert to_statement("Is enhanced text mode switched on by default?") == "Enhanced text mode is switched on by default."
    assert to_statement("Is access to users' public_html directories enabled by default?") == "Access to users' public_html directories is enabled by default."
    assert to_statement("Was the bridge built in 1900?") == "The bridge was built in 1900."  # control: a participle tagged as one


def test_a_quantifier_opens_the_subject_not_is_it():
    assert to_statement("Are all Require directives treated as alternatives by default?") == "All Require directives are treated as alternatives by default."
    assert to_statement("Were all the soldiers killed?") == "All the soldiers were killed."
    assert to_statement("Are some birds flightless?") == "Some birds are flightless."  # control: parsed as it was


@pytest.mark.parametrize(("question", "read_as"), [
    ("Where is the legend drawn if I don't position it myself?", "Where is the legend drawn by default?"),
    ("What symbol marks outliers unless I choose another?", "What symbol marks outliers by default?"),
    ("Which base does the log scale use when I haven't set one?", "Which base does the log scale use by default?"),
    ("Is tab completion offered without any setup?", "Is tab completion offered by default?"),
    ("If I call open() without a mode argument, what mode is used?", "If I call open(), what mode is used by default?"),
    ("Which filesystem does Debian use out of the box?", "Which filesystem does Debian use by default?"),
    ("What is AllowOverride set to if I leave it out of the configuration?", "What is AllowOverride set to by default?"),
    ("Are neighbouring boxes widened, with no explicit width?", "Are neighbouring boxes widened by default?"),
    # the clause ends where the next one opens: "when I draw an arrow" stays
    ("Does it get a point on each end unless I say otherwise when I draw an arrow?", "Does it get a point on each end when I draw an arrow by default?"),
])
def test_a_clause_asking_what_happens_when_the_reader_sets_nothing_reads_as_by_default(question, read_as):
    assert default_frame(question) == read_as


@pytest.mark.parametrize("question", [
    "Does the else block run when the loop finishes without hitting break?",  # "without" + what happens, not a setting left out
    "Does the build fail unless zlib is installed?",  # a condition on something else than the reader
    "Can I run Python without an installer?",  # no setting is left out
    "What is the default value of set pointsize?",  # says "default" already
    "Was Lincoln the sixteenth President?",
])
def test_a_question_without_such_a_clause_is_left_as_it_is(question):
    assert default_frame(question) == question


def test_a_passive_or_a_copular_question_keeps_its_subject_whole():
    assert parsing.pipeline() is not None, "spaCy's en_core_web_sm is a dependency (pyproject.toml)"
    # the participle a parse hangs on the subject is the passive's verb, not part of the subject
    assert to_statement("Was the bridge built in 1900?") == "The bridge was built in 1900."
    assert to_statement("Is the Eiffel Tower made of iron?") == "The Eiffel Tower is made of iron."
    # two noun phrases and no parsed subject: the first, with what "of" or "and" adds to it
    assert to_statement("Are adult ducks fast fliers?") == "Adult ducks are fast fliers."
    assert to_statement("Are certain species of beetles considered pests?") == "Certain species of beetles are considered pests."
    # control: an "of" phrase that takes in the rest is no subject; the name after "of" belongs to it
    assert to_statement("Is an official language of Canada German?") == "An official language of Canada is German."
    # control: where the opening auxiliary serves a later verb, a participle on the subject stays in it
    assert to_statement("Has the bridge built in 1900 collapsed?") == "The bridge built in 1900 has collapsed."


def test_a_subject_without_a_name_is_found_by_the_parse(monkeypatch):
    assert parsing.pipeline() is not None, "spaCy's en_core_web_sm is a dependency (pyproject.toml)"
    assert to_statement("Is polar bear a mammal?") == "Polar bear is a mammal."
    assert to_statement("Can polar bears be seen under infrared photography?") == "Polar bears can be seen under infrared photography."
    assert to_statement("Can a single female lay many eggs?") == "A single female can lay many eggs."
    assert to_statement("Will oil and gas probably remain the backbone of the economy?") == "Oil and gas will probably remain the backbone of the economy."
    # a parsed subject that took in what is said of it is not used: "the smallest penguin species the Little Blue Penguin"
    assert to_statement("Is the smallest penguin species the Little Blue Penguin, which stands around 40 cm tall?").startswith("The smallest penguin species is the Little Blue Penguin")
    assert to_statement("Was Wilson president of the Association in 1910?") == "Wilson was president of the Association in 1910."  # a name: no parse needed
    monkeypatch.setattr(parsing, "pipeline", lambda: None)  # without the parse, the word rules alone: the first word
    assert to_statement("Is polar bear a mammal?") == "Polar is bear a mammal."


def test_the_head_noun_of_what_and_which_questions():
    assert shape("What was the name of James Watt's mother?").focus == ("mother",)
    assert shape("What color are polar bears?").focus == ("color",)
    assert shape("What did Cleveland die from?").focus == ()  # a verb is not what the answer must hold


def test_the_sentence_holding_what_is_asked_comes_first():
    sentences = ["Becquerel was born into a family of scientists.", "Becquerel was born in Paris on 15 December 1852."]
    assert rank_sentences("When was Becquerel born?", sentences)[0][1] == 1  # it holds a date
    assert rank_sentences("Into a family of what was Becquerel born?", sentences)[0][1] == 0  # control: the other one answers this


def test_why_and_how_prefer_a_sentence_that_gives_a_cause_or_a_means():
    sentences = ["Keepers light the lamp at dusk every evening.", "Keepers light the lamp at dusk because ships pass the reef at night."]
    assert rank_sentences("Why do keepers light the lamp at dusk?", sentences)[0][1] == 1
    assert rank_sentences("When do keepers light the lamp?", sentences)[0][1] == 0  # control: no cause asked, so no bonus: the tie goes to the first
    means = ["Keepers reach the tower every morning.", "Keepers reach the tower by rowing across the bay every morning."]
    assert rank_sentences("How do keepers reach the tower every morning?", means)[0][1] == 1
    assert rank_sentences("What do keepers reach every morning?", means)[0][1] == 0  # control


def test_a_name_in_the_question_outweighs_a_common_word():
    sentences = ["The elephant will die of starvation.", "Cleveland died of a heart attack in 1908."]
    assert rank_sentences("What did Cleveland die from?", sentences)[0][1] == 1
    assert rank_sentences("What did the elephant die from?", sentences)[0][1] == 0  # control


def test_an_event_question_is_ranked_by_its_topic_not_by_happened():
    sentences = ["Loss of rank can happen gradually or suddenly.", "In 1867, Canada was formed as a federal, semi-autonomous polity."]
    assert rank_sentences("What happened in 1867?", sentences)[0][1] == 1
    assert rank_sentences("What can happen gradually?", sentences)[0][1] == 0  # control: there "happen" is all the question has
    assert without_frame("What happened in the election of 1816?") == "What in the election of 1816?"
    assert without_frame("When did the first report take place?") == "When did the first report ?"
    assert without_frame("What happened?") == "What happened?"  # nothing else to search for: kept as asked


def test_an_opening_pronoun_gets_its_referent_in_brackets():
    preceding = "Antoine Henri Becquerel was a French physicist."
    resolved = resolve_opening_pronoun("He won the 1903 Nobel Prize in Physics.", "Henri Becquerel", preceding=preceding)
    assert resolved == "[Antoine Henri Becquerel] won the 1903 Nobel Prize in Physics." and not opens_with_pronoun(resolved)
    assert resolve_opening_pronoun("His father was a physicist.", "Henri Becquerel") == "[Henri Becquerel's] father was a physicist."
    assert resolve_opening_pronoun("It is a marsupial.", "kangaroo") == "[Kangaroo] is a marsupial."
    assert resolve_opening_pronoun("Becquerel won the prize.", "Henri Becquerel") == "Becquerel won the prize."  # control: no pronoun
    assert resolve_opening_pronoun("This species is rare.", "Otter") == "This species is rare."  # "this" with its own noun
    assert opens_with_pronoun("He won the prize.") and not opens_with_pronoun("Hence the prize.")


def _quoted(chunk_text: str, sentence: str, title: str) -> str:
    from llmwiki.read.candidates import Candidate, quote

    return quote(Candidate(sentence, 7, 0, chunk_text, title, chunk_text, chunk_text.index(sentence)))


def test_an_answer_quotes_the_sentence_an_opening_it_points_back_at_instead_of_guessing_a_referent():
    manual = "The x11 terminal draws plots in a window on the screen. It also has some extra icons, which explain themselves."
    quoted = _quoted(manual, "It also has some extra icons, which explain themselves.", "Gnuplot documentation")
    assert quoted == f"{manual} [c7]" and "[Gnuplot" not in quoted  # as written, not "[Gnuplot documentation] also has"
    # The same "it" as the chunk's first sentence has nothing before it to quote: resolved to the title as before
    assert _quoted("It is a marsupial of the plains.", "It is a marsupial of the plains.", "Kangaroo") == "[Kangaroo] is a marsupial of the plains. [c7]"
    # A chain: the sentence before opens with "They" too, resolved where the passage names the title ("beetles" for
    # "Beetle"), left as written where it does not (a manual's title is seldom what "they" means)
    beetles = "Beetles live on every continent. They interact with their ecosystems in several ways. They often feed on fungi."
    assert _quoted(beetles, "They often feed on fungi.", "Beetle").startswith("[Beetles] interact with their ecosystems")
    shells = "Each shell reads its input in lines. They interact with their environment in several ways. They often read startup files."
    assert _quoted(shells, "They often read startup files.", "Bash reference manual").startswith("They interact with their environment")
    named = "Shells differ in syntax. They interact with their environment in several ways. They often read startup files."
    assert _quoted(named, "They often read startup files.", "Bash reference manual").startswith("[Shells] interact")  # named just before
    # Control: a person's "he" keeps its name in brackets, and "This" with a noun of its own is quoted as written
    assert _quoted("Henri Becquerel was a French physicist. He won the 1903 Nobel Prize.", "He won the 1903 Nobel Prize.", "Henri Becquerel") == (
        "[Henri Becquerel] won the 1903 Nobel Prize. [c7]")
    assert resolve_opening_pronoun("This SystemTap script uses the tapset above.", "Instrumenting CPython") == "This SystemTap script uses the tapset above."


def test_he_is_the_subject_of_the_sentence_before():
    assert last_person("The name comes from Captain James Cook. Cook saw the animals.") == "Cook"
    assert last_person("In 1896 Becquerel discovered radioactivity.") == "Becquerel"
    assert last_person("the animals were seen.") is None
    # A clause opener is not a name: "According to ..." (control: a name at the head of the sentence still is)
    legend = "According to this legend, Captain James Cook and naturalist Sir Joseph Banks were exploring Australia."
    assert last_person(legend) == "Captain James Cook"
    assert last_person("Interestingly, Darwin saw the finches.") == "Darwin"
    assert last_person("Kelly won the award.") == "Kelly" and last_person("Darling was the governor.") == "Darling"
    # A conjunctive adverb is not a name either ("[Furthermore] lost control of his party" was shown);
    # the name after it still counts
    assert last_person("Furthermore, he was blamed for the panic.") is None
    assert last_person("Later Cleveland vetoed the bill.") == "Cleveland" and last_person("Meanwhile, Cleveland vetoed it.") == "Cleveland"
    assert resolve_opening_pronoun("He lost control of his party.", "Grover Cleveland", preceding="Furthermore, he was blamed.") == (
        "[Grover Cleveland] lost control of his party.")
    assert last_people("Meanwhile Cook and naturalist Banks were exploring.") == "Cook and naturalist Banks"
    # A surname the article's title holds stands for the title's fuller name (control: a name the title lacks)
    assert resolve_opening_pronoun("He sailed home.", "James Cook", preceding="Later Cook saw the coast.") == "[James Cook] sailed home."
    assert resolve_opening_pronoun("He sailed home.", "James Cook", preceding="Later Joseph Banks saw the coast.") == "[Joseph Banks] sailed home."


def test_he_is_not_a_word_that_names_no_one():
    # A capitalised word at the head of the sentence before that is no person (an opener, an institution)
    # leaves "he" to the article's subject (the parser's named entities decide); control: a person there is taken
    assert parsing.pipeline() is not None, "spaCy's en_core_web_sm is a dependency (pyproject.toml)"
    assert last_person("Largely self-educated, he read widely in law.") == "Largely"  # what the head-of-sentence rule alone reads
    assert resolve_opening_pronoun("He was also a skilled wrestler.", "Abraham Lincoln", preceding="Largely self-educated, he read widely in law.") == (
        "[Abraham Lincoln] was also a skilled wrestler.")
    assert resolve_opening_pronoun("He also edited a magazine.", "Theodore Roosevelt", preceding="Harvard gave him a degree in 1880.") == (
        "[Theodore Roosevelt] also edited a magazine.")
    assert resolve_opening_pronoun("He sailed home.", "James Cook", preceding="Later Joseph Banks saw the coast.") == "[Joseph Banks] sailed home."
    # a possessive name is the name ("[Lincoln's's]" was shown), here the title's
    assert resolve_opening_pronoun("His speech was long.", "Abraham Lincoln", preceding="Lincoln's rhetoric moved the crowd.") == (
        "[Abraham Lincoln's] speech was long.")


def test_a_name_in_the_predicate_is_not_who_he_is():
    # the name after a verb or a common noun is what the sentence is about, not its subject
    assert last_person("He did well in chemistry but fared poorly in French and German.") is None
    assert last_person("But his family moved North in 1902.") is None
    assert last_person("He went to Lyon, France, where he taught for a year.") is None  # a clause, then a list of places
    assert resolve_opening_pronoun("He studied botany.", "Alessandro Volta", preceding="He fared poorly in French.") == (
        "[Alessandro Volta] studied botany.")
    # Controls: a name at the head, after a short opening phrase, or after a comma that closes one, is the subject
    assert last_person("In this book Darwin set out the theory.") == "Darwin"
    assert last_person("In his youth, Volta studied electricity.") == "Volta"
    assert last_person("By 1801 Volta had shown the pile to Napoleon.") == "Volta"


def test_they_are_the_people_named_together_just_before():
    legend = "According to this legend, Captain James Cook and naturalist Sir Joseph Banks were exploring Australia."
    assert last_people(legend) == "Captain James Cook and naturalist Sir Joseph Banks"
    resolved = resolve_opening_pronoun("They asked a nearby local what the creatures were called.", "Kangaroo", preceding=legend)
    assert resolved == "[Captain James Cook and naturalist Sir Joseph Banks] asked a nearby local what the creatures were called."
    # Controls: one name, or a name and a common noun, leave "they" to the article's subject.
    assert resolve_opening_pronoun("They are marsupials.", "Kangaroo", preceding="Kangaroos live in Australia.") == "[Kangaroos] are marsupials."
    assert last_people("Cook and the crew were exploring.") is None
    assert resolve_opening_pronoun("He asked a local.", "Kangaroo", preceding=legend) == "[Captain James Cook] asked a local."


def test_it_is_the_singular_thing_the_sentence_before_is_about():
    assert parsing.pipeline() is not None, "spaCy's en_core_web_sm is a dependency (pyproject.toml)"
    before = "The building by the Swiss architects Morger, Degelo and Kerez is a landmark in Vaduz."
    assert resolve_opening_pronoun("It was completed in November 2000.", "Liechtenstein", preceding=before) == (
        "[The building] was completed in November 2000.")
    assert resolve_opening_pronoun("Its roof is black.", "Liechtenstein", preceding=before) == "[The building's] roof is black."
    assert resolve_opening_pronoun("It is usually fed by its mother.", "kangaroo", preceding="The joey will usually stay in the pouch.") == (
        "[The joey] is usually fed by its mother.")
    # Controls: the title's own subject, a proper name, a plural or nothing before leave "it" to the title
    assert resolve_opening_pronoun("It is one of six species.", "Gray Wolf", preceding="The gray wolf is a member of the genus Canis.") == (
        "[Gray Wolf] is one of six species.")
    assert resolve_opening_pronoun("It borders Sweden.", "Finland", preceding="Helsinki is the capital.") == "[Finland] borders Sweden."
    assert resolve_opening_pronoun("It borders Sweden.", "Finland", preceding="Most lakes are shallow.") == "[Finland] borders Sweden."
    assert resolve_opening_pronoun("It is a marsupial.", "kangaroo") == "[Kangaroo] is a marsupial."


def test_an_it_that_stands_for_nothing_is_left_as_it_is():
    before = "The romance cooled and Miss Storer married someone else."
    for sentence in ("It is said he kept a warm memory of this love.", "It is sometimes debated whether Lincoln had Marfan syndrome.",
                     "It is not clear if the bombing was committed by a group.", "It was not until 1958 that Congress acted.",
                     "It is through this ancestor that Coolidge claimed descent.", "It seems that the lake dried up.",
                     "It is also possible to use a list as a queue.", "It is easy to pass keyword arguments."):
        assert parsing.expletive_it(sentence), sentence
        assert resolve_opening_pronoun(sentence, "Isaac Newton", preceding=before) == sentence
        assert not opens_with_pronoun(sentence)  # nothing is left unresolved
    # Controls: an "it" that does something, is something, or comes before an adjective with "to" stands for a thing
    for sentence in ("It allows chemists to determine the amounts.", "It is one of six species termed 'wolf', the others being the Red Wolf.",
                     "It is unsafe to handle.", "It is difficult to train.", "It was completed in November 2000."):
        assert parsing.expletive_it(sentence) is False, sentence
        assert resolve_opening_pronoun(sentence, "battery").startswith("[Battery]")
        assert opens_with_pronoun(sentence)


def test_what_a_sentence_is_about_leaves_out_the_words_its_modifiers_hold():
    about = parsing.named_elsewhere("Goannas and other carnivorous reptiles also pose a danger to smaller kangaroo species when food is scarce.")
    assert about is not None and {"Goannas", "reptiles", "danger"} <= set(about) and "kangaroo" not in about  # a noun's "to" phrase
    # Controls: an object, a verb's prepositional object, an "of" phrase and a passive's agent are what a sentence is about
    assert {"Portuguese", "Elmina", "Castle"} <= set(parsing.named_elsewhere("In 1482, the Portuguese built the Elmina Castle."))
    assert "Elmina" in parsing.named_elsewhere("The West India Company traded gold at Elmina for a century.")
    assert "Finland" in parsing.named_elsewhere("The population of Finland is about five million, most of them in the south.")
    assert "Portuguese" in parsing.named_elsewhere("The Elmina Castle was built by the Portuguese in 1482.")
    # None where the subject names no one: a page's own subject may stand behind "Males" or "It"
    assert parsing.named_elsewhere("Males weigh up to 90 kilograms.") is None
    assert parsing.named_elsewhere("It was completed in November 2000.") is None


def test_a_heading_a_list_item_or_a_caption_states_nothing():
    for fragment in ("Wilson, then president of United States", "Treaty of Paris (1783)", "*Hairy-nosed otter (Lutra sumatrana)",
                     "Indonesian presidential election, 2004", "* USS Woodrow Wilson (SSBN-624) (An USN SSBN named after President Wilson.)"):
        assert parsing.states_something(fragment) is False, fragment
    # Controls: a finite verb, a modal, or a sentence's full stop where the tagger reads the verb as a noun ("rules")
    for sentence in ("Young Adams went to Harvard College at age sixteen (in 1751).", "Otters can swim", "Males weigh 300 kg",
                     "The State Court rules on the conformity of laws with the constitution."):
        assert parsing.states_something(sentence) is True, sentence


def test_they_is_the_plural_subject_of_the_sentence_before():
    assert parsing.pipeline() is not None, "spaCy's en_core_web_sm is a dependency (pyproject.toml)"
    before = "The harbour was built in 1850. The Tide Runners were a rowing club that met on Sundays."
    assert resolve_opening_pronoun("They were based in Leith.", "harbour", preceding=before) == "[Tide Runners] were based in Leith."
    assert resolve_opening_pronoun("They nest in hollow trees.", "owl", preceding="Most owls feed on small rodents.") == "[Owls] nest in hollow trees."
    # a possessive takes the subject's head, without what follows it
    assert resolve_opening_pronoun("Their shafts were flooded.", "Wales", preceding="The coal miners of the valley went on strike.") == (
        "[Coal miners'] shafts were flooded.")
    # Controls: a singular subject before leaves "they" to the article's title; so does a subject that is itself a pronoun
    assert resolve_opening_pronoun("They nest in hollow trees.", "owl", preceding="The barn owl feeds on small rodents.") == "[Owl] nest in hollow trees."
    assert resolve_opening_pronoun("They nest in trees.", "owl", preceding="Its feathers are soft.") == "[Owl] nest in trees."


def test_she_is_a_woman_named_before_when_the_article_is_about_a_man_or_a_place():
    assert parsing.pipeline() is not None, "spaCy's en_core_web_sm is a dependency (pyproject.toml)"
    wedding = "In 1802, Telford married his cousin Margaret Reid, with whom he had two sons."
    assert resolve_opening_pronoun("She died in 1810.", "Thomas Telford", preceding=wedding) == "[Margaret Reid] died in 1810."
    assert resolve_opening_pronoun("Her father was a weaver.", "Thomas Telford", preceding=wedding) == "[Margaret Reid's] father was a weaver."
    office = "The office was created in 1921. The present holder is Governor Anna Lindqvist."
    assert resolve_opening_pronoun("She took office in 2004.", "Aland", preceding=office) == "[Anna Lindqvist] took office in 2004."
    # Controls: in an article about a woman, "she" is still the article's subject, even with another person named before;
    # with no one else named, the title as before; and "he" keeps its own rule
    about_her = "Her husband, Peter Brandt, was a painter. In 1920 she moved to Oslo."
    assert resolve_opening_pronoun("She opened a studio.", "Ingrid Holm", preceding=about_her) == "[Ingrid Holm] opened a studio."
    assert resolve_opening_pronoun("She died in 1810.", "Thomas Telford", preceding="The canal opened in 1805.") == "[Thomas Telford] died in 1810."
    assert resolve_opening_pronoun("He died in 1834.", "Thomas Telford", preceding=wedding) == "[Thomas Telford] died in 1834."


def test_without_a_parser_the_rules_before_it_hold(monkeypatch):
    monkeypatch.setattr(parsing, "pipeline", lambda: None)
    assert parsing.people("Anna Lindqvist took office.") is None and parsing.plural_subject("Most owls feed on small rodents.") is None
    assert resolve_opening_pronoun("They nest in hollow trees.", "owl", preceding="Most owls feed on small rodents.") == "[Owl] nest in hollow trees."
    wedding = "In 1802, Telford married his cousin Margaret Reid, with whom he had two sons."
    assert resolve_opening_pronoun("She died in 1810.", "Thomas Telford", preceding=wedding) == "[Thomas Telford] died in 1810."


@given(st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=80), st.text(alphabet="abcdefghij ", min_size=1, max_size=20))
def test_unbracket_gives_back_the_quoted_words(text, referent):
    assume(not text.startswith(("(", ":", "[")))  # "[x](", "[x]:" and "[x][" are Markdown links and definitions, kept (below)
    assert unbracket(f"[{referent.strip() or 'x'}]{text}") == text


def test_unbracket_keeps_a_markdown_link():
    assert unbracket("See [the page](wiki/a.md) and [he] left.") == "See [the page](wiki/a.md) and  left."
    assert unbracket("[c1]: ../sources/a.md") == "[c1]: ../sources/a.md"


@pytest.mark.parametrize(("sentence", "prose"), [
    # Lines of names that hold a clause are prose: they answer "who" questions.
    ("Marta was raised in Porto, Portugal by Captain Rui Almeida and Ines Sousa.", True),
    ("In 1931, Rui Almeida Junior succeeded Tomas as Harbour Master.", True),
    ("* Almeida is the only keeper buried on Berlenga Island.", True),
    ("Keepers trim the wick at dusk.", True),  # control: ordinary prose
    # Titles, name lists and bulleted references or links hold none.
    ("Lighthouse Service of Portugal", False),
    ("* Official site of the Berlenga Island Reserve", False),
    ("* Almeida, Rui. The Keepers of Berlenga (1999), ISBN 0000000000.", False),
    ("- a keeper's log of storms and repairs", False),
])
def test_names_and_bullets_count_as_prose_only_with_a_clause(sentence, prose):
    assert reads_as_prose(sentence) is prose


@pytest.mark.parametrize(("question", "subject"), [
    ("Was Newton outraged?", ("Newton",)), ("Is Canada's official language Zulu?", ("Canada",)),
    ("Is it true that Abraham Lincoln was born in Kentucky?", ("Abraham", "Lincoln")),
    ("Is the Giant Panda a mammal?", ("Giant", "Panda")),  # past the determiner
    ("Do penguins have many predators?", ("penguins",)), ("Does a polar bear live in the Arctic?", ("polar", "bear")),  # a noun's head
    ("Is it true that the otter eats urchins?", ("otter",)),
    # past an adjunct the framed statement opens with, not "On March" or "Instead"
    ("Is it true that on March 1, 2017 Powell was named one of three applicants?", ("Powell",)),
    ("Is it true that instead of attending his local school, Lecque enrolled in the Bronx?", ("Lecque",)),
    ("Is it true that in 2018 the film was selected for preservation?", ("film",)),
    ("Is it true that in 1919 Canada joined the League of Nations?", ("Canada",)),
    ("Is it true that staring at the prospect of losing the team, the state agreed to fund the arena?", ("state",)),
    ("Are Various trees claimed to be the apple tree?", ("various", "trees")),  # a quantifier is not a name
    # a name in apposition is what the subject is; a bracket is no name
    ("Is it true that his grandson, Clive Uhr, became a noted radiologist?", ("clive", "uhr")),
    ("Is the largest living species the emperor penguin (aptenodytes forsteri)?", ("largest", "living", "species")),
    ("Is it true that the busy centre works with young people?", ("busy", "centre")),  # control: no apposition
    # controls: a pronoun or "there" names nothing; a question of another shape has no yes/no subject
    ("Is it true that he won the prize?", ()), ("Was she married?", ()), ("Are there otters in Chile?", ()), ("Who was Newton?", ()),
    # the reader asks about the thing the verb acts on, not about "I"
    ("Can I import curses out of the box on Windows?", ("curses",)), ("Should you use io.open() when porting?", ("io.open",)),
    ("Can I make a socket non-blocking?", ("socket",)),
    # code and notation stay as written
    ("Does f.close() close the file descriptor?", ("f.close",)), ("Does the % operator yield the remainder?", ("%", "operator")),
])
def test_what_a_yes_no_question_is_about(question, subject):
    assert question_subject(question) == subject


def test_a_text_names_the_subject_by_every_word_of_a_name_and_the_head_of_a_noun():
    assert names_subject(("Giant", "Panda"), "Pandas eat bamboo.", title="Giant Panda") and names_subject(("penguins",), "The penguin dives.")
    assert not names_subject(("Nairobi",), "Most of its speakers have fled to Kenya.")  # control: another place
    assert names_subject(("John", "Adams"), "John Adams was elected.") and not names_subject(("John", "Adams"), "John Stockwell met Adam Curtis.")
    assert not names_subject(("Qatar", "University"), "He founded the private University of Buffalo.")  # every word of the name
    assert names_subject(("polar", "bear"), "Young bears stay with their mother.", title="Polar bear")
    assert not names_subject(("polar", "bear"), "Mammals found in Finland are the Brown Bear and the Gray Wolf.", title="Finland")  # another bear
    assert names_subject(("U.S.",), "but the U.S. never joined") and not names_subject(("U.S.",), "the League went into operation")
    assert names_subject((), "anything")  # no subject: every text may speak to it
    # code and notation as written, a code span's backquotes aside, in any case; control: the letters alone do not
    assert names_subject(("call", "x.f"), "In our example, the call `x.f()` is exactly equivalent to `MyClass.f(x)`.")
    assert not names_subject(("call", "x.f"), "The call of f on x returns a value.")
    assert names_subject(("-o", "switch"), "The `-O` switch removes assert statements.") and not names_subject(("-o", "switch"), "The switch removes them.")
    assert names_subject(("%", "operator"), "The `%` (modulo) operator yields the remainder.") and not names_subject(("%", "operator"), "The operator yields it.")


def test_a_question_names_a_title_by_its_words_or_a_longer_form_of_them():
    assert names_a_title("Who assassinated Lincoln?", ["Abraham Lincoln", "Ulysses S. Grant"])
    assert names_a_title("What do beetles eat?", ["Beetle"])  # stems
    assert names_a_title("Which metals were in the Voltaic Pile?", ["Volta"])  # a longer form of a title word
    assert not names_a_title("What is the largest city in Romania?", ["Ulysses S. Grant", "Wolf"])  # control: another subject
    assert not names_a_title("Who was he?", ["The Age"])  # words of three letters or fewer must match whole


def test_a_statement_that_only_says_what_kind_its_subject_is_gives_that_kind():
    from llmwiki.text.questions import kind_asked

    assert kind_asked("A kangaroo is a reptile.", ("kangaroo",)) == "reptile"
    assert kind_asked("Otters are herbivores.", ("otters",)) == "herbivores"
    assert kind_asked("A kangaroo is a fast reptile.", ("kangaroo",)) is None  # more than a kind
    assert kind_asked("Kangaroos live in Australia.", ("kangaroos",)) is None  # no "is"
    assert kind_asked("A kangaroo is a reptile.", ("wallaby",)) is None  # another subject


def test_a_sentence_that_opens_by_saying_what_its_subject_is_gives_the_kind_and_the_words_before_it():
    from llmwiki.text.questions import kind_said

    assert kind_said("A kangaroo is a marsupial from the family Macropodidae (macropods).", ("kangaroo",)) == ("marsupial", ())
    assert kind_said("Otters are amphibious (or in one case aquatic) carnivorous mammals.", ("otters",)) == ("mammals", ("amphibious", "carnivorous"))
    assert kind_said("Penguins (order Sphenisciformes) are a group of aquatic, flightless birds living in the south.", ("penguins",)) == ("birds", ("aquatic", "flightless"))
    assert kind_said("Male kangaroos are marsupials.", ("kangaroo",)) is None  # the subject is more than the question's
    assert kind_said("Some kangaroos are marsupials.", ("kangaroo",)) is None  # what some are
    assert kind_said("Kangaroos are not reptiles.", ("kangaroo",)) is None  # what it is not
    assert kind_said("The polar bear is a vulnerable species at high risk.", ("polar", "bear")) is None  # a group, no kind
    assert kind_said("No kangaroos are reptiles.", ("kangaroo",)) is None  # what none is
    assert kind_said("Kangaroos are marsupials or rodents.", ("kangaroo",)) is None  # one kind or another
    assert kind_said("Kangaroos are marsupials.", ("kangaroo",)) == ("marsupials", ())  # control: plural against singular
    assert kind_said("Spiders are air-breathing arthropods that have eight legs.", ("spiders",)) == ("arthropods", ("air-breathing",))
    assert kind_said("Sharks are a group of elasmobranch fish characterized by a cartilaginous skeleton.", ("sharks",)) == ("fish", ("elasmobranch",))
    assert kind_said("Dinosaurs were large armored reptiles.", ("dinosaurs",)) == ("reptiles", ("large", "armored"))  # control: "-ed" before the kind


@pytest.mark.parametrize(("question", "answer", "plain"), [
    # a name written as code answers "which variable / option / file", the way a capitalised name answers "who"
    ("Which environment variable sets the terminal type on start-up?",
     "GNUTERM, if defined, is used to set the terminal type on start-up.", "It, if defined, is used to set the terminal type on start-up."),
    ("Which configure option builds CPython with the static markers?",
     "CPython must then be built with `--with-dtrace` to get the static markers.", "CPython must then be built with care to get the static markers."),
    ("Which file does the fit command write its results to?",
     'The fit command writes its results to "fit.log" unless told otherwise.', "The fit command writes its results to disk unless told otherwise."),
])
def test_a_name_written_as_code_answers_which_command_option_or_file(question, answer, plain):
    scores = dict((index, score) for score, index in rank_sentences(question, [plain, answer]))
    assert scores[1] - scores[0] >= 0.3  # the answer's bonus
    # control: a question about something that is not named in code gives neither a bonus
    other = dict((index, score) for score, index in rank_sentences("What happens on start-up?", [plain, answer]))
    assert abs(other[1] - other[0]) < 0.3
