"""How many terms a formula expands to, counted from its syntax tree before formulaic expands it.

formulaic's parser builds a syntax tree in time linear in the text, but expanding it is not
bounded: ``(a+b+c+d+e+f+g+h)**8`` enumerates ``8**8`` (16.7 million) products of terms, a
64-character formula that runs for minutes (issue 26, item 3). :func:`check_expansion` walks
formulaic's syntax tree (:meth:`formulaic.parser.DefaultFormulaParser.get_ast`) and bounds, for
every operator, the number of terms it yields and the products of terms formulaic enumerates
to get them; a formula whose bound exceeds :data:`MAX_TERMS` is refused before formulaic
expands anything (a formula typed by the user and a formula read from a model file alike).

Examples
--------
>>> expansion_cost("y ~ x + (a + b)**2", n_variables=4)
14
>>> check_expansion("y ~ x + (a+b+c+d+e+f+g+h)**8", n_variables=10)
Traceback (most recent call last):
...
ValueError: the formula 'y ~ x + (a+b+c+d+e+f+g+h)**8' expands to more than 10000 terms (...); write ...
"""

from __future__ import annotations

import functools
import math
from typing import Any

__all__ = ["MAX_TERMS", "check_expansion", "expansion_cost"]

#: most terms (and products of terms formulaic enumerates) a formula may expand to
MAX_TERMS = 10_000


class _TooMany(Exception):
    pass


def _combine(symbol: str, parts: list[tuple[int, int]], node: Any) -> tuple[int, int]:
    """``(terms, work)`` of one operator from those of its arguments."""
    terms = [t for t, _ in parts]
    work = sum(w for _, w in parts)
    if symbol in {"**", "^"} and len(parts) == 2:
        base = terms[0]
        try:
            k = int(str(node.args[1]))
        except ValueError:
            return base, work  # formulaic refuses a power that is not an integer, before expanding
        if k < 1:
            return base, work
        # itertools.product of k copies of the terms: base**k products (and a k-tuple per product)
        if k > MAX_TERMS or (base > 1 and k * math.log(base) > math.log(MAX_TERMS)):
            raise _TooMany
        products = base ** k
        return (min(products, 2 ** min(base, 64) - 1) if base > 0 else 0), work + products * k
    if len(terms) == 1:
        out = terms[0]
    elif symbol == ":":
        out = terms[0] * terms[1]
    elif symbol == "*":
        out = terms[0] + terms[1] + terms[0] * terms[1]
    elif symbol == "/":
        out = terms[0] + terms[0] * terms[1]
    elif symbol in {"+", "-", "~", "|"}:
        return sum(terms), work  # unions of terms: no products formed
    else:  # any other operator: at most every combination of its arguments' terms
        out = math.prod(t + 1 for t in terms)
    return out, work + out


def _bound(root: Any, n_variables: int) -> tuple[int, int]:
    """``(terms, work)``: at most how many terms ``root`` yields and how many products formulaic forms for it
    (walked without recursion: a formula of 10,000 characters nests as deep as it likes)."""
    from formulaic.parser.types import ASTNode

    done: dict[int, tuple[int, int]] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if not isinstance(node, ASTNode):
            done[id(node)] = (1, 1)
            continue
        symbol = str(node.operator.symbol)
        if symbol == ".":
            done[id(node)] = (max(n_variables, 1), max(n_variables, 1))
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args)
            continue
        out = _combine(symbol, [done.pop(id(a), (1, 1)) for a in node.args], node)
        if out[0] > MAX_TERMS or out[1] > MAX_TERMS:
            raise _TooMany
        done[id(node)] = out
    return done[id(root)]


@functools.lru_cache(maxsize=128)
def expansion_cost(formula: str, n_variables: int = 0) -> int | None:
    """Upper bound on the terms and products formulaic forms when it expands ``formula`` (None: it does not parse,
    and formulaic will say why without expanding anything). Cached: a pure function of its two arguments, and a
    refit parses the same formula again.

    Parameters
    ----------
    formula : str
        The formula (names already protected, :mod:`fdakpl.formula.names`).
    n_variables : int
        Number of variables ``.`` stands for.

    Returns
    -------
    int or None

    Examples
    --------
    >>> expansion_cost("y ~ a * b * c")
    15
    """
    from formulaic.parser import DefaultFormulaParser

    try:
        node = DefaultFormulaParser().get_ast(formula)
    except RecursionError:
        raise
    except Exception:  # formulaic's syntax errors: said by formulaic itself, which then expands nothing
        return None
    if node is None:
        return 0
    try:
        return _bound(node, n_variables)[1]
    except _TooMany:
        return MAX_TERMS + 1


def check_expansion(formula: str, n_variables: int = 0, shown: str | None = None) -> None:
    """Refuse a formula that would expand to more than :data:`MAX_TERMS` terms, before it is expanded.

    Parameters
    ----------
    formula : str
        The formula as parsed (names protected).
    n_variables : int
        Number of variables ``.`` stands for.
    shown : str, optional
        The formula as the user wrote it, for the message.

    Raises
    ------
    ValueError
        If the bound exceeds :data:`MAX_TERMS`.

    Examples
    --------
    >>> check_expansion("y ~ (a + b + c)**3")
    """
    cost = expansion_cost(formula, n_variables)
    if cost is not None and cost > MAX_TERMS:
        raise ValueError(f"the formula {shown or formula!r} expands to more than {MAX_TERMS} terms (powers such as "
                         "(a + b + ...)**k multiply out every combination); write the interactions you need "
                         "explicitly, e.g. a:b + a:c")
