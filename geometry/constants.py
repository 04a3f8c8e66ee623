"""Tiddlywinks equipment dimensions in millimetres (ETwA rules 2-4, RULES.md section 1.1-1.2)."""

import math

FOOT_MM = 304.8
INCH_MM = 25.4

MAT_LENGTH_MM = 6 * FOOT_MM  # 1828.8, along x (TW 3)
MAT_WIDTH_MM = 3 * FOOT_MM  # 914.4, along y (TW 3)
MAT_HALF_LENGTH_MM = MAT_LENGTH_MM / 2  # L = 914.4
MAT_HALF_WIDTH_MM = MAT_WIDTH_MM / 2  # W = 457.2

# Each baseline is perpendicular to a mat diagonal and crosses it 3 ft from the centre (TW 3).
BASELINE_DISTANCE_MM = 3 * FOOT_MM  # 914.4
# Unit normal of the (+x, +y) baseline: the corner diagonal direction (2, 1)/sqrt(5).
DIAGONAL_UNIT = (2 / math.sqrt(5), 1 / math.sqrt(5))

POT_BASE_RADIUS_MM = 19.0  # base diameter 38 (TW 4)
POT_TOP_RADIUS_MM = 24.0  # outside diameter at top 48 (TW 4)
POT_HEIGHT_MM = 38.0  # (TW 4)

LARGE_WINK_RADIUS_MM = 11.0  # 22 mm diameter (TW 2)
SMALL_WINK_RADIUS_MM = 8.0  # 16 mm diameter (TW 2)
WINK_THICKNESS_MM = 1.5  # about 1.5 mm (TW 2)
WINKS_PER_COLOR = 6  # two large, four small (TW 2)
LARGE_WINKS_PER_COLOR = 2
SMALL_WINKS_PER_COLOR = 4

# Out-of-bounds replacement (TW 7(a), TW I-3).
REPLACEMENT_EDGE_GAP_MM = 22.0
REPLACEMENT_CLEARANCE_MM = 100.0
# Post-pot-out minimum gap (TW 8).
POT_OUT_MIN_GAP_MM = 2.0

# The referee's decision margin floor (RULES.md section 0).
MIN_EPS_MM = 0.5
