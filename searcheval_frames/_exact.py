"""Arithmetic that rounds as trec_eval's C does (layer 0).

polars divides a column by a divisor it holds as one value (a literal such as the ``k``
of ``P@k``, or a column broadcast from one row) by multiplying with the reciprocal,
``x * (1/d)``, which can be an ulp off the IEEE quotient ``x / d``: ``3 * (1/5)`` is
0.6000000000000001 where trec_eval, pytrec_eval and Python give ``3 / 5 = 0.6``. A
value would then differ from the reference in its last bit and, printed with
``%.4f``, could round the other way at a tie. Every division by a constant in the
measures and every normalisation in fusion goes through :func:`true_divide`
(``sef.true_divide`` for custom measures).
"""

from __future__ import annotations

import polars as pl

__all__ = ["true_divide"]


def true_divide(num: pl.Expr, den: pl.Expr | float) -> pl.Expr:
    """``num / den`` element by element as Float64, each quotient rounded once.

    Parameters
    ----------
    num, den
        Expressions (``den`` may be a number). Usable wherever an expression is: a
        select, a ``group_by().agg`` (a custom measure), a lazy plan. A null operand
        gives null; ``x / 0`` gives ±inf or NaN as IEEE division does; ``num`` must be
        finite (an infinite numerator gives NaN).

    Returns
    -------
    polars.Expr
        :math:`q_i = \\mathrm{fl}(n_i / d_i)`, the correctly rounded quotient
        (IEEE 754 §5.4.1), as numpy's ``true_divide`` and C's ``/`` compute it.

    References
    ----------
    IEEE 754-2019, *Standard for Floating-Point Arithmetic*, §5.4.1 (division).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"hits": [3, 1, 7]})
    >>> df.select(pl.col("hits") / 5.0)["hits"].to_list()  # polars: x * (1/5)
    [0.6000000000000001, 0.2, 1.4000000000000001]
    >>> df.select(true_divide(pl.col("hits"), 5))["hits"].to_list()
    [0.6, 0.2, 1.4]
    """
    n = num.cast(pl.Float64)
    d = den.cast(pl.Float64) if isinstance(den, pl.Expr) else pl.lit(float(den))
    # ``n * 0 + d`` is the divisor as a column as long as the numerator (in a select, a
    # group's aggregate, a lazy plan alike), so polars divides element by element
    return n / (n * 0.0 + d)
