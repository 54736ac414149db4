"""Variable names of a formula kept verbatim through Python's and formulaic's parsers.

Python's parser normalises identifiers to Unicode NFKC (PEP 3131), and formulaic's parser
does the same to the factors it reads as Python: ``dose_µg`` written with the micro sign
(U+00B5) would come back as ``dose_μg`` with the Greek mu (U+03BC), a different variable
that looks the same. Before text is parsed, :class:`Verbatim` replaces every word that is not
pure ASCII by an ASCII placeholder (the same word, the same placeholder), and puts the user's
text back in what the parser returns, so a name always reads the variable written.

Examples
--------
>>> v = Verbatim("np.log(dose_µg)")
>>> v.protect("np.log(dose_µg)").isascii()
True
>>> v.restore(v.protect("np.log(dose_µg)")) == "np.log(dose_µg)"
True
"""

from __future__ import annotations

import re

__all__ = ["Verbatim"]

_WORD = re.compile(r"\w+")


class Verbatim:
    """Placeholders for the non-ASCII words of some texts (formulas, variable names).

    Parameters
    ----------
    *texts : str
        Texts whose non-ASCII words get placeholders; the placeholders (``_fdakpl_w0_``, ...) are
        chosen to appear in none of them (more texts may be protected later).

    Examples
    --------
    >>> v = Verbatim()
    >>> p = v.protect("a + âge")
    >>> p
    'a + _fdakpl_w0_'
    >>> v.restore(p)
    'a + âge'
    """

    def __init__(self, *texts: str) -> None:
        self._to: dict[str, str] = {}
        self._back: dict[str, str] = {}
        self._prefix = "_fdakpl_w"
        while any(self._prefix in t for t in texts):  # placeholders that appear in no text given
            self._prefix += "_"
        self._pattern = re.compile(re.escape(self._prefix) + r"\d+_")
        for t in texts:
            self.protect(t)

    def _placeholder(self, match: re.Match[str]) -> str:
        word = match.group(0)
        if word.isascii():
            return word
        if word not in self._to:
            p = f"{self._prefix}{len(self._to)}_"
            self._to[word], self._back[p] = p, word
        return self._to[word]

    def protect(self, text: str) -> str:
        """``text`` with every non-ASCII word replaced by its placeholder (ASCII only if the rest is).

        Raises
        ------
        ValueError
            If ``text`` (not given to the constructor) contains the placeholders' prefix.
        """
        if self._prefix in text:
            raise ValueError(f"{text!r} contains {self._prefix!r}; pass it to Verbatim() first")
        return _WORD.sub(self._placeholder, text)

    def restore(self, text: str) -> str:
        """``text`` with the placeholders replaced by the user's words.

        Examples
        --------
        >>> v = Verbatim("µ")
        >>> v.restore("unknown name '_fdakpl_w0_'")
        "unknown name 'µ'"
        """
        if not self._back:
            return text
        return self._pattern.sub(lambda m: self._back.get(m.group(0), m.group(0)), text)

    @property
    def active(self) -> bool:
        """Whether any word was replaced (else :meth:`protect` and :meth:`restore` change nothing)."""
        return bool(self._back)
