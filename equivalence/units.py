"""Units written after values: recognising them and giving each one canonical spelling.

A unit after a number is not a variable: ``5\\mathrm{~m}``, ``5 m``, ``3 m/s``, ``18\\,\\mathrm{cm}^2``
and ``5米`` are the number 5 (or 3, 18) with a unit. Two answers with the same unit compare by
value; with different units of the same dimension (``5 cm`` and ``50 mm``) the first is converted
with SymPy's units library; otherwise they are undecided.
"""
import re

# Unit symbols that may stand alone after a number ("5 m"). Letters that are common variable
# names in answers (a, b, c, x, t, A for options...) are not in this list.
SYMBOLS = (
    "km", "cm", "mm", "nm", "dm", "m", "kg", "mg", "g", "ms", "s", "min", "h", "hr", "L", "mL", "ml",
    "N", "kN", "J", "kJ", "W", "kW", "V", "kV", "Pa", "kPa", "Hz", "mol", "kWh",
)
_SYMBOL = "(?:" + "|".join(sorted(SYMBOLS, key=len, reverse=True)) + ")"
_POWER = r"(?:\^\s*\{?\s*-?[23]\s*\}?|[²³])?"
_FACTOR = _SYMBOL + _POWER
# "m", "m^2", "m/s", "km/h", "m/s^2", "kg·m/s^2": a product or quotient of unit symbols.
PHRASE = re.compile(_FACTOR + r"(?:\s*(?:/|\\cdot|·|\*)\s*" + _FACTOR + r")*(?![A-Za-z0-9])")
# What may follow a unit: the end, a separator, a closing bracket, a command, CJK text.
_AFTER = re.compile(r"\s*(?:$|[,;)\]}]|\\[a-zA-Z\\]|[\u3400-\u9fff]|(?:or|and)\b)")

CANONICAL = {
    "米": "m", "厘米": "cm", "毫米": "mm", "千米": "km", "公里": "km", "克": "g", "千克": "kg",
    "公斤": "kg", "秒": "s", "分钟": "min", "小时": "h", "平方米": "m^2", "平方厘米": "cm^2",
    "立方米": "m^3", "立方厘米": "cm^3", "升": "L", "毫升": "mL", "元": "yuan", "天": "day",
    "度": "degree", "弧度": "rad", "个": "", "人": "", "种": "", "次": "", "只": "", "条": "",
    "本": "", "件": "", "块": "", "辆": "", "张": "", "页": "",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m", "second": "s", "seconds": "s",
    "sec": "s", "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "minute": "min", "minutes": "min",
    "day": "day", "days": "day", "dollar": "dollar", "dollars": "dollar", "yuan": "yuan",
    "cm2": "cm^2", "cm3": "cm^3", "m2": "m^2", "m3": "m^3", "ml": "mL", "kmh": "km/h",
    "degree": "degree", "degrees": "degree", "deg": "degree", "radian": "rad", "radians": "rad",
    "liter": "L", "liters": "L", "litre": "L", "litres": "L", "gram": "g", "grams": "g",
    "kilogram": "kg", "kilograms": "kg", "inch": "in", "inches": "in", "foot": "ft", "feet": "ft",
    "mile": "mi", "miles": "mi", "pound": "lb", "pounds": "lb", "lbs": "lb", "cent": "cent",
    "cents": "cent", "unit": "", "units": "", "people": "", "students": "", "ways": "", "times": "",
}


def plain_unit_at(text, i, spaced):
    """The unit phrase starting at ``text[i]`` after a number, and where it ends; or None.

    A lone one-letter symbol needs a space before it ("5 m", not "5m", which is 5 times m).
    """
    match = PHRASE.match(text, i)
    if not match or not _AFTER.match(text, match.end()):
        return None
    phrase = match.group(0)
    if not spaced and len(phrase) == 1:
        return None
    return phrase, match.end()


def canonical(unit):
    """One spelling per unit: ``\\text{ cm}^2``, ``cm^{2}``, ``cm²`` and ``平方厘米`` are all ``cm^2``."""
    text = unit.strip()
    if text in CANONICAL:
        return CANONICAL[text]
    text = re.sub(r"\s+", "", text)
    text = text.replace("²", "^2").replace("³", "^3").replace("\\cdot", "·").replace("*", "·")
    text = re.sub(r"\^\{(-?\d)\}", r"^\1", text)
    parts = re.split(r"([/·])", text)
    out = []
    for part in parts:
        if part in ("/", "·"):
            out.append(part)
            continue
        base, _, power = part.partition("^")
        name = CANONICAL.get(base, CANONICAL.get(base.lower(), base)) if len(base) > 2 else base
        out.append(name + ("^" + power if power else ""))
    return "".join(out)


def canonical_set(units):
    """The distinct canonical units of an answer (counting words like "个" drop out)."""
    return sorted({name for name in (canonical(unit) for unit in units) if name})


# Canonical unit names that SymPy's units library knows (attribute names in sympy.physics.units).
_SYMPY_NAMES = {
    "m": "meter", "cm": "centimeter", "mm": "millimeter", "km": "kilometer", "dm": "decimeter",
    "nm": "nanometer", "g": "gram", "kg": "kilogram", "mg": "milligram", "s": "second",
    "ms": "millisecond", "min": "minute", "h": "hour", "hr": "hour", "day": "day", "L": "liter",
    "mL": "milliliter", "N": "newton", "J": "joule", "W": "watt", "V": "volt", "Pa": "pascal",
    "kPa": "kilopascal", "Hz": "hertz", "mol": "mole", "in": "inch", "ft": "foot", "mi": "mile",
    "lb": "pound",
}
_FACTOR_TEXT = re.compile(r"([A-Za-z]+)(?:\^(-?\d))?")


def conversion_factor(source, target):
    """The exact number q with 1 ``source`` = q ``target`` (``cm``, ``mm``: 10), or None.

    Uses SymPy's units library (``sympy.physics.units``) on canonical names built here from
    a fixed table; units of different dimensions, or unknown to the table, give None.
    """
    left, right = _sympy_unit(source), _sympy_unit(target)
    if left is None or right is None:
        return None
    from sympy.physics.units import convert_to

    ratio = convert_to(left, right) / right
    ratio = ratio.simplify() if not ratio.is_number else ratio
    if not ratio.is_number or not ratio.is_Rational or ratio <= 0:
        return None
    return ratio


def known_dimensions_differ(source, target):
    """True when both units are in the table and measure different things (cm vs s)."""
    left, right = _sympy_unit(source), _sympy_unit(target)
    if left is None or right is None:
        return False
    return conversion_factor(source, target) is None


def _sympy_unit(name):
    from sympy.physics import units as library

    result, divide = 1, False
    for part in re.split(r"([/·])", name):
        if part in ("/", "·"):
            divide = part == "/"
            continue
        match = _FACTOR_TEXT.fullmatch(part)
        if not match or match.group(1) not in _SYMPY_NAMES:
            return None
        unit = getattr(library, _SYMPY_NAMES[match.group(1)]) ** int(match.group(2) or 1)
        result = result / unit if divide else result * unit
    return result
