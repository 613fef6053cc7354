"""The browsable API (DRF's HTML pages under /api/) under the Content Security Policy.

The app's own pages carry no inline style (docs/security.md). DRF's page template writes the
same two style attributes (`float: right; margin-right: 10px`: the "Extra Actions" menu and the
"Filters" button) inside a large block; rather than copy that block, the browsable API's
responses allow exactly those two attribute values by hash (`'unsafe-hashes'` plus their
sha256), nothing else. Its `<style>` block of Pygments colours is left out by
templates/rest_framework/api.html (those colours only serve code in view descriptions).
"""
import base64
import hashlib
import math

from rest_framework.renderers import BrowsableAPIRenderer as DrfBrowsableAPIRenderer
from rest_framework.renderers import JSONRenderer as DrfJSONRenderer

DRF_STYLE_ATTRIBUTES = ("float: right; margin-right: 10px",)


def style_hash(value):
    return "'sha256-" + base64.b64encode(hashlib.sha256(value.encode()).digest()).decode() + "'"


class BrowsableAPIRenderer(DrfBrowsableAPIRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None:
            response._csp_update = {"style-src": ["'unsafe-hashes'", *map(style_hash, DRF_STYLE_ATTRIBUTES)]}
        return super().render(data, accepted_media_type, renderer_context)

    def get_context(self, data, accepted_media_type, renderer_context):
        context = super().get_context(data, accepted_media_type, renderer_context)
        context["code_style"] = None  # no inline <style> block (see the module docstring)
        return context


def finite_only(value):
    """`value` with every float that is not finite (inf, -inf, nan) replaced by None (null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_only(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_only(item) for item in value]
    return value


class JSONRenderer(DrfJSONRenderer):
    """DRF's JSON renderer, which refuses a float that is not finite (JSON has none) with a
    ValueError, a 500: a figure that is not a number is written as null instead (issue 40: one
    imported judge score of 1e308 overflowed a setting's metrics, and /api/review/metrics/
    answered 500 for everyone). Only an answer that holds one is walked again."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except ValueError:
            return super().render(finite_only(data), accepted_media_type, renderer_context)
