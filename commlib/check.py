"""Self-checks for exercises: right or wrong, and a hint when wrong.

Each chapter registers its questions in ``commlib/questions/chNN.py``; the
expected answer is computed by commlib, never typed in. A learner calls

>>> from commlib.check import check
>>> check("ch00.gbe_bytes", 125e6)          # 1 Gb/s in bytes per second
Right: 1.25e+08 B/s.
>>> check("ch00.gbe_bytes", 1e9)            # forgot bits vs bytes
Not yet. Your answer is 8 times the right one: did you mix bits and bytes (1 B = 8 b)?

A wrong answer gets the question's own hints first, then the factors the
collectives' formulas are made of: n/(n-1) or (n-1)/n for a count n of the
exercise (a factor (n-1)/n missing or extra), 2 or 1/2 (one of two phases or
directions); then generic ones for the unit slips this subject invites: bits vs
bytes (x8), kB vs KiB (x1.024), MB vs MiB (x1.049), GB vs GiB (x1.074), milli
vs micro (x1000), bytes vs MB (x10^6), bytes vs GB (x10^9), and for a percent a
fraction (x100), for a ratio a percent (x100); where the answer reads a model's
parameter count, a rounded count (340M for BERT-Large's 335 141 888). A slip is named only
when the answer's ratio to the right one lies within 0.3 % of its factor and
nearer to it than to any other explanation; a formula's factor comes first, so
that 16/15 = 1.067 at n = 16 is never taken for the GB-GiB slip (1.074).

A question may name *givens*: numbers of the exercise that a graded
assignment draws afresh for each student (:func:`draw`, seeded by the
student's id), so that neighbours get different numbers. The answer for a
student's own numbers is computed and checked the same way:

>>> draw("ch02.ring_bytes_gb", "s1234") == draw("ch02.ring_bytes_gb", "s1234")
True
>>> mine = draw("ch02.ring_bytes_gb", "s1234")
>>> check("ch02.ring_bytes_gb", expected("ch02.ring_bytes_gb", **mine), **mine).correct
True
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import numbers
import random
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["Given", "Question", "Result", "register", "check", "questions", "expected", "givens_of", "draw", "yours",
           "watch_answers", "unit_words", "exercise_means", "means_of", "exercise_shows", "shows_of", "presets_used",
           "preset_facts", "presets_named", "record_facts", "is_whole", "ABS_TOL"]


@dataclass(frozen=True)
class Given:
    """A number of an exercise that an assignment may draw differently for each student.

    ``name`` is a keyword argument of the question's ``solve`` (whose default
    is the book's value), ``values`` the values a student may draw, and
    ``text`` how one reads, with ``{}`` for the value (``"{} GPUs"``).
    """

    name: str
    values: tuple
    text: str


@dataclass(frozen=True)
class Question:
    """An exercise's answer: ``solve()`` computes it with commlib.

    ``hints`` is a tuple of ``(test, text)``: when ``test(given, expected)``
    is true for a wrong answer, ``text`` is shown. A test that takes a third
    argument gets the exercise's numbers as a dict (the book's values of the
    givens, or the student's own), so that it can compute the mistaken answer
    for the variant being checked. ``rel_tol`` is the relative tolerance for
    numbers; a whole number (``solve`` returns an int: a count) and other answers must compare equal.
    ``givens`` are the numbers a per-student variant changes: ``solve`` takes
    each as a keyword argument whose default is the book's value. ``means`` is
    code a graded notebook runs with the exercise because its text refers to
    something of the chapter (a calculator, a run, a table): each a code cell,
    run after the chapter's setup cell, whose first line is a comment saying
    what it shows.
    """

    id: str
    solve: Callable[..., Any]
    unit: str = ""
    rel_tol: float = 0.01
    hints: tuple[tuple[Callable[..., bool], str], ...] = ()
    hint: str = "Check the formula in the chapter and the units of each input."
    givens: tuple[Given, ...] = ()
    means: tuple[str, ...] = ()


#: How close to an answer of 0 a number must be (a relative tolerance accepts nothing else there).
ABS_TOL = 1e-12

#: Units whose symbol a sentence writes in words: "answer in times (×)", not "answer in x".
_UNIT_WORDS = {"x": "times (×)"}
_UNIT_SYMBOLS = {"x": "×"}


def unit_words(unit: str) -> str:
    """A question's unit as a sentence says it (``"x"`` -> ``"times (×)"``; others as they are).

    >>> unit_words("x"), unit_words("GB")
    ('times (×)', 'GB')
    """
    return _UNIT_WORDS.get(unit, unit)


@dataclass(frozen=True)
class Result:
    """What :func:`check` says: ``correct`` and a message for the learner."""

    correct: bool
    message: str

    def __repr__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return self.correct


_REGISTRY: dict[str, Question] = {}

#: Units a generic slip can explain: sizes, rates and times (a time is a size over a rate, so it
#: inherits their slips, as does a count of tokens computed to fill a time; a count, a ratio or a
#: share has no bits, directions or prefixes to mix up, so those slips are never suggested for it).
_SIZES = frozenset({"B", "kB", "MB", "GB", "MiB", "GiB", "KiB"})
_RATES = frozenset({"B/s", "GB/s", "Gb/s", "MB/s"})
_TIMES = frozenset({"s", "ms", "µs", "ns", "tokens"})   # and what is computed from a time (tokens to fill it)

#: Generic slips: (factor, what it suggests, the units it can happen in).
SLIP_UNITS = _SIZES | _RATES | _TIMES
_GENERIC = [
    (8.0, "did you mix bits and bytes (1 B = 8 b)?", _SIZES | _RATES | _TIMES),
    (2.0**10 / 1e3, "did you mix kB (10^3 B) and KiB (2^10 B)?", _SIZES | _RATES | _TIMES),
    (2.0**20 / 1e6, "did you mix MB (10^6 B) and MiB (2^20 B)?", _SIZES | _RATES | _TIMES),
    (2.0**30 / 1e9, "did you mix GB (10^9 B) and GiB (2^30 B)?", _SIZES | _RATES | _TIMES),
    (1000.0, "is a unit prefix off by 1000 (ms vs s, MB vs GB)?", _SIZES | _RATES | _TIMES),
    (1e6, "is a unit prefix off by a million (µs vs s, B vs MB)?", _SIZES | _RATES | _TIMES),
    (1e9, "is the answer in bytes (or ns) where GB (10^9 B) or s was asked?", _SIZES | _RATES | _TIMES),
    (100.0, "did you mix a fraction and a percent (x100)?", frozenset({"%"})),
    (100.0, "did you mix a ratio and a percent (x100)? A ratio is a plain number: 2.5 for 2.5 ×.", frozenset({"x"})),
]

#: How close an answer's ratio to the right one must lie to a slip's factor for the hint to name it
#: (tighter than a question's tolerance: n/(n-1) = 1.067 at n = 16 is 0.65 % from the GiB slip's 1.074).
SLIP_TOL = 0.003

#: A factor of two: what it suggests when the answer is twice, or half, the right one; the units it can
#: happen in (a formula's 2, as in the ring's 2(n-1)/n: one of two phases, or a link's two directions).
_TWO = ("twice the right one: did you count both phases, or both directions of the link, where one belongs?",
        "half the right one: is one of two phases or directions missing?",
        _SIZES | _RATES | _TIMES)


#: What an exercise without a self-check refers to of its chapter (a calculator, a table), by the exercise's
#: label: code cells a graded notebook runs with it, as a :class:`Question`'s ``means`` (see there).
_EXERCISE_MEANS: dict[str, tuple[str, ...]] = {}


def exercise_means(label: str, *code: str) -> None:
    """Register the ``means`` of an exercise that has no self-check (called by ``commlib/questions/chNN.py``):
    each a code cell whose first line is a comment saying what it shows."""
    for source in code:
        if not source.startswith("# "):
            raise ValueError(f"{label}: a means cell must open with a comment saying what it shows")
    _EXERCISE_MEANS[label] = tuple(code)


def means_of(label: str, chapter: str) -> tuple[str, ...]:
    """The means registered for exercise ``label`` of ``chapter`` (``"ch03"``); none if it has none."""
    try:
        importlib.import_module(f"commlib.questions.{chapter}")
    except ModuleNotFoundError:
        pass
    return _EXERCISE_MEANS.get(label, ())


#: What an exercise refers to that its chapter shows and a graded notebook copies as the book shows it (a table
#: or a figure the text does not call by its name), by the exercise's label: text that picks the chapter's cell
#: (a code cell whose stored output it is, or a Markdown cell whose tables it is).
_EXERCISE_SHOWS: dict[str, tuple[str, ...]] = {}


def exercise_shows(label: str, *cells: str) -> None:
    """Register what exercise ``label`` refers to of its chapter as the chapter shows it (called by
    ``commlib/questions/chNN.py``): for each, text found in the chapter's cell that shows it, such as the call
    that makes a table (``"staleness_views.lr_table("``) or a line of a Markdown table."""
    for text in cells:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{label}: a shown cell is picked by text found in it, got {text!r}")
    _EXERCISE_SHOWS[label] = tuple(cells)


def shows_of(label: str, chapter: str) -> tuple[str, ...]:
    """What :func:`exercise_shows` registered for exercise ``label`` of ``chapter`` (``"ch05"``); none if nothing."""
    try:
        importlib.import_module(f"commlib.questions.{chapter}")
    except ModuleNotFoundError:
        pass
    return _EXERCISE_SHOWS.get(label, ())


#: The code an exercise asks a student to write (a function), by the exercise's label: (name, the cell the student
#: fills, the book's reference solution as ``module:function``); a graded notebook collects the cell as a free
#: response graded by hand, with the book's solution and the reference's source as the rubric.
_EXERCISE_CODE: dict[str, tuple[str, str, str]] = {}


def exercise_code(label: str, name: str, stub: str, reference: str) -> None:
    """Register the code exercise ``label`` asks for (called by ``commlib/questions/chNN.py``): ``name`` names its
    free-response question, ``stub`` is the code cell the student fills (opening with a comment saying what to
    do), ``reference`` the book's solution as ``module:function`` (its source is the grader's rubric)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or not stub.startswith("# ") or ":" not in reference:
        raise ValueError(f"{label}: a code answer needs a name, a stub opening with a comment, and module:function")
    _EXERCISE_CODE[label] = (name, stub, reference)


