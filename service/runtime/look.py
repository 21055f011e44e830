"""A federation's look on the pages (D52): the site's title, the federation's name, a logo
and an accent colour, from the settings (RATING_SITE_TITLE, RATING_FEDERATION_NAME,
RATING_LOGO_URL, RATING_ACCENT_COLOUR), shown in the header of every page.

The CSP (edge.py) forbids inline styles, so the accent reaches the pages as a stylesheet of
this server's, `/look.css` (lookcss.py: custom properties the static stylesheet uses); a logo on another
host is allowed by its origin in the pages' `img-src`, nothing wider. The accent is the
header's background under white text: refused unless it contrasts at least 4.5:1 with white
(WCAG 2.2 AA for text, 1.4.3), computed here (`contrast`)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import msgspec

AA = 4.5  # WCAG 2.2 1.4.3: the least contrast of normal text with its background
WHITE = "#ffffff"
DEFAULT_ACCENT = "#0a4fa3"
HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
MAX_TEXT = 80  # characters of a title or a federation's name


class Look(msgspec.Struct, frozen=True):
    """What the header shows; the defaults are the service's own plain look."""

    site_title: str = "Ratings"
    federation: str = ""
    logo_url: str = ""
    accent: str = DEFAULT_ACCENT

    @property
    def logo_origin(self) -> str | None:
        """The logo's origin when it is on another host (for the CSP's img-src)."""
        parts = urlsplit(self.logo_url)
        return f"{parts.scheme}://{parts.netloc}" if parts.scheme else None


def rgb(colour: str) -> tuple[int, int, int]:
    """#rgb or #rrggbb as (r, g, b), 0-255."""
    digits = colour[1:]
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def luminance(colour: str) -> float:
    """WCAG 2.2 relative luminance of an sRGB colour."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2.2 contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def check_accent(raw: str) -> str:
    """The accent as #rrggbb (lower case); ValueError saying why not."""
    if not HEX.fullmatch(raw):
        raise ValueError("not a colour: give it as #rrggbb (or #rgb), e.g. #0a4fa3")
    colour = "#" + "".join(f"{c:02x}" for c in rgb(raw))
    ratio = contrast(colour, WHITE)
    if ratio < AA:
        raise ValueError(
            f"contrast with the header's white text {ratio:.2f}:1, below {AA}:1 (WCAG AA): "
            "choose a darker colour"
        )
    return colour


def check_logo_url(raw: str) -> str:
    """An https URL, or a path on this server ("/..."); ValueError saying why not."""
    parts = urlsplit(raw)
    if any(c.isspace() or c in "\"'<>()\\" for c in raw):
        raise ValueError("a URL without spaces, quotes, brackets or backslashes")
    if parts.scheme == "https" and parts.netloc:
        return raw
    if not parts.scheme and not parts.netloc and raw.startswith("/") and not raw.startswith("//"):
        return raw
    raise ValueError("an https:// URL or a path on this server starting with / (e.g. /logo.svg)")


def check_text(raw: str) -> str:
    """A title or a name: one line, at most MAX_TEXT characters."""
    if len(raw) > MAX_TEXT or any(not c.isprintable() for c in raw):
        raise ValueError(f"one line of at most {MAX_TEXT} printable characters")
    return raw


def stylesheet(look: Look) -> bytes:
    """`/look.css`: the accent as the custom properties style.css reads."""
    return f":root {{ --accent: {look.accent}; --on-accent: {WHITE}; }}\n".encode()
