"""One UCB selection, one posterior read and one optimiser, checked on the source text.

Every UCB method selects through ``frontierbo.core.acquisition`` (``select_ucb``/``select_max``),
nothing outside ``core/gp.py`` reads the GP's private ``_var``, nothing outside ``core`` whitens
with ``ExactGP``'s private ``_whiten`` (pool posteriors are ``core.exact.PoolPosterior``), and
L-BFGS-B runs only in ``core`` (the fits and ``core.optimize``). A new algorithm that writes its
own argmax or optimiser, or a caller that reaches into the GP, fails here.
"""

import io
import re
import tokenize
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "frontierbo"

#: The files of the UCB algorithms (their selection must be core/acquisition's).
UCB_FILES = (
    "core/gp_ucb.py",
    "po/po_gp_ucb.py",
    "ldp/tgp_ucb.py",
    "ldp/nystrom.py",
    "ldp/ata_gp_ucb.py",
    "ldp/moma_gp_ucb.py",
    "quantum/q_gp_ucb.py",
    "quantum/linear.py",
)

#: A hand-written argmax, or the random-tie idiom ``flatnonzero(x == x.max())`` (the code is
#: read as tokens joined by spaces, so every pattern allows spaces between tokens).
OWN_ARGMAX = re.compile(r"\bargmax\s*\(|==\s*[\w\s.:\[\]]+?\.\s*max\s*\(\s*\)|\bargsort\s*\(")
PRIVATE_VAR = re.compile(r"\.\s*_var\b")
PRIVATE_WHITEN = re.compile(r"\.\s*_whiten\b")
OWN_OPTIMISER = re.compile(r"\bminimize\s*\(")
#: Token types whose text is not code (f-string pieces are tokens of their own from 3.12).
NOT_CODE = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)}


def _code(path: Path) -> str:
    """The file's code without comments and strings (docstrings quote the papers' argmax)."""
    kept = []
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    for tok in tokens:
        if tok.type not in NOT_CODE:
            kept.append(tok.string)
        if tok.type in (tokenize.NEWLINE, tokenize.NL):
            kept.append("\n")
    return " ".join(kept)


@pytest.mark.parametrize("name", UCB_FILES)
def test_ucb_algorithms_select_only_through_core_acquisition(name):
    path = SRC / name
    assert path.exists(), f"{name} moved: update UCB_FILES"
    code = _code(path)
    assert not OWN_ARGMAX.search(code), (
        f"{name} selects by itself; use frontierbo.core.acquisition.select_ucb / select_max"
    )


def test_nothing_outside_the_gp_reads_its_private_variance():
    offenders = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if path != SRC / "core" / "gp.py" and PRIVATE_VAR.search(_code(path))
    ]
    assert offenders == [], "read FiniteDomainGP.posterior_variance / posterior_std, not ._var"


def test_nothing_outside_core_whitens_or_runs_its_own_optimiser():
    outside = [p for p in sorted(SRC.rglob("*.py")) if (SRC / "core") not in p.parents]
    whiten = [str(p.relative_to(SRC)) for p in outside if PRIVATE_WHITEN.search(_code(p))]
    assert whiten == [], "use core.exact.PoolPosterior (or ExactGP.predict), not ExactGP._whiten"
    own = [str(p.relative_to(SRC)) for p in outside if OWN_OPTIMISER.search(_code(p))]
    assert own == [], "maximise acquisitions with core.optimize, fit with core.fit / kernel_fit"


def test_the_checks_catch_what_they_look_for():
    assert OWN_ARGMAX.search("i = int ( np . argmax ( s ) )")
    assert OWN_ARGMAX.search("best = np . flatnonzero ( ucb == ucb . max ( ) )")
    assert OWN_ARGMAX.search("best = np.flatnonzero(s == self._s[:n].max())")
    assert PRIVATE_VAR.search("s = np . maximum ( self . gp . _var , 0.0 )")
    assert not PRIVATE_VAR.search("self . _variance = 1")
    assert PRIVATE_WHITEN.search("V = gp . _whiten ( K )")
    assert OWN_OPTIMISER.search("res = minimize ( f , x0 , jac = True )")