def code_of(label: str, chapter: str) -> tuple[str, str, str] | None:
    """What :func:`exercise_code` registered for exercise ``label`` of ``chapter`` (``"ch08"``); None if nothing."""
    try:
        importlib.import_module(f"commlib.questions.{chapter}")
    except ModuleNotFoundError:
        pass
    return _EXERCISE_CODE.get(label)


def reference_source(reference: str) -> str:
    """The source of a reference solution named ``module:function`` (``commlib.lab.p2p:ring_allreduce``)."""
    module, function = reference.split(":", 1)
    return inspect.getsource(getattr(importlib.import_module(module), function))


#: Exercises that need the student's own run of the chapter's lab (its fitted numbers, its figures), by label:
#: why. A graded notebook says, under such an exercise, to run the chapter's lab first and answer from that run.
_EXERCISE_RUNS: dict[str, str] = {}


def exercise_needs_run(label: str, why: str) -> None:
    """Register that exercise ``label`` needs the student's own run of its chapter's lab, and ``why`` (what of the
    run it reads), called by ``commlib/questions/chNN.py``."""
    if not why.strip():
        raise ValueError(f"{label}: say what of the run the exercise reads")
    _EXERCISE_RUNS[label] = why


def run_needed(label: str, chapter: str) -> str:
    """What of its chapter's run exercise ``label`` reads (:func:`exercise_needs_run`); empty if it needs none."""
    try:
        importlib.import_module(f"commlib.questions.{chapter}")
    except ModuleNotFoundError:
        pass
    return _EXERCISE_RUNS.get(label, "")


