"""From a linear radiance image to a camera JPEG: vignetting, defocus, motion blur, sensor noise, tone curve.

The order follows the light: the lens vignettes and blurs, the sensor collects photons (shot noise, Poisson in
electrons) and adds read noise, then the camera's tone curve, sRGB encoding, 8-bit quantisation and JPEG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True, slots=True, kw_only=True)
class PhotoSettings:
    """Camera pipeline parameters (defaults: a decent phone in room light)."""

    exposure: float = 1.0  # scales linear radiance before the sensor
    vignetting_ratio: float = 0.25  # fractional light loss at the image corner (cos^4-like falloff)
    defocus_sigma_px: float = 0.6  # Gaussian defocus, <= 1 px keeps edges detector-realistic
    motion_blur_px: float = 0.0  # length of a linear motion-blur streak
    motion_blur_angle_deg: float = 0.0
    full_well_electrons: float = 3000.0  # electrons at linear value 1.0 (sets shot noise)
    read_noise_electrons: float = 4.0
    chroma_noise_ratio: float = 0.3  # share of the noise that is independent per channel
    white_balance_gains: tuple[float, float, float] = (1.0, 1.0, 1.0)  # R, G, B
    tone_shoulder: float = 0.85  # linear value where highlights start to roll off
    jpeg_quality: int = 90

    def __post_init__(self) -> None:
        if self.exposure <= 0:
            raise ValueError(f"exposure must be positive, got {self.exposure}")
        if not 0.0 <= self.vignetting_ratio < 1.0:
            raise ValueError(f"vignetting_ratio must be in [0, 1), got {self.vignetting_ratio}")
        if self.defocus_sigma_px < 0 or self.motion_blur_px < 0:
            raise ValueError("blur sizes must be >= 0")
        if not 1 <= int(self.jpeg_quality) <= 100:
            raise ValueError(f"jpeg_quality must be in 1..100, got {self.jpeg_quality}")

    @classmethod
    def random(cls, rng: np.random.Generator, *, jpeg_quality_range: tuple[int, int] = (80, 95),
               motion_blur_probability: float = 0.15) -> PhotoSettings:
        mb = float(rng.uniform(1.0, 3.0)) if rng.random() < motion_blur_probability else 0.0
        return cls(exposure=float(rng.uniform(0.85, 1.15)),
                   vignetting_ratio=float(rng.uniform(0.1, 0.4)),
                   defocus_sigma_px=float(rng.uniform(0.35, 1.0)),
                   motion_blur_px=mb, motion_blur_angle_deg=float(rng.uniform(0, 180)),
                   full_well_electrons=float(rng.uniform(1200, 6000)),
                   read_noise_electrons=float(rng.uniform(2.0, 8.0)),
                   white_balance_gains=(float(rng.uniform(0.93, 1.07)), 1.0, float(rng.uniform(0.93, 1.07))),
                   jpeg_quality=int(rng.integers(jpeg_quality_range[0], jpeg_quality_range[1] + 1)))


def _motion_kernel(length_px: float, angle_deg: float) -> np.ndarray:
    n = math.ceil(length_px) | 1
    k = np.zeros((n + 2, n + 2), np.float32)
    c = (n + 1) / 2
    dx, dy = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    for t in np.linspace(-length_px / 2, length_px / 2, 4 * n + 1):
        x, y = c + t * dx, c + t * dy
        x0, y0 = math.floor(x), math.floor(y)
        fx, fy = x - x0, y - y0
        k[y0, x0] += (1 - fx) * (1 - fy)
        k[y0, x0 + 1] += fx * (1 - fy)
        k[y0 + 1, x0] += (1 - fx) * fy
        k[y0 + 1, x0 + 1] += fx * fy
    return k / k.sum()


def _tone(x: np.ndarray, shoulder: float) -> np.ndarray:
    """Linear below ``shoulder``, then a smooth roll-off towards 1 (no hard clipping of highlights)."""
    y = x.copy()
    hi = x > shoulder
    span = 1.0 - shoulder
    y[hi] = shoulder + span * (1.0 - np.exp(-(x[hi] - shoulder) / span))
    return y


def _srgb_encode(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def finish_photo(linear_rgb: np.ndarray, rng: np.random.Generator, *, settings: PhotoSettings) -> np.ndarray:
    """Linear RGB radiance ``(H, W, 3)`` (about 0..1) to an 8-bit BGR photograph."""
    img = np.asarray(linear_rgb, np.float32) * np.float32(settings.exposure)
    h, w = img.shape[:2]
    if settings.vignetting_ratio > 0:
        yy, xx = np.ogrid[0:h, 0:w]
        r2 = (((xx - (w - 1) / 2) / (w / 2)) ** 2 + ((yy - (h - 1) / 2) / (w / 2)) ** 2).astype(np.float32)
        r2c = ((h / w) ** 2 + 1.0)
        # cos^4-like: 1 / (1 + a r^2)^2 scaled so the corner loses ``vignetting_ratio``.
        a = (1.0 / math.sqrt(1.0 - settings.vignetting_ratio) - 1.0) / r2c
        img *= (1.0 / (1.0 + a * r2) ** 2)[..., None]
    if settings.defocus_sigma_px > 0.05:
        img = cv2.GaussianBlur(img, (0, 0), settings.defocus_sigma_px)
    if settings.motion_blur_px >= 0.5:
        img = cv2.filter2D(img, -1, _motion_kernel(settings.motion_blur_px, settings.motion_blur_angle_deg),
                           borderType=cv2.BORDER_REFLECT)
    img *= np.asarray(settings.white_balance_gains, np.float32)
    # Sensor: shot noise (Gaussian approximation of Poisson in electrons) plus read noise.
    fw = settings.full_well_electrons
    sigma = np.sqrt(np.clip(img, 0, None) * fw + settings.read_noise_electrons ** 2) / fw
    lum_noise = rng.standard_normal((h, w, 1), dtype=np.float32)
    chroma = rng.standard_normal((h, w, 3), dtype=np.float32)
    c = settings.chroma_noise_ratio
    noise = (math.sqrt(1 - c * c) * lum_noise + c * chroma) * sigma
    img = img + noise
    img = _tone(np.clip(img, 0.0, None), settings.tone_shoulder)
    out = np.round(_srgb_encode(img) * 255.0).astype(np.uint8)
    return np.ascontiguousarray(out[..., ::-1])


def encode_jpeg(bgr: np.ndarray, quality: int) -> bytes:
    """JPEG bytes of an 8-bit BGR image (4:2:0 chroma as cameras do)."""
    ok, buf = cv2.imencode(".jpg", bgr, [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise ValueError(f"JPEG encoding failed for an image of shape {bgr.shape}")
    return buf.tobytes()
