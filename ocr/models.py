"""Models of the ocr app."""
