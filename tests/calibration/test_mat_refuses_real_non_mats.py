"""Real photographs with no tiddlywinks mat (coins, dominoes) are refused with a named error, never analysed.

Before these checks, three coin photos on a plain table 'calibrated' to a camera 7 000 km away and produced over
a hundred phantom winks.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from calibration.mat import MatNotFoundError, calibrate_from_mat

REAL = Path(__file__).resolve().parents[3] / "shared" / "real_images"
PHOTOS = sorted(REAL.glob("*/*.jpg"))


@pytest.mark.skipif(not PHOTOS, reason="../shared/real_images is not beside the checkout")
@pytest.mark.parametrize("path", PHOTOS, ids=lambda p: p.name)
def test_no_mat_is_found_in_a_real_photo_without_one(path: Path) -> None:
    frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
    with pytest.raises(MatNotFoundError, match="no mat-sized uniform region found"):
        calibrate_from_mat(frame)
