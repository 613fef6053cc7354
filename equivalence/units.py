"""Units written after values: recognising them and giving each one canonical spelling.

A unit after a number is not a variable: ``5\\mathrm{~m}``, ``5 m``, ``3 m/s``, ``18\\,\\mathrm{cm}^2``
and ``5米`` are the number 5 (or 3, 18) with a unit. Two answers with the same unit compare by
value; with different units of the same dimension (``5 cm`` and ``50 mm``) the first is converted
with SymPy's units library; otherwise they are undecided.
"""
import re
from fractions import Fraction

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
    "度": "degree", "弧度": "rad", "角": "jiao", "毛": "jiao",
    # Counting words (measure words): a count, not a currency or a length (12个 is not 12元).
    "个": "count:个", "人": "count:人", "种": "count:种", "次": "count:次", "只": "count:只",
    "条": "count:条", "本": "count:本", "件": "count:件", "辆": "count:辆", "张": "count:张",
    "页": "count:页", "岁": "age:岁",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m", "second": "s", "seconds": "s",
    "sec": "s", "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "minute": "min", "minutes": "min",
    "day": "day", "days": "day", "dollar": "dollar", "dollars": "dollar", "yuan": "yuan",
    "cm2": "cm^2", "cm3": "cm^3", "m2": "m^2", "m3": "m^3", "ml": "mL", "kmh": "km/h",
    "degree": "degree", "degrees": "degree", "deg": "degree", "radian": "rad", "radians": "rad",
    "liter": "L", "liters": "L", "litre": "L", "litres": "L", "gram": "g", "grams": "g",
    "kilogram": "kg", "kilograms": "kg", "inch": "in", "inches": "in", "foot": "ft", "feet": "ft",
    "mile": "mi", "miles": "mi", "pound": "lb", "pounds": "lb", "lbs": "lb", "cent": "cent",
    "cents": "cent", "unit": "", "units": "", "people": "count:人", "students": "count:人", "ways": "count:种",
    "times": "count:次",
}
# Currencies convert only within one system (元 = 10 角 = 100 分; dollar = 100 cents); 元 and
# dollars are both money but have no fixed rate: undecided, not "different quantities".
CURRENCY = {"yuan": ("CNY", Fraction(1)), "jiao": ("CNY", Fraction(1, 10)), "fen": ("CNY", Fraction(1, 100)),
            "dollar": ("USD", Fraction(1)), "cent": ("USD", Fraction(1, 100))}


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
    """The distinct canonical units of an answer ("unit", "units" drop out)."""
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
    if source in CURRENCY and target in CURRENCY:
        (system, value), (other, unit) = CURRENCY[source], CURRENCY[target]
        if system != other:
            return None
        import sympy  # lazy: SymPy takes seconds to load

        ratio = value / unit
        return sympy.Rational(ratio.numerator, ratio.denominator)
    left, right = _sympy_unit(source), _sympy_unit(target)
    if left is None or right is None:
        return None
    from sympy.physics.units import convert_to  # lazy: SymPy units load only for answers with units

    ratio = convert_to(left, right) / right
    ratio = ratio.simplify() if not ratio.is_number else ratio
    if not ratio.is_number or not ratio.is_Rational or ratio <= 0:
        return None
    return ratio


def unit_kind(name):
    """What a canonical unit measures: "money", "count", "age", "angle", "physical" or None (unknown)."""
    if name in CURRENCY:
        return "money"
    if name.startswith(("count:", "age:")):
        return name.split(":")[0]
    if name in ("degree", "rad"):
        return "angle"
    return "physical" if _sympy_unit(name) is not None else None


def known_dimensions_differ(source, target):
    """True when both units are known and measure different things (cm vs s, 个 vs 元, kg vs km).

    Two counting words (个, 人) or two currencies without a fixed rate (元, dollar) are not known
    to differ: those stay undecided.
    """
    left, right = unit_kind(source), unit_kind(target)
    if left is None or right is None:
        return False
    if left != right:
        return True
    if left == "physical":
        return conversion_factor(source, target) is None
    return False


def _sympy_unit(name):
    from sympy.physics import units as library  # lazy: SymPy units load only for answers with units

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


# --- compound amounts: 3元5角, 1小时30分钟, 2米5厘米 ------------------------------------------------------

# Each system: (unit as written, canonical, size in the smallest unit), largest first.
_COMPOUND_SYSTEMS = [
    [("元", "元", 100), ("块", "元", 100), ("角", "角", 10), ("毛", "角", 10), ("分", "分", 1)],
    [("小时", "小时", 3600), ("时", "小时", 3600), ("分钟", "分钟", 60), ("分", "分钟", 60), ("秒钟", "秒", 1), ("秒", "秒", 1)],
    [("千米", "千米", 1000000), ("公里", "千米", 1000000), ("米", "米", 1000), ("分米", "分米", 100), ("厘米", "厘米", 10), ("毫米", "毫米", 1)],
    [("吨", "吨", 1000000), ("千克", "千克", 1000), ("公斤", "千克", 1000), ("克", "克", 1)],
]
_AMOUNT = r"(\d+(?:\.\d+)?)\s*"


def _compound_pattern(system):
    names = "|".join(sorted((re.escape(written) for written, _, _ in system), key=len, reverse=True))
    return re.compile(r"(?<![\d.])" + _AMOUNT + f"({names})" + r"(?:\s*(\d+(?:\.\d+)?)\s*" + f"({names})" + r"){1,2}")


_COMPOUND_RES = [(_compound_pattern(system), {w: (c, size) for w, c, size in system}) for system in _COMPOUND_SYSTEMS]



def compound_amounts(text, notes=None):
    """``3元5角`` becomes ``(7/2)元`` (exact), ``1小时30分钟`` ``(3/2)小时``; units must go down in size."""
    for pattern, sizes in _COMPOUND_RES:
        text = pattern.sub(lambda match, sizes=sizes: _compound_value(match, sizes, notes), text)
    return text


def _compound_value(match, sizes, notes):
    written = match.group(0)
    parts = []
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([^\d\s.]+)", written):
        if unit not in sizes:
            return written
        parts.append((Fraction(amount), sizes[unit]))
    if len(parts) < 2 or any(later[1][1] >= earlier[1][1] for earlier, later in zip(parts, parts[1:])):
        return written  # 5角3元 is not an amount written largest first
    first_unit, first_size = parts[0][1]
    total = sum(amount * size for amount, (_, size) in parts) / first_size
    if notes is not None:
        notes.append(f"{written} = {_fraction_text(total)}{first_unit}")
    return f"({total.numerator}/{total.denominator}){first_unit}" if total.denominator != 1 else f"{total.numerator}{first_unit}"


def _fraction_text(value):
    if value.denominator == 1:
        return str(value.numerator)
    text = f"{float(value):.10g}"
    return text if Fraction(text) == value else f"{value.numerator}/{value.denominator}"
