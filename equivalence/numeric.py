"""Numeric helpers: high-precision values of SymPy expressions, decimal rounding checks."""
import mpmath
import sympy as sp

from .budget import attempt


def to_mpc(expr, digits=30):
    """``expr`` (free of symbols) as an mpmath complex number, or None if it has no finite value."""
    try:
        value = expr.evalf(digits)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, ArithmeticError, RecursionError):
        return None
    if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or value.free_symbols:
        return None
    try:
        real, imag = value.as_real_imag()
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return None
    if not (real.is_Number and imag.is_Number):
        return None
    prec = max(int(digits * 3.33) + 10, 53)
    with mpmath.workprec(prec):
        return mpmath.mpc(_mpf(real, prec), _mpf(imag, prec))


def _mpf(number, prec):
    if number == 0:
        return mpmath.mpf(0)
    return mpmath.mpf(sp.Float(number, max(prec // 3, 15))._mpf_)


def magnitude(value):
    return abs(value) if value is not None else None


def is_real(value, scale=None):
    scale = max(abs(value), mpmath.mpf(1)) if scale is None else scale
    return abs(value.imag) <= mpmath.mpf(10) ** -20 * scale


def close(a, b, rel_tol, abs_tol=mpmath.mpf(10) ** -20):
    return abs(a - b) <= max(rel_tol * max(abs(a), abs(b)), abs_tol)


def rounding_matches(literal, exact_value, budget):
    """Is the written decimal ``literal`` the exact value rounded or truncated at its last place?

    ``0.333`` and ``0.3333`` match 1/3 and ``3.1416`` matches pi; ``0.126`` does not match
    0.125 (its exact value has only three places and it is not that).
    """
    places_value = literal.value / literal.ulp  # an integer: the literal in units of its last place
    if not places_value.is_Integer:
        return False
    approx = attempt(budget, to_mpc, exact_value, 20)
    if approx is None:
        return False
    size = abs(approx) / mpmath.mpf(sp.Float(literal.ulp, 20)._mpf_)
    digits = int(mpmath.log10(size + 1)) + 20

    def quotient():
        return to_mpc(exact_value / literal.ulp, digits + 10)

    q = attempt(budget, quotient)
    if q is None or not is_real(q):
        return False
    with mpmath.workdps(digits + 10):
        x = q.real
        written = mpmath.mpf(int(places_value))
        nearest_down = mpmath.floor(x + mpmath.mpf("0.5"))
        nearest_up = mpmath.ceil(x - mpmath.mpf("0.5"))
        truncated = mpmath.floor(x) if x >= 0 else mpmath.ceil(x)
        return written in (nearest_down, nearest_up, truncated)


def format_value(value, digits=12):
    """A short human form of an mpmath number for explanations."""
    if value is None:
        return "undefined"
    if is_real(value):
        return mpmath.nstr(value.real, digits)
    return mpmath.nstr(value, digits)
