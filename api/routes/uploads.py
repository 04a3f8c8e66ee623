"""Reading an uploaded image file within the service's limits (a helper of the routers, not a router)."""

from __future__ import annotations

import numpy as np
from fastapi import UploadFile

from api.pipeline import decode_image
from api.settings import Settings


def read_image_upload(upload: UploadFile, settings: Settings, what: str = "image") -> np.ndarray:
    """The upload decoded to BGR; reads at most one byte past the limit, so a huge upload is refused early."""
    data = upload.file.read(settings.max_upload_bytes + 1)
    return decode_image(data, max_bytes=settings.max_upload_bytes, max_pixels=settings.max_image_pixels,
                        what=what)
