from .common import ImportFormatError, ImportResult
from .ineqmath import import_ineqmath
from .realmath import import_realmath

__all__ = ["ImportFormatError", "ImportResult", "import_ineqmath", "import_realmath"]