_PRESET_TABLES = (("model", "MODELS"), ("link", "LINKS"), ("accelerator", "ACCELERATORS"))


class _Reading(dict):
    """A hardware table that notes each key read from it (see :func:`_reading_presets`)."""

    def __init__(self, table: dict, kind: str, seen: list, swap: dict) -> None:
        super().__init__(table)
        self.kind, self.seen, self.swap = kind, seen, swap

    def __getitem__(self, key: Any) -> Any:
        self.seen.append((self.kind, key))
        return self.swap.get((self.kind, key)) or super().__getitem__(key)


@contextmanager
def _reading_presets(swap: dict | None = None) -> Iterator[list]:
    """Note which records of the hardware tables (models, links, accelerators) the code inside reads, as
    ``(kind, key)`` in order; ``swap`` maps ``(kind, key)`` to a record read in its place (a mistake to
    reproduce, such as a rounded parameter count). Everything is restored on leaving."""
    from . import hardware

    seen: list = []
    swap = swap or {}
    saved = {name: getattr(hardware, name) for kind, table in _PRESET_TABLES for name in (kind, table)}

    def reader(kind: str) -> Callable:
        def read(key: str) -> Any:
            seen.append((kind, key))
            return swap.get((kind, key)) or saved[kind](key)
        return read

    try:
        for kind, table in _PRESET_TABLES:
            setattr(hardware, kind, reader(kind))
            setattr(hardware, table, _Reading(saved[table], kind, seen, swap))
        yield seen
    finally:
        for name, value in saved.items():
            setattr(hardware, name, value)


def presets_used(question_id: str, **givens: Any) -> list:
    """The records of the hardware tables a question's answer reads (its models, links, accelerators), in the
    order it first reads them, for the book's numbers or a student's own ``givens``.

    >>> [r.key for r in presets_used("ch00.min_tokens")]
    ['eth_200g', 'gpt2', 'a100']
    """
    from . import hardware

    q = _load(question_id)
    with _reading_presets() as seen:
        q.solve(**_givens(q, givens))
    return [getattr(hardware, kind)(key) for kind, key in dict.fromkeys(seen)]


