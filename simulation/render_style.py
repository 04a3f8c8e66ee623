"""Random looks of a table: mat felt colour, table top, lamp position/size/colour, room light.

Shared by the tiddlywinks renders, calibration frames and shot videos (one style per rig session or video).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry.constants import MAT_LENGTH_MM, MAT_WIDTH_MM
from simulation.raycaster import AreaLight, Environment, tiddlywinks_lines
from simulation.textures import cloth_texture, felt_texture, wood_texture

# Linear-RGB felt albedos (dyed wool felt is matte and fairly dark).
MAT_ALBEDOS = {
    "green": (0.035, 0.16, 0.06),
    "grey": (0.16, 0.16, 0.155),
    "beige": (0.42, 0.33, 0.21),
}
# Lamp colours: warm tungsten/LED 2700-3000 K, neutral 4000 K, cool daylight 6000 K.
LIGHT_COLORS = {
    "warm": (1.0, 0.78, 0.55),
    "neutral": (1.0, 0.93, 0.85),
    "cool": (0.88, 0.95, 1.05),
}
TABLE_SIZE_MM = (3600.0, 2600.0)


@dataclass
class TableStyle:
    mat_color: str
    light_color: str
    table_kind: str
    env: Environment

    def describe(self) -> dict:
        L = self.env.light
        return {"mat_color": self.mat_color, "light_color": self.light_color, "table": self.table_kind,
                "light_position_mm": [round(float(v), 1) for v in L.position_mm],
                "light_radius_mm": round(L.radius_mm, 1)}


def random_style(rng: np.random.Generator, *, mat_color: str | None = None, with_mat: bool = True,
                 felt_texel_mm: float = 0.5) -> TableStyle:
    """A table look: felt, baselines, table top and lighting, all drawn from ``rng``."""
    mat_color = mat_color or str(rng.choice(list(MAT_ALBEDOS)))
    base = np.asarray(MAT_ALBEDOS[mat_color]) * np.exp(rng.normal(0, 0.08, 3))
    light_color = str(rng.choice(list(LIGHT_COLORS), p=[0.45, 0.3, 0.25]))
    table_kind = "wood" if rng.random() < 0.7 else "cloth"
    felt = felt_texture(rng, size_mm=(MAT_LENGTH_MM + 4, MAT_WIDTH_MM + 4), texel_mm=felt_texel_mm)
    tex = (wood_texture if table_kind == "wood" else cloth_texture)(rng, size_mm=TABLE_SIZE_MM, texel_mm=2.0)
    height = float(rng.uniform(1700, 2700))
    pos = np.array([rng.normal(0, 450), rng.normal(0, 300), height])
    light = AreaLight(position_mm=pos, radius_mm=float(rng.uniform(60, 350)),
                      color=np.asarray(LIGHT_COLORS[light_color]) * np.exp(rng.normal(0, 0.03, 3)),
                      irradiance=1.0)
    amb_color = np.asarray(LIGHT_COLORS[str(rng.choice(list(LIGHT_COLORS)))])
    ambient = amb_color * float(rng.uniform(0.18, 0.45))
    line = np.array([0.75, 0.75, 0.70]) * float(rng.uniform(0.85, 1.05))
    env = Environment(light=light, ambient=ambient, mat_albedo=base, felt=felt, table=tex,
                      table_ks=0.04 if table_kind == "wood" else 0.0,
                      table_roughness_deg=float(rng.uniform(3, 12)),
                      mat_thickness_mm=float(rng.uniform(2.0, 4.0)),
                      mat_side_albedo=base * 0.55,
                      line_albedo=line, line_half_width_mm=float(rng.uniform(2.2, 3.0)),
                      lines=tiddlywinks_lines() if with_mat else ())
    if rng.random() < 0.8:
        el = math.radians(float(rng.uniform(25, 55)))
        az = float(rng.uniform(0, 2 * math.pi))
        env.fill_direction = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
        env.fill_irradiance = float(rng.uniform(0.15, 0.5))
        env.fill_color = np.asarray(LIGHT_COLORS[str(rng.choice(list(LIGHT_COLORS)))])
        env.fill_softness_deg = float(rng.uniform(2.0, 10.0))
    if not with_mat:
        env.mat_half_size_mm = (0.0, 0.0)
    return TableStyle(mat_color=mat_color, light_color=light_color, table_kind=table_kind, env=env)


def auto_exposure(linear_rgb: np.ndarray, rng: np.random.Generator, target: float = 0.15) -> float:
    """Exposure a camera's metering would pick: mean luminance (of the central area) towards ``target``."""
    h, w = linear_rgb.shape[:2]
    c = linear_rgb[h // 4: 3 * h // 4: 4, w // 4: 3 * w // 4: 4]
    lum = float(np.mean(c @ np.array([0.2126, 0.7152, 0.0722], np.float32)))
    return float(np.clip(target / max(lum, 1e-4), 0.05, 50.0) * math.exp(rng.normal(0, 0.12)))
