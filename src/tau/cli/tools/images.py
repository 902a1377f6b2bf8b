"""Images for the ``read`` tool, kept within what the providers accept.

An image is sent as it is when it fits: at most ``IMAGE_MAX_BYTES`` and, when Pillow can tell,
``IMAGE_MAX_SIDE`` pixels on its longer side. A bigger one is resized with Pillow (the
``[images]`` extra): first to the side limit, then, while it is still too heavy, re-encoded as
JPEG and shrunk. Without Pillow an image over the byte limit is refused with a message that says
how to get it resized. Pillow is imported only when an image is read.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from tau.cli.tools.truncate import format_size

if TYPE_CHECKING:
    from PIL.Image import Image

IMAGE_MAX_BYTES = 3_500_000
"""Raw bytes; base64 makes this about 4.7 MB, under the 5 MB most providers accept."""
IMAGE_MAX_SIDE = 2000
_MAX_PIXELS = 50_000_000
_MIN_SIDE = 64


class ImageTooLargeError(ValueError):
    """An image is over the limits and cannot be brought under them."""


@dataclass(slots=True)
class PreparedImage:
    """The bytes to send, their type, and a note for the model when they were changed."""

    data: bytes
    mime_type: str
    note: str | None = None


def prepare_image(handle: BinaryIO, size: int, mime_type: str, shown: str) -> PreparedImage:
    """The image in ``handle`` (``size`` bytes, sniffed as ``mime_type``), within the limits."""
    try:
        from PIL import Image as pil
        from PIL import UnidentifiedImageError
    except ImportError:
        if size > IMAGE_MAX_BYTES:
            raise ImageTooLargeError(
                f"Image {shown} is {format_size(size)}, over the {format_size(IMAGE_MAX_BYTES)} "
                "limit. Install Pillow (pip install 'tau[images]') to have large images resized."
            ) from None
        return PreparedImage(handle.read(), mime_type)
    try:
        image = pil.open(handle)
        width, height = image.size
    except UnidentifiedImageError:
        raise ValueError(
            f"Cannot read image {shown}: it is damaged or not really {mime_type}"
        ) from None
    except (OSError, ValueError, pil.DecompressionBombError) as exc:
        raise ValueError(f"Cannot read image {shown}: {exc}") from None
    if size <= IMAGE_MAX_BYTES and max(width, height) <= IMAGE_MAX_SIDE:
        handle.seek(0)
        return PreparedImage(handle.read(), mime_type)
    if width * height > _MAX_PIXELS:
        raise ImageTooLargeError(
            f"Image {shown} is {width}x{height} pixels, too large to resize "
            f"(the limit is {_MAX_PIXELS // 1_000_000} megapixels)"
        )
    try:
        data, out_type, final = _shrink(image, mime_type)
    except (OSError, ValueError) as exc:
        raise ValueError(f"Cannot resize image {shown}: {exc}") from None
    if len(data) > IMAGE_MAX_BYTES:
        raise ImageTooLargeError(
            f"Image {shown} stays over {format_size(IMAGE_MAX_BYTES)} even when shrunk"
        )
    note = (
        f"[Image resized from {width}x{height} ({format_size(size)}) to "
        f"{final[0]}x{final[1]} ({format_size(len(data))}) to fit the limits]"
    )
    return PreparedImage(data, out_type, note)


def _shrink(image: Image, mime_type: str) -> tuple[bytes, str, tuple[int, int]]:
    image.draft("RGB", (IMAGE_MAX_SIDE, IMAGE_MAX_SIDE))  # JPEG: decode at a reduced scale
    image.thumbnail((IMAGE_MAX_SIDE, IMAGE_MAX_SIDE))
    data, out_type = _encode(image, mime_type)
    if len(data) > IMAGE_MAX_BYTES and out_type != "image/jpeg":
        data, out_type = _encode(image, "image/jpeg")
    while len(data) > IMAGE_MAX_BYTES and min(image.size) > _MIN_SIDE:
        width, height = image.size
        image = image.resize((max(1, width * 3 // 4), max(1, height * 3 // 4)))
        data, out_type = _encode(image, "image/jpeg")
    return data, out_type, image.size


def _encode(image: Image, mime_type: str) -> tuple[bytes, str]:
    buffer = io.BytesIO()
    if mime_type == "image/jpeg":
        image.convert("RGB").save(buffer, "JPEG", quality=85)
        return buffer.getvalue(), "image/jpeg"
    image.save(buffer, "PNG")
    return buffer.getvalue(), "image/png"