def _grouped(count: int) -> str:
    """A whole number with its digits grouped in threes by thin spaces: ``1 557 611 200``."""
    return f"{count:,}".replace(",", "\u2009")


def preset_facts(question_id: str) -> list[str]:
    """What a student needs of the book's hardware tables to answer a question, one sentence (Markdown) each,
    from the records its answer reads: a model's exact parameter count, an accelerator's peak, a link as it is
    sold and its start-up latency (and its rate per direction where the bytes it carries are fewer than the
    figure sold says). A link's rate per direction is otherwise left to the student: converting it is part of
    many exercises.

    >>> preset_facts("ch00.gpt2xl_adam_gb")
    ['GPT-2 XL has 1\u2009557\u2009611\u2009200 parameters (`1_557_611_200` in Python).']
    """
    return record_facts(presets_used(question_id))


def record_facts(records: Iterable) -> list[str]:
    """The sentences of :func:`preset_facts` for records of the hardware tables (models, accelerators, links):
    models first, then accelerators, then links, each once."""
    from .hardware import Accelerator, Link, Model

    facts = []
    order = (Model, Accelerator, Link)
    for record in sorted(dict.fromkeys(records), key=lambda r: [isinstance(r, kind) for kind in order].index(True)):
        if isinstance(record, Model):
            facts.append(f"{record.name} has {_grouped(record.params)} parameters (`{record.params:_}` in Python).")
        elif isinstance(record, Accelerator):
            facts.append(f"The {record.name} computes at most {record.peak_flops / 1e12:g} TFLOP/s in dense "
                         f"{record.dtype} (`{record.peak_flops / 1e12:g}e12` FLOP/s).")
        elif isinstance(record, Link):
            rate = (f", which leaves {record.bandwidth / 1e9:.4g} GB/s per direction for data"
                    if record.payload_share != 1.0 else "")
            facts.append(f"{record.name}: sold as {record.vendor_figure}{rate}; a message's start-up latency "
                         f"is \u03b1 = {record.latency * 1e6:g} \u00b5s.")
    return facts


def _aliases(name: str) -> set[str]:
    """The ways a text names a record of the hardware tables, from its name: the name itself; without its
    parenthesis ("NVLink 5" for "NVLink 5 (B200/GB200, 18 links)", "BERT-Large" for "BERT-Large (uncased)");
    without a trailing lane count ("InfiniBand NDR" for "InfiniBand NDR 4x", "PCIe 4.0" for "PCIe 4.0 x16"); a
    technology and its rate or generation either way round ("100 Gb/s Ethernet", "NDR InfiniBand"); and for an accelerator's
    "H100 SXM5" its chip, "H100" (see :func:`presets_named`)."""
    bare = re.sub(r"\s*\([^)]*\)\s*$", "", name)
    found = {name, bare}
    lanes = re.sub(r"\s+(?:\d+x|x\d+)$", "", bare)
    found.add(lanes)
    swapped = re.fullmatch(r"(?P<what>[A-Za-z][\w-]*) (?P<rest>\d[\d.]* [kMGT]?b/s|[A-Z]{3})", lanes)
    if swapped:
        found.add(f"{swapped.group('rest')} {swapped.group('what')}")
    return {a for a in found if a}


def presets_named(text: str) -> list:
    """The records of the hardware tables (models, accelerators, links) a text names, in the order it first
    names them: by name or a shorter form of it (:func:`_aliases`), an accelerator also by its chip ("H100"),
    the longest name first where names overlap ("NVLink 4.0 (H100, 18 links)" is a link, not the GPU). A form
    that two records share names neither.

    >>> [r.key for r in presets_named("Eight ranks on 100 Gb/s Ethernet, then NDR InfiniBand and an H100.")]
    ['eth_100g', 'ib_ndr', 'h100']
    """
    from . import hardware

    owners: dict[str, set] = {}
    for table in (hardware.MODELS, hardware.LINKS, hardware.ACCELERATORS):
        for record in table.values():
            forms = _aliases(record.name)
            if table is hardware.ACCELERATORS:
                forms.add(record.name.split()[0])
            for form in forms:
                owners.setdefault(form, set()).add(record)
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Any]] = []
    plain = re.sub(r"\\,|\\ |~", " ", text)
    for form in sorted((f for f, rs in owners.items() if len(rs) == 1), key=len, reverse=True):
        pattern = r"(?<![\w.])" + r"\s+".join(re.escape(word) for word in form.split()) + r"s?(?![\w])"   # "H100s" too
        for m in re.finditer(pattern, plain):
            if not any(m.start() < end and start < m.end() for start, end in taken):
                taken.append((m.start(), m.end()))
                found.append((m.start(), next(iter(owners[form]))))
    return list(dict.fromkeys(record for _, record in sorted(found, key=lambda f: f[0])))


