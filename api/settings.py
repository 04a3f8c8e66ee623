"""Service settings: one pydantic-settings class read from ``TABLEREF_*`` environment variables.

Behind the cached :func:`get_settings` dependency (STYLE §7), never a module-level instance, so tests can
build their own ``Settings`` or override the dependency.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # the issue: "an image over ... 25 MB" is refused
MAX_IMAGE_PIXELS = 40_000_000  # the issue: "an image over 40 megapixels" is refused


class Settings(BaseSettings):
    """Referee service configuration; every field can be set as ``TABLEREF_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="TABLEREF_", extra="ignore")

    token: str | None = Field(default=None, description="Bearer token for endpoints that change things; "
                              "generated at start (and printed) when unset.")
    require_token_for_reads: bool = Field(default=False, description="Also protect read-only views.")
    db_path: Path = Field(default=Path("var/tableref.sqlite"), description="SQLite file (WAL mode).")
    max_upload_bytes: int = Field(default=MAX_UPLOAD_BYTES, gt=0)
    max_image_pixels: int = Field(default=MAX_IMAGE_PIXELS, gt=0)
    # Live loop: motion gate (mean absolute difference of downscaled grey frames, 0-255 grey levels).
    motion_threshold: float = Field(default=1.0, gt=0, description="Largest tile mean of the abs grey difference "
                                    "below which a frame counts as still (grey levels).")
    motion_tile_px: int = Field(default=8, ge=1, description="Tile side on the downscaled frame (px).")
    still_frames: int = Field(default=5, ge=1, description="Consecutive still frames before analysing.")
    motion_width_px: int = Field(default=160, ge=16, description="Width of the downscaled grey frame.")
    feed_fps: float = Field(default=10.0, gt=0, le=60, description="Maximum rate of the annotated feed.")
    feed_width_px: int = Field(default=960, ge=64, description="Annotated feed frames are scaled to this width.")
    reconnect_initial_s: float = Field(default=0.5, gt=0)
    reconnect_max_s: float = Field(default=30.0, gt=0)
    resume_games: bool = Field(default=True, description="Re-attach saved sources of active games at start.")


@lru_cache
def get_settings() -> Settings:
    """The process's settings, read once from the environment."""
    return Settings()