def register(question: Question) -> Question:
    """Add a question to the registry (called by ``commlib/questions/chNN.py`` at import)."""
    defaults = _book_values(question)
    for g in question.givens:
        if g.name not in defaults:
            raise ValueError(f"{question.id}: given {g.name!r} is not a keyword argument of solve with a default")
        if len(g.values) < 2 or g.text.format(g.values[0]) == g.text:
            raise ValueError(f"{question.id}: given {g.name!r} needs at least two values and a text with {{}} for one")
    _REGISTRY[question.id] = question
    return question


def _book_values(q: Question) -> dict[str, Any]:
    """The keyword arguments of ``q.solve`` with their defaults: the book's numbers."""
    return {name: p.default for name, p in inspect.signature(q.solve).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _load(question_id: str) -> Question:
    if not isinstance(question_id, str) or "." not in question_id:
        raise ValueError(f"question_id must look like 'ch02.ring_time', got {question_id!r}")
    if question_id not in _REGISTRY:
        chapter = question_id.split(".", 1)[0]
        try:
            importlib.import_module(f"commlib.questions.{chapter}")
        except ModuleNotFoundError:
            pass
    if question_id not in _REGISTRY:
        raise ValueError(f"unknown question_id {question_id!r}")
    return _REGISTRY[question_id]


def questions(chapter: str | None = None) -> list[str]:
    """The registered question ids (of one chapter, e.g. ``"ch02"``, after loading it)."""
    if chapter is not None:
        importlib.import_module(f"commlib.questions.{chapter}")
        return sorted(q for q in _REGISTRY if q.startswith(chapter + "."))
    return sorted(_REGISTRY)


def expected(question_id: str, **givens: Any) -> Any:
    """The answer commlib computes for a question (used by teachers and tests), for the book's
    numbers or for the ``givens`` named (a student's own, from :func:`draw`)."""
    q = _load(question_id)
    return q.solve(**_givens(q, givens))


def _givens(q: Question, givens: dict[str, Any]) -> dict[str, Any]:
    names = {g.name for g in q.givens}
    for name in givens:
        if name not in names:
            raise ValueError(f"{q.id} has no given {name!r}; its givens are {sorted(names) or 'none'}")
    return givens


def givens_of(question_id: str) -> tuple[Given, ...]:
    """The numbers of a question that an assignment draws per student (none for most questions)."""
    return _load(question_id).givens


def draw(question_id: str, student: Any) -> dict[str, Any]:
    """A student's own numbers for a question: the same for the same student id; where the
    question has givens, with an answer other than the book's and, most likely, a neighbour's.

    The seed is a SHA-256 hash of the question id and the student id, so the draw is the same on
    any machine and in any Python. A question without givens gives ``{}``.
    """
    q = _load(question_id)
    if student is None or student is ... or not str(student).strip() or isinstance(student, bool):
        raise ValueError(f"student must be your student id (a non-empty text), got {student!r}: "
                         "type it in the student_id cell at the top")
    if not q.givens:
        return {}
    digest = hashlib.sha256(f"{q.id}|{str(student).strip()}".encode()).digest()
    rng = random.Random(int.from_bytes(digest, "big"))
    book = q.solve()
    for _ in range(64):
        mine = {g.name: rng.choice(g.values) for g in q.givens}
        if not _agrees(q, q.solve(**mine), book):
            return mine
    raise ValueError(f"{q.id}: its givens' values only repeat the book's answer")


def _agrees(q: Question, given: Any, want: Any) -> bool:
    """Whether ``given`` passes for ``want`` (within the question's tolerance for numbers)."""
    if _is_number(want) and _is_number(given):
        if is_whole(want):
            return float(given) == float(want)
        return math.isclose(float(given), float(want), rel_tol=q.rel_tol, abs_tol=ABS_TOL)
    return given == want


def yours(question_id: str, student: Any) -> str:
    """A student's own numbers for a question, in words (``"Your numbers: 12 GPUs, a 3 GB buffer."``)."""
    q = _load(question_id)
    try:
        mine = draw(question_id, student)
    except ValueError as exc:
        return _Text(f"No numbers yet: {exc}.")
    if not mine:
        return _Text("The book's numbers: this question is the same for everyone.")
    words = ", ".join(g.text.format(mine[g.name]) for g in q.givens)
    return _Text(f"Your numbers: {words}. Everything else as in the exercise; answer in {unit_words(q.unit) or 'the unit asked'}.")


class _Text(str):
    """A text that a notebook shows as it is (no quotes)."""

    def __repr__(self) -> str:
        return str(self)


def is_whole(x: Any) -> bool:
    """Whether an answer is a whole number (an int, numpy's too, not a bool; a count, most often): checked
    exactly, never within a tolerance.

    >>> is_whole(6), is_whole(6.0), is_whole(True)
    (True, False, False)
    """
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    if isinstance(x, (str, bytes, bool)):
        return False
    return isinstance(x, (int, float)) or hasattr(x, "__float__")


def _fmt(x: Any, unit: str) -> str:
    text = f"{x:.4g}" if isinstance(x, float) else str(x)
    return f"{text} {_UNIT_SYMBOLS.get(unit, unit)}".strip()


#: The error each answer's cell raised, by the name it assigns (filled by :func:`watch_answers`).
_CELL_ERRORS: dict[str, str] = {}
_ASSIGNS = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)", re.M)


def watch_answers(shell: Any) -> bool:
    """Remember which answer cells of a notebook raised an error, and the error (graded notebooks).

    A cell that raises assigns nothing, so a graded test finds no answer; with this hook on the
    notebook's ``shell`` (``get_ipython()`` in a notebook; an IPython ``post_run_cell`` event,
    registered once) :func:`check` can say what the cell raised instead of "no answer yet".
    Returns whether there was a shell to watch (None outside a notebook).
    """
    if shell is None or not hasattr(shell, "events"):
        return False
    for callback in list(shell.events.callbacks.get("post_run_cell", [])):
        if getattr(callback, "__name__", "") == "_remember_cell_error":
            shell.events.unregister("post_run_cell", callback)
    shell.events.register("post_run_cell", _remember_cell_error)
    return True


def _remember_cell_error(result: Any) -> None:
    error = result.error_before_exec or result.error_in_exec
    info = getattr(result, "info", None)
    for name in _ASSIGNS.findall(getattr(info, "raw_cell", "") or ""):
        if error is None:
            _CELL_ERRORS.pop(name, None)
        else:
            _CELL_ERRORS[name] = f"{type(error).__name__}: {error}"


def check(question_id: str, answer: Any, *, answer_name: str | None = None, **givens: Any) -> Result:
    """Say whether ``answer`` is right for ``question_id``; if not, give a hint.

    ``givens`` are a student's own numbers (from :func:`draw`); without them, the book's.
    ``answer_name`` is the variable a graded notebook asks the answer in: when its cell raised an
    error (seen by :func:`watch_answers`), the message says so and quotes the error.

    >>> _CELL_ERRORS["gbe_bytes"] = "SyntaxError: invalid syntax"
    >>> check("ch00.gbe_bytes", None, answer_name="gbe_bytes")
    Not yet: your cell raised an error: SyntaxError: invalid syntax. Fix it and run it again.
    >>> del _CELL_ERRORS["gbe_bytes"]
    """
    q = _load(question_id)
    want = q.solve(**_givens(q, givens))
    values = {**_book_values(q), **givens}   # the numbers of this variant, for hints that compute a mistake
    if answer is None and answer_name in _CELL_ERRORS:
        return Result(False, f"Not yet: your cell raised an error: {_CELL_ERRORS[answer_name]}. "
                             "Fix it and run it again.")
    if answer is None or answer is ...:
        return Result(False, "No answer yet: replace the placeholder with your answer"
                             + (f" (in {unit_words(q.unit)})." if q.unit else "."))
    answer = _one_number(answer)
    if _is_number(want):
        if isinstance(answer, _Many):
            return Result(False, f"Not yet: give one number{' in ' + unit_words(q.unit) if q.unit else ''}, "
                                 f"not {answer.size} of them.")
        if not _is_number(answer):
            return Result(False, f"Not yet. The answer is a number{' in ' + unit_words(q.unit) if q.unit else ''}; "
                                 f"got {answer!r}.")
        given, right = float(answer), float(want)
        if math.isnan(given) or math.isinf(given):   # nan == nothing: say so rather than miss with a hint
            what = "not a number (NaN)" if math.isnan(given) else f"infinite ({given})"
            return Result(False, f"Not yet: your answer is {what}. Check the cell that computes it "
                                 f"(a 0/0, an inf - inf, or a division by zero?) and give one finite number"
                                 f"{' in ' + unit_words(q.unit) if q.unit else ''}.")
        if is_whole(want):   # a count is exact: 1 % of 134 workers would accept 133 and 135
            if not given.is_integer():
                return Result(False, f"Not yet. The answer is a whole number"
                                     f"{' of ' + unit_words(q.unit) if q.unit else ''}; got {answer!r}.")
            if given == right:
                return Result(True, f"Right: {_fmt(want, q.unit)}.")
        elif math.isclose(given, right, rel_tol=q.rel_tol, abs_tol=ABS_TOL):
            return Result(True, f"Right: {_fmt(right, q.unit)}.")
        if givens and _own_hint(q, given, right, values) is None and _same_as_book(q, given):
            return Result(False, "Not yet. That is the answer for the exercise's own numbers; "
                                 "work it out again with yours (printed by yours(...)).")
        hint = _hint(q, given, right, values)
        return Result(False, f"Not yet. {hint}")
    if answer == want or (isinstance(answer, str) and isinstance(want, str)
                          and answer.strip().casefold() == want.casefold()):   # a name, in any case
        return Result(True, f"Right: {_fmt(want, q.unit)}.")
    return Result(False, f"Not yet. {_hint(q, answer, want, values)}")


class _Many:
    """An answer that holds several numbers (an array or a list of them) where one was asked."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return f"{self.size} numbers"


def _one_number(answer: Any) -> Any:
    """An answer as one number where it is an array or a list holding one (``np.array([1.75])`` is 1.75); a
    :class:`_Many` where it holds several numbers; anything else as it is.

    >>> _one_number([1.75]), _one_number((2,)), _one_number([1.0, 2.0]), _one_number("x")
    (1.75, 2, 2 numbers, 'x')
    """
    if isinstance(answer, (str, bytes, dict)) or answer is None or answer is ...:
        return answer
    size = getattr(answer, "size", None)
    if size is not None and getattr(answer, "ndim", 0) > 0:      # a numpy array (of any shape)
        return answer.reshape(-1)[0].item() if size == 1 else _Many(int(size))
    if isinstance(answer, (list, tuple)) and answer and all(_is_number(x) for x in answer):
        return answer[0] if len(answer) == 1 else _Many(len(answer))
    return answer


def _same_as_book(q: Question, given: float) -> bool:
    """Whether a number answers the exercise with the book's numbers (a student's own differ)."""
    book = q.solve(**_givens(q, {}))
    return _is_number(book) and _agrees(q, given, book)


def _takes_values(test: Callable) -> bool:
    """Whether a hint's test takes the exercise's numbers as a third argument."""
    try:
        params = inspect.signature(test).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def _own_hint(q: Question, given: Any, right: Any, values: dict[str, Any]) -> str | None:
    """The question's own hint for this wrong answer, if one of its tests recognises the mistake."""
    for test, text in q.hints:
        try:
            if test(given, right, values) if _takes_values(test) else test(given, right):
                return text
        except (TypeError, ValueError, ZeroDivisionError):
            continue
    return None


def _also_given(factor: float, values: dict[str, Any]) -> str:
    """A second reading of a unit slip's factor when one of the exercise's own numbers equals it.

    A ring's "forgot to divide by n" at n = 8 is also a factor of 8, the bits-and-bytes slip: the
    hint names both, so it does not send the student after the wrong one.

    >>> _also_given(8.0, {"n": 8, "size_gb": 1.0})
    ' Or: 8 is also n in this exercise; is a factor of n missing or extra?'
    >>> _also_given(8.0, {"n": 16})
    ''
    """
    names = [k for k, v in values.items()
             if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isclose(float(v), factor, rel_tol=1e-9)]
    if not names:
        return ""
    return f" Or: {factor:.4g} is also {' and '.join(names)} in this exercise; is a factor of {names[0]} missing or extra?"


def _counts(values: dict[str, Any]) -> list[tuple[str, int]]:
    """The exercise's whole numbers of 3 or more (a count n, of GPUs or hosts), by name: each makes
    n/(n-1) and (n-1)/n, the factors a ring's or a tree's formula is made of."""
    return [(k, v) for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 3]


def _formula_factors(q: Question, values: dict[str, Any]) -> list[tuple[float, str]]:
    """The factors the collectives' formulas are built of, from this exercise's own numbers, with
    what each suggests: n/(n-1) and (n-1)/n for each count n; 2 and 1/2 where the unit allows.

    >>> [round(f, 4) for f, _ in _formula_factors(_load("ch02.busbw_gbs"), {"algbw": 12.0, "n": 16})]
    [1.0667, 0.9375, 2.0, 0.5]
    """
    found = []
    for name, n in _counts(values):
        found.append((n / (n - 1), f"Your answer is {name}/({name}-1) = {n}/{n - 1} times the right one: "
                                   f"is a factor ({name}-1)/{name} missing?"))
        found.append(((n - 1) / n, f"Your answer is ({name}-1)/{name} = {n - 1}/{n} of the right one: "
                                   f"is a factor ({name}-1)/{name} too many, or {name}/({name}-1) missing?"))
    twice, half, units = _TWO
    if q.unit in units:
        found += [(2.0, f"Your answer is {twice}"), (0.5, f"Your answer is {half}")]
    return found


def _unit_slips(q: Question, values: dict[str, Any]) -> list[tuple[float, str]]:
    """The generic unit slips this question's unit can have, each way round, with their hints."""
    found = []
    for factor, text, units in _GENERIC:
        if q.unit in units:
            also = _also_given(factor, values)
            found.append((factor, f"Your answer is {factor:.4g} times the right one: {text}" + also))
            found.append((1 / factor, f"Your answer is 1/{factor:.4g} of the right one: {text}" + also))
    return found


def _nearest(ratio: float, candidates: list[tuple[float, str]]) -> tuple[float, str] | None:
    """The candidate whose factor lies nearest ``ratio`` (on a log scale), if within :data:`SLIP_TOL`."""
    if not candidates:
        return None
    distance, text = min((abs(math.log(ratio / f)), text) for f, text in candidates)
    return (distance, text) if distance <= math.log1p(SLIP_TOL) else None


def _rounded_counts(params: int) -> list[int]:
    """The counts a student may use in place of a model's exact ``params``: rounded, or cut, to one, two or
    three significant digits (a paper's "340M" for BERT-Large's 335 141 888, "1.5B" for GPT-2 XL).

    >>> _rounded_counts(1_557_611_200)
    [2000000000, 1000000000, 1600000000, 1500000000, 1560000000, 1550000000]
    """
    found = []
    for digits in (1, 2, 3):
        unit = 10 ** (len(str(params)) - digits)
        found += [round(params / unit) * unit, params // unit * unit]
    return [c for c in dict.fromkeys(found) if c != params]


def _rounded_count(q: Question, given: float, values: dict[str, Any]) -> str | None:
    """The hint for an answer computed from a rounded parameter count of a model the question reads, if
    one of :func:`_rounded_counts` gives it (within :data:`SLIP_TOL`) and the answer depends on the count (moving
    by at least a fifth of the count's own change: a ratio of two times barely does); else None. It comes before the unit
    slips, which the hint then adds (25 000 000 for ResNet-50's 25 557 032 is also within 0.3 % of 1/1.024, the
    kB-KiB slip)."""
    from . import hardware

    try:
        with _reading_presets() as seen:
            right = q.solve(**values)
    except (TypeError, ValueError):
        return None
    for kind, key in dict.fromkeys(seen):
        if kind != "model":
            continue
        record = hardware.model(key)
        for count in _rounded_counts(record.params):
            with _reading_presets({("model", key): replace(record, params=count)}):
                mistaken = q.solve(**values)
            if _is_number(right) and _is_number(mistaken) and float(right) and (
                    abs(float(mistaken) / float(right) - 1) < 0.2 * abs(count / record.params - 1)):
                continue    # the answer barely depends on the count (a ratio of two times): it explains no miss
            if _is_number(mistaken) and mistaken and math.isclose(given, float(mistaken), rel_tol=SLIP_TOL):
                return (f"That is the answer for {_grouped(count)} parameters, a rounded count: use the exact "
                        f"count given, {record.name}'s {_grouped(record.params)}.")
    return None


def _hint(q: Question, given: Any, right: Any, values: dict[str, Any] | None = None) -> str:
    """The hint for a wrong answer: the question's own; else a formula's factor (n/(n-1), 2) that the
    ratio matches; else a rounded parameter count that gives it; else the generic unit slip nearest the
    ratio, if it is nearer to it than to any formula's factor; else the question's general hint."""
    values = _book_values(q) if values is None else values
    own = _own_hint(q, given, right, values)
    if own is not None:
        return own
    if _is_number(given) and _is_number(right) and float(given) != 0 and float(right) != 0:
        ratio = float(given) / float(right)
        if ratio > 0:
            formula = _nearest(ratio, _formula_factors(q, values))
            if formula is not None:
                return formula[1]
            rounded = _rounded_count(q, float(given), values) if 0.5 < ratio < 2 else None   # a count to 1 digit or more
            slip = _nearest(ratio, _unit_slips(q, values))
            if rounded is not None:
                return rounded + (" Or: " + slip[1][0].lower() + slip[1][1:] if slip is not None else "")
            if slip is not None:
                return slip[1]
        if float(given) < 0 <= float(right) or float(right) < 0 <= float(given):
            return "The sign is wrong. " + q.hint
    return q.hint
